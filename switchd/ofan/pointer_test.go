package ofan

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fabricPointers lists the pointer sets of the ftlab fabrics: nDest
// destinations over w uplinks (routing numbers destinations globally: every
// edge switch at an edge, every pod at an aggregation switch, every leaf at
// a leaf).
var fabricPointers = []struct {
	name     string
	nDest, w int
}{
	{"fattree k=4 edge", 8, 2}, {"fattree k=4 agg", 4, 2},
	{"fattree k=6 edge", 18, 3}, {"fattree k=6 agg", 6, 3},
	{"fattree k=8 edge", 32, 4}, {"fattree k=8 agg", 8, 4},
	{"fattree k=12 edge", 72, 6}, {"fattree k=12 agg", 12, 6},
	{"fattree k=16 edge", 128, 8}, {"fattree k=16 agg", 16, 8},
	{"leafspine 4x2", 4, 2}, {"leafspine 64x64", 64, 64}, {"leafspine 32x8", 32, 8},
}

// TestPaperLayoutCollides documents why ID does not use the paper's
// id = d + N_d*t as is: with it, the data and ACK pointers of a destination
// follow the very same order whenever 2^b*w divides N_d (the class term
// then changes neither id1 nor id2 mod w), and for some other N_d where a
// different (id1, id2) pair happens to give the same map, as for w = 3.
func TestPaperLayoutCollides(t *testing.T) {
	var got []string
	for _, f := range fabricPointers {
		same := 0
		for d := range f.nDest {
			if slices.Equal(Order(f.w, d), Order(f.w, d+f.nDest)) {
				same++
			}
		}
		if same > 0 {
			got = append(got, fmt.Sprintf("%s: %d/%d", f.name, same, f.nDest))
		}
	}
	want := []string{
		"fattree k=4 edge: 8/8", "fattree k=4 agg: 4/4", // 2^b*w = 4 divides N_d
		"fattree k=6 edge: 9/18", "fattree k=6 agg: 3/6", // w = 3: xor and add collide
		"fattree k=8 edge: 32/32", "fattree k=16 edge: 128/128", "leafspine 4x2: 4/4",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("destinations whose data and ACK orders coincide under id = d + N_d*t (-want +got):\n%s", diff)
	}
}

// TestDataAckDiffer: with ID, the data and ACK pointers of a destination
// have different ids, different orders (w >= 2), different cyclic orders
// wherever the basis allows it (w not 2, 3, 5) and different starts.
func TestDataAckDiffer(t *testing.T) {
	for w := 1; w <= MaxUplinks; w++ {
		for _, nDest := range []int{1, 2, 3, 4, 7, 8, 16, 31, 32, 64, 72, 100, 128, 2 * w * w} {
			s := Stride(nDest, w)
			if s < nDest {
				t.Fatalf("Stride(%d, %d) = %d overlaps the data ids", nDest, w, s)
			}
			data, ack := Starts(uint64(w*1000+nDest), nDest, w)
			for d := range nDest {
				di, ai := ID(d, Data, nDest, w), ID(d, Ack, nDest, w)
				if di != d || ai == di || ai < nDest {
					t.Fatalf("w=%d nDest=%d d=%d: ids data %d ack %d", w, nDest, d, di, ai)
				}
				if w < 2 {
					continue
				}
				do, ao := Order(w, di), Order(w, ai)
				if slices.Equal(do, ao) {
					t.Fatalf("w=%d nDest=%d d=%d: data and ACK share order %v", w, nDest, d, do)
				}
				if w != 2 && w != 3 && w != 5 && CyclicKey(do) == CyclicKey(ao) {
					t.Fatalf("w=%d nDest=%d d=%d: data %v and ACK %v are the same cycle", w, nDest, d, do, ao)
				}
				if data[d] == ack[d] {
					t.Fatalf("w=%d nDest=%d d=%d: data and ACK both start at %d", w, nDest, d, data[d])
				}
			}
		}
	}
}

func TestStride(t *testing.T) {
	tests := []struct{ nDest, w, want int }{
		{8, 2, 10},    // k=4 edges: 8/2 = 4 = 0 mod 2, bumped to 5
		{4, 2, 6},     // k=4 aggs
		{32, 4, 36},   // k=8 edges: 32/4 = 8 = 0 mod 4, bumped
		{8, 4, 8},     // k=8 aggs: the paper's N_d works
		{72, 6, 72},   // k=12 edges: the paper's N_d works
		{12, 6, 16},   // k=12 aggs: rounded up to a multiple of 8
		{128, 8, 136}, // k=16 edges
		{7, 1, 7},     // one uplink: nothing to separate
	}
	for _, tt := range tests {
		if got := Stride(tt.nDest, tt.w); got != tt.want {
			t.Errorf("Stride(%d, %d) = %d, want %d", tt.nDest, tt.w, got, tt.want)
		}
	}
}

func TestStartsDeterministic(t *testing.T) {
	type starts struct{ Data, Ack []int }
	get := func(seed uint64, nDest, w int) starts {
		d, a := Starts(seed, nDest, w)
		return starts{d, a}
	}
	// Pinned: a restarted switch must resume the same phases on any build.
	want := starts{Data: []int{2, 2, 2, 1, 1, 0, 2, 3}, Ack: []int{0, 0, 0, 3, 3, 2, 0, 1}}
	if diff := cmp.Diff(want, get(42, 8, 4)); diff != "" {
		t.Errorf("Starts(42, 8, 4) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(get(7, 100, 6), get(7, 100, 6)); diff != "" {
		t.Errorf("Starts not deterministic:\n%s", diff)
	}
	if cmp.Equal(get(7, 100, 6), get(8, 100, 6)) {
		t.Error("seeds 7 and 8 give the same starts")
	}
	// pOfan: pipes of one switch get independent starts.
	if cmp.Equal(get(PipeSeed(7, 0), 100, 6), get(PipeSeed(7, 1), 100, 6)) {
		t.Error("pipes 0 and 1 share their starts")
	}
	if PipeSeed(7, 0) == 7 || PipeSeed(7, 0) == PipeSeed(8, 0) {
		t.Error("PipeSeed does not separate switches and pipes")
	}
}

// TestStartsUniform: starts cover [0, w) about evenly (a loose check that
// would catch a stuck or biased draw).
func TestStartsUniform(t *testing.T) {
	for _, w := range []int{2, 3, 6, 8, 64} {
		const n = 64000
		data, ack := Starts(uint64(w), n, w)
		counts := make([]int, w)
		for i, v := range data {
			if v < 0 || v >= w || ack[i] != (v+w/2)%w {
				t.Fatalf("w=%d: data %d ack %d", w, v, ack[i])
			}
			counts[v]++
		}
		for v, c := range counts {
			if exp := n / w; c < exp*9/10 || c > exp*11/10 {
				t.Errorf("w=%d: value %d drawn %d times, expected about %d", w, v, c, exp)
			}
		}
	}
}

func TestInitialValue(t *testing.T) {
	a := rand.New(rand.NewPCG(1, 1))
	b := rand.New(rand.NewPCG(1, 1))
	for range 100 {
		x, y := InitialValue(a, 5), InitialValue(b, 5)
		if x != y || x < 0 || x >= 5 {
			t.Fatalf("InitialValue: %d, %d", x, y)
		}
	}
}
