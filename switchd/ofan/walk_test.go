package ofan

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// checkRounds walks 3 rounds from start and checks that every window of m
// consecutive packets (m = number of valid ports) holds each valid port
// exactly once: the invariant behind "each remaining valid port still
// receives exactly one packet per round".
func checkRounds(t *testing.T, order []int, start int, valid []bool) {
	t.Helper()
	m := 0
	for _, v := range valid {
		if v {
			m++
		}
	}
	got := Walk(order, start, valid, 3*max(m, 1))
	if m == 0 {
		for _, p := range got {
			if p != -1 {
				t.Fatalf("order %v start %d: no valid port, got %v", order, start, got)
			}
		}
		return
	}
	for lo := 0; lo+m <= len(got); lo++ {
		seen := make(map[int]bool, m)
		for _, p := range got[lo : lo+m] {
			if p < 0 || !valid[p] || seen[p] {
				t.Fatalf("order %v start %d valid %v: window %d of %v is not one round",
					order, start, valid, lo, got)
			}
			seen[p] = true
		}
	}
}

func TestWalkSkipsInvalidExhaustive(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for w := 1; w <= 10; w++ {
		ids := []int{0, 1, w, 2*w + 3, rng.IntN(1 << 20)}
		for _, id := range ids {
			o := Order(w, id)
			for set := range uint64(1) << w {
				valid := Mask(set, w)
				for start := range w {
					checkRounds(t, o, start, valid)
				}
			}
		}
	}
}

func TestWalkSkipsInvalidRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for w := 11; w <= MaxUplinks; w++ {
		for range 200 {
			o := Order(w, rng.IntN(1<<20))
			valid := Mask(rng.Uint64()&rng.Uint64(), w) // ~1/4 valid, often a few
			checkRounds(t, o, rng.IntN(w), valid)
		}
	}
}

func TestWalk(t *testing.T) {
	o := []int{3, 1, 4, 5, 2, 0}
	all, none := []bool(nil), make([]bool, 6)
	only := func(ports ...int) []bool {
		v := make([]bool, 6)
		for _, p := range ports {
			v[p] = true
		}
		return v
	}
	tests := []struct {
		start int
		valid []bool
		n     int
		want  []int
	}{
		{0, all, 8, []int{3, 1, 4, 5, 2, 0, 3, 1}},
		{4, all, 4, []int{2, 0, 3, 1}},
		{0, only(0, 4), 5, []int{4, 0, 4, 0, 4}},
		{3, only(1, 3, 2), 4, []int{2, 3, 1, 2}},
		{2, none, 2, []int{-1, -1}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Walk(o, tt.start, tt.valid, tt.n)); diff != "" {
			t.Errorf("Walk(%v, %d, %v, %d) (-want +got):\n%s", o, tt.start, tt.valid, tt.n, diff)
		}
	}
}

func TestStep(t *testing.T) {
	o := []int{3, 1, 4, 5, 2, 0}
	tests := []struct {
		v         int
		valid     []bool
		port, nxt int
	}{
		{0, nil, 3, 1},
		{5, nil, 0, 0},
		{4, Mask(1<<3, 6), 3, 1}, // skips 2, 0 and wraps
		{2, Mask(0, 6), -1, 2},
	}
	for _, tt := range tests {
		port, nxt := Step(o, tt.v, tt.valid)
		if diff := cmp.Diff([2]int{tt.port, tt.nxt}, [2]int{port, nxt}); diff != "" {
			t.Errorf("Step(%v, %d, %v) (-want +got):\n%s", o, tt.v, tt.valid, diff)
		}
	}
}

func TestMask(t *testing.T) {
	tests := []struct {
		bits uint64
		w    int
		want []bool
	}{
		{0b101, 3, []bool{true, false, true}},
		{0, 2, []bool{false, false}},
		{^uint64(0), 64, func() []bool {
			v := make([]bool, 64)
			for i := range v {
				v[i] = true
			}
			return v
		}()},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Mask(tt.bits, tt.w)); diff != "" {
			t.Errorf("Mask(%b, %d) (-want +got):\n%s", tt.bits, tt.w, diff)
		}
	}
}
