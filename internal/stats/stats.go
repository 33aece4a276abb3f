// Package stats holds ftlab's one definition of a percentile, so a p99 in
// a run's report, a harness test, a benchmark and a paper check is the
// same number for the same values.
//
// The definition is the nearest rank: the p-quantile of n values is the
// ⌈p·n⌉-th smallest (the smallest value at or above which lies at least a
// fraction p of the values). It is always one of the measured values, never
// an interpolation between two, so an FCT p99 is the FCT of a real message
// and a median of repeated benchmarks is one of the measurements. It is
// gonum's stat.Quantile with stat.Empirical.
package stats

import (
	"slices"

	"gonum.org/v1/gonum/stat"
)

// Number is what Quantile takes: durations, counts, byte sizes, floats.
type Number interface {
	~int | ~int32 | ~int64 | ~uint | ~uint32 | ~uint64 | ~float64
}

// Quantile returns the p-quantile of xs by nearest rank (see the package
// documentation); p is clamped to [0, 1]. xs need not be sorted and is not
// modified. It returns 0 for no values.
//
// Values go through float64, exact for integers below 2^53 (a duration of
// 104 days in nanoseconds).
func Quantile[T Number](xs []T, p float64) T {
	if len(xs) == 0 {
		return 0
	}
	fs := make([]float64, len(xs))
	for i, x := range xs {
		fs[i] = float64(x)
	}
	slices.Sort(fs)
	return T(stat.Quantile(min(max(p, 0), 1), stat.Empirical, fs, nil))
}

// Median is the 0.5-quantile: for an even count, the lower of the two
// middle values.
func Median[T Number](xs []T) T { return Quantile(xs, 0.5) }
