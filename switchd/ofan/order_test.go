package ofan

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestOrderIsPermutation: F.2 requirement 1 — from any start a pointer
// visits every uplink exactly once per w packets.
func TestOrderIsPermutation(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for w := 1; w <= MaxUplinks; w++ {
		for n, id := range testIDs(w, rng) {
			o := Order(w, id)
			if !isPerm(o) {
				t.Fatalf("Order(%d, %d) = %v is not a permutation", w, id, o)
			}
			if n > 2*w {
				continue // Port and walks from every start are id-independent code; sample them
			}
			for i, p := range o {
				if got := Port(w, id, i); got != p {
					t.Fatalf("Port(%d, %d, %d) = %d, Order has %d", w, id, i, got, p)
				}
			}
			for start := range w {
				if got := Walk(o, start, nil, w); !isPerm(got) {
					t.Fatalf("w=%d id=%d start=%d: %v is not one round", w, id, start, got)
				}
			}
		}
	}
}

// TestOrderFormula checks Order against the formula written out by hand
// for w = 6 (b = 3, P = 3 1 4 5 2 0).
func TestOrderFormula(t *testing.T) {
	tests := []struct {
		id   int
		want []int
	}{
		{0, []int{3, 1, 4, 5, 2, 0}},  // P itself
		{8, []int{4, 2, 5, 0, 3, 1}},  // id2 = 1: P + 1
		{1, []int{2, 0, 5, 4, 3, 1}},  // id1 = 1: swap 0-1, 2-3, 4-5
		{6, []int{5, 1, 2, 3, 4, 0}},  // id1 = 6: 2<->4, 3<->5; 0, 1 kept (0^6, 1^6 >= 6)
		{15, []int{5, 2, 4, 3, 0, 1}}, // id1 = 7: 2<->5, 3<->4; then + 1 (id2 = 1)
		{48, []int{3, 1, 4, 5, 2, 0}}, // id2 = 6 = 0 mod 6
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Order(6, tt.id)); diff != "" {
			t.Errorf("Order(6, %d) (-want +got):\n%s", tt.id, diff)
		}
	}
}

// TestDistinctCyclicOrders counts the distinct round-robin cycles all
// pointer ids produce (F.2 "diversity"). The paper reports 30 for w = 6
// with its P; exhausting all 720 P shows 14..36 are possible, and ours
// gets the maximum, 36. The bound 2^b*w is not reachable for powers of
// two: there, XOR with the top bit w/2 is the same map as adding w/2, so
// (mask, add) and (mask^w/2, add+w/2) coincide and at most w^2/2 remain.
func TestDistinctCyclicOrders(t *testing.T) {
	tests := []struct{ w, want int }{
		{1, 1}, {2, 1}, {3, 2}, {4, 4}, {5, 17}, {6, 36}, {7, 56}, {8, 32},
		{12, 168}, {16, 128}, {32, 512}, {64, 2048},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint("w=", tt.w), func(t *testing.T) {
			got := distinctCyclic(tt.w)
			t.Logf("w=%d: %d distinct cyclic orders (additions alone: %d, bound 2^b*w = %d)",
				tt.w, got, min(tt.w, distinctShifts(tt.w)), (1<<Bits(tt.w))*tt.w)
			if got != tt.want {
				t.Errorf("w=%d: %d distinct cyclic orders, want %d", tt.w, got, tt.want)
			}
		})
	}
}

// distinctShifts counts the cyclic orders of the ids with id1 = 0 (the
// additions alone).
func distinctShifts(w int) int {
	seen := map[string]bool{}
	for c := range w {
		seen[CyclicKey(Order(w, c<<Bits(w)))] = true
	}
	return len(seen)
}

// TestDistinctCountsW6 backs the claim in TestDistinctCyclicOrders that
// 36 is the best any P achieves for w = 6, and that 30 (the paper's) is
// the most common outcome among P with 6 distinct shifts.
func TestDistinctCountsW6(t *testing.T) {
	if testing.Short() {
		t.Skip("exhausts 720 permutations")
	}
	hist := map[int]int{}
	allPerms(6, func(p []int) {
		if !shiftsDistinct(p) {
			return
		}
		seen := map[string]bool{}
		o := make([]int, 6)
		for x := range 8 {
			for c := range 6 {
				for i, v := range p {
					o[i] = (xorW(v, x, 6) + c) % 6
				}
				seen[CyclicKey(o)] = true
			}
		}
		hist[len(seen)]++
	})
	want := map[int]int{14: 36, 19: 36, 20: 36, 24: 108, 30: 288, 33: 108, 36: 36}
	if diff := cmp.Diff(want, hist); diff != "" {
		t.Errorf("distinct orders over P with distinct shifts, count -> #P (-want +got):\n%s", diff)
	}
}
