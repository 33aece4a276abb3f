package ofan

import (
	"math/rand/v2"
	"slices"
)

// isPerm reports whether s holds each of 0..len(s)-1 exactly once.
func isPerm(s []int) bool {
	seen := make([]bool, len(s))
	for _, v := range s {
		if v < 0 || v >= len(s) || seen[v] {
			return false
		}
		seen[v] = true
	}
	return true
}

// allPerms calls f with every permutation of 0..w-1.
func allPerms(w int, f func([]int)) {
	a := make([]int, w)
	for i := range a {
		a[i] = i
	}
	var rec func(k int)
	rec = func(k int) {
		if k == w {
			f(slices.Clone(a))
			return
		}
		for i := k; i < w; i++ {
			a[k], a[i] = a[i], a[k]
			rec(k + 1)
			a[k], a[i] = a[i], a[k]
		}
	}
	rec(0)
}

// testIDs returns the ids worth checking for w: every (mask, add)
// combination, ids past that range (which must wrap the same way) and a few
// large random ones.
func testIDs(w int, rng *rand.Rand) []int {
	n := (1 << Bits(w)) * w
	ids := make([]int, 0, 2*n+20)
	for id := range 2 * n {
		ids = append(ids, id)
	}
	for range 20 {
		ids = append(ids, rng.IntN(1<<30))
	}
	return ids
}

// distinctCyclic counts the distinct cyclic orders over all pointer ids of
// w uplinks (ids 0..2^b*w-1 cover every (mask, add mod w) pair).
func distinctCyclic(w int) int {
	seen := map[string]bool{}
	for id := range (1 << Bits(w)) * w {
		seen[CyclicKey(Order(w, id))] = true
	}
	return len(seen)
}
