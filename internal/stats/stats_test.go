package stats

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gonum.org/v1/gonum/stat"
)

func TestQuantile(t *testing.T) {
	for _, tt := range []struct {
		name string
		xs   []float64
		p    float64
		want float64
	}{
		{"empty", nil, 0.5, 0},
		{"one", []float64{7}, 0.99, 7},
		{"median odd", []float64{4, 1, 3}, 0.5, 3},
		{"median even is the lower middle", []float64{3, 1, 2, 10}, 0.5, 2},
		{"p0 is the minimum", []float64{5, 2, 9}, 0, 2},
		{"p1 is the maximum", []float64{5, 2, 9}, 1, 9},
		{"p99 of 100 is the 99th", seq(100), 0.99, 99},
		{"p99 of 50 is the 50th", seq(50), 0.99, 50},
		{"p99 of 240 is the 238th", seq(240), 0.99, 238},
		{"p90 of 200 is the 180th", seq(200), 0.9, 180},
		{"p out of range is clamped", []float64{1, 2}, 1.5, 2},
		{"unsorted", []float64{9, 1, 8, 2, 7, 3}, 0.5, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]float64(nil), tt.xs...)
			if got := Quantile(tt.xs, tt.p); got != tt.want {
				t.Errorf("Quantile(%v, %v) = %v, want %v", tt.xs, tt.p, got, tt.want)
			}
			if diff := cmp.Diff(in, tt.xs); diff != "" {
				t.Errorf("input modified (-before +after):\n%s", diff)
			}
		})
	}
}

// TestQuantileIsGonumsEmpirical: the quantile is gonum's stat.Quantile
// with stat.Empirical (the definition ftlab's reports used before it was
// written out here) for every n and p tried, on values with repeats, in
// any order.
func TestQuantileIsGonumsEmpirical(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ps := []float64{0, 0.01, 0.1, 0.25, 0.29, 0.5, 0.57, 0.75, 0.9, 0.95, 0.99, 0.999, 1}
	for range 20 {
		ps = append(ps, rng.Float64())
	}
	for n := 1; n <= 300; n++ {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(rng.IntN(n))
		}
		sorted := slices.Clone(xs)
		slices.Sort(sorted)
		for _, p := range ps {
			if got, want := Quantile(xs, p), stat.Quantile(p, stat.Empirical, sorted, nil); got != want {
				t.Fatalf("n=%d p=%v: %v, gonum's %v", n, p, got, want)
			}
		}
	}
}

func TestQuantileTypes(t *testing.T) {
	ds := []time.Duration{3 * time.Millisecond, time.Millisecond, 2 * time.Millisecond}
	if got := Median(ds); got != 2*time.Millisecond {
		t.Errorf("median of durations %v", got)
	}
	if got := Quantile([]int64{1 << 52, 1<<52 + 1}, 1); got != 1<<52+1 {
		t.Errorf("large int64 %d", got)
	}
	if got := Quantile([]uint64{10, 20, 30, 40}, 0.75); got != 30 {
		t.Errorf("uint64 p75 %d", got)
	}
}

func seq(n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	return xs
}
