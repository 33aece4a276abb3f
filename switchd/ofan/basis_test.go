package ofan

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBasisProperties(t *testing.T) {
	for w := 1; w <= MaxUplinks; w++ {
		t.Run(fmt.Sprint("w=", w), func(t *testing.T) {
			p := Basis(w)
			if !isPerm(p) {
				t.Fatalf("Basis(%d) = %v is not a permutation", w, p)
			}
			// Deterministic: a fresh search finds the same P as the cache.
			if diff := cmp.Diff(p, searchBasis(w)); diff != "" {
				t.Errorf("search not deterministic (-cached +fresh):\n%s", diff)
			}
			type props struct{ Shifts, Strong bool }
			want := props{Shifts: true, Strong: true}
			switch w {
			case 2, 3:
				want = props{}
			case 5:
				want = props{Shifts: true}
			}
			got := props{Shifts: shiftsDistinct(p), Strong: strongBasis(p)}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Basis(%d) = %v (-want +got):\n%s", w, p, diff)
			}
		})
	}
}

// TestBasisImpossible backs the exceptions documented on Basis by
// exhausting every permutation.
func TestBasisImpossible(t *testing.T) {
	tests := []struct {
		w                  int
		anyShifts, anyStrg bool
	}{
		{w: 2, anyShifts: false, anyStrg: false},
		{w: 3, anyShifts: false, anyStrg: false},
		{w: 4, anyShifts: true, anyStrg: true},
		{w: 5, anyShifts: true, anyStrg: false},
		{w: 6, anyShifts: true, anyStrg: true},
	}
	for _, tt := range tests {
		var shifts, strong bool
		allPerms(tt.w, func(p []int) {
			shifts = shifts || shiftsDistinct(p)
			strong = strong || strongBasis(p)
		})
		if shifts != tt.anyShifts || strong != tt.anyStrg {
			t.Errorf("w=%d: some P with distinct shifts: %v, with strong property: %v; want %v, %v",
				tt.w, shifts, strong, tt.anyShifts, tt.anyStrg)
		}
	}
}

// TestBasisGolden pins the constants: P is meant to be the same on every
// switch and every build, so a change must be deliberate.
func TestBasisGolden(t *testing.T) {
	tests := []struct {
		w    int
		want []int
	}{
		{1, []int{0}},
		{2, []int{1, 0}},
		{4, []int{3, 1, 2, 0}},
		{6, []int{3, 1, 4, 5, 2, 0}},
		{8, []int{7, 5, 6, 2, 1, 3, 4, 0}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Basis(tt.w)); diff != "" {
			t.Errorf("Basis(%d) (-want +got):\n%s", tt.w, diff)
		}
	}
}

func TestCyclicKey(t *testing.T) {
	tests := []struct {
		a, b []int
		same bool
	}{
		{[]int{0, 1, 2, 3}, []int{2, 3, 0, 1}, true},
		{[]int{0, 1, 2, 3}, []int{0, 1, 3, 2}, false},
		{[]int{0, 1, 2, 3}, []int{3, 2, 1, 0}, false}, // reversed is another rotation
		{[]int{1, 0}, []int{0, 1}, true},
	}
	for _, tt := range tests {
		if got := CyclicKey(tt.a) == CyclicKey(tt.b); got != tt.same {
			t.Errorf("CyclicKey(%v) == CyclicKey(%v): %v, want %v", tt.a, tt.b, got, tt.same)
		}
	}
}
