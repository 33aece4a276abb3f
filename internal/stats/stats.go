// Package stats holds ftlab's one definition of a percentile, so a p99 in
// a run's report, a harness test, a benchmark and a paper check is the
// same number for the same values.
//
// The definition is the nearest rank: the p-quantile of n values is the
// ⌈p·n⌉-th smallest (the smallest value at or above which lies at least a
// fraction p of the values). It is always one of the measured values, never
// an interpolation between two, so an FCT p99 is the FCT of a real message
// and a median of repeated benchmarks is one of the measurements. It is
// gonum's stat.Quantile with stat.Empirical, written out here: a sort and
// an index do not need gonum's linear algebra in the binary (about 7 s of
// CPU in a first build).
package stats

import (
	"math"
	"slices"
)

// Number is what Quantile takes: durations, counts, byte sizes, floats.
type Number interface {
	~int | ~int32 | ~int64 | ~uint | ~uint32 | ~uint64 | ~float64
}

// Quantile returns the p-quantile of xs by nearest rank (see the package
// documentation); p is clamped to [0, 1]. xs need not be sorted and is not
// modified. It returns 0 for no values.
//
// The values are compared as they are, so integers stay exact at any
// size; only the rank goes through float64.
func Quantile[T Number](xs []T, p float64) T {
	if len(xs) == 0 {
		return 0
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	// The ⌈p·n⌉-th smallest, counted from 1; p·n in float64 as gonum
	// computes it, so the two agree for every n and p.
	rank := int(math.Ceil(min(max(p, 0), 1) * float64(len(sorted))))
	return sorted[max(rank, 1)-1]
}

// Median is the 0.5-quantile: for an even count, the lower of the two
// middle values.
func Median[T Number](xs []T) T { return Quantile(xs, 0.5) }
