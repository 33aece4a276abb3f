package ofan

import (
	"fmt"
	"math/bits"
	"sync"
)

// MaxUplinks is the largest w supported: valid sets are 64-bit masks.
const MaxUplinks = 64

// basisSeed is the fixed seed every basis is drawn from. Changing it
// changes every port order in the fabric.
const basisSeed = 0x0fa9_2610_0723_0000

// basisTries bounds the search for a basis meeting the strong property
// before falling back to the weaker one (only w = 5 ever falls back; see
// Basis).
const basisTries = 4096

var (
	basisMu    sync.Mutex
	basisCache [MaxUplinks + 1][]int
)

// Bits returns b = ceil(log2 w), the width of a pointer value and of the
// XOR mask id1 (0 for w = 1).
func Bits(w int) int {
	if w <= 1 {
		return 0
	}
	return bits.Len(uint(w - 1))
}

// Basis returns the global basis permutation P of 0..w-1 (1 <= w <= 64). It
// is deterministic: candidate j is a Fisher-Yates shuffle drawn from
// basisSeed+j, and the first candidate that passes is kept and cached.
//
// F.2 asks that P's w cyclic shifts (P[i]+c mod w, c in 0..w-1) define w
// distinct orders, where orders equal up to rotation count as one (a
// rotation is the same round robin started elsewhere). We ask for more when it
// is achievable: the shifts of every XOR image xor_w(P, x), x < 2^b, must be
// w distinct cyclic orders. That is what makes the ACK order of a
// destination (its data order shifted, see ID) a different cyclic order.
// Achievability, checked exhaustively by the tests for small w:
//
//   - w = 1: one order exists; P = [0].
//   - w = 2, 3: there are only (w-1)! = 1 or 2 cyclic orders, fewer than w,
//     so no P has w distinct shifts; the first candidate is kept.
//   - w = 5: P with 5 distinct shifts exist, but none whose XOR images all
//     have them; the weak (paper's) property is used.
//   - every other w: the strong property holds.
//
// The caller must not modify the returned slice.
func Basis(w int) []int {
	if w < 1 || w > MaxUplinks {
		panic(fmt.Sprintf("ofan: %d uplinks, want 1..%d", w, MaxUplinks))
	}
	basisMu.Lock()
	defer basisMu.Unlock()
	if p := basisCache[w]; p != nil {
		return p
	}
	p := searchBasis(w)
	basisCache[w] = p
	return p
}

func searchBasis(w int) []int {
	if w <= 3 {
		return candidate(w, 0)
	}
	for j := range basisTries {
		if p := candidate(w, j); strongBasis(p) {
			return p
		}
	}
	for j := range basisTries {
		if p := candidate(w, j); shiftsDistinct(p) {
			return p
		}
	}
	panic(fmt.Sprintf("ofan: no basis for w=%d", w)) // unreachable for 1..64, see tests
}

// candidate is the j-th basis candidate for w.
func candidate(w, j int) []int {
	r := splitmix64{basisSeed + uint64(j)}
	p := make([]int, w)
	for i := range p {
		p[i] = i
	}
	for i := w - 1; i > 0; i-- {
		k := below(&r, i+1)
		p[i], p[k] = p[k], p[i]
	}
	return p
}

// shiftsDistinct reports whether q+c mod w, c in 0..w-1, are w distinct
// cyclic orders.
func shiftsDistinct(q []int) bool {
	w := len(q)
	seen := make(map[string]bool, w)
	s := make([]int, w)
	for c := range w {
		for i, v := range q {
			s[i] = (v + c) % w
		}
		seen[CyclicKey(s)] = true
	}
	return len(seen) == w
}

// strongBasis reports whether every XOR image of p has w distinct shifts.
func strongBasis(p []int) bool {
	w := len(p)
	q := make([]int, w)
	for x := range 1 << Bits(w) {
		for i, v := range p {
			q[i] = xorW(v, x, w)
		}
		if !shiftsDistinct(q) {
			return false
		}
	}
	return true
}

// CyclicKey returns an opaque key naming the cyclic order of a port order
// (ports below 256): two orders get the same key exactly when one is a
// rotation of the other, i.e. the same round robin started elsewhere.
func CyclicKey(order []int) string {
	start := 0
	for i, v := range order {
		if v < order[start] {
			start = i
		}
	}
	b := make([]byte, len(order))
	for i := range order {
		b[i] = byte(order[(start+i)%len(order)])
	}
	return string(b)
}
