package workload

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/ftlab/ftlab/internal/units"
)

// Size is a message size: fixed (Min == Max) or drawn uniformly from
// [Min, Max] for every message, from the seed.
type Size struct {
	Min, Max uint64
}

// Fixed is a size that is always n bytes.
func Fixed(n uint64) Size { return Size{n, n} }

// ParseSize parses "1MiB" (fixed) or "256KiB..1MiB" (a range, both ends
// included), with the units of units.ParseSize. Sizes must be positive.
func ParseSize(s string) (Size, error) {
	lo, hi, isRange := strings.Cut(s, "..")
	a, err := positiveSize(lo)
	if err != nil {
		return Size{}, err
	}
	if !isRange {
		return Fixed(a), nil
	}
	b, err := positiveSize(hi)
	if err != nil {
		return Size{}, err
	}
	if b < a {
		return Size{}, fmt.Errorf("range %q runs backwards; write the smaller size first", s)
	}
	return Size{a, b}, nil
}

func positiveSize(s string) (uint64, error) {
	v, err := units.ParseSize(s)
	if err != nil {
		return 0, err
	}
	if v == 0 {
		return 0, fmt.Errorf("%q: a message must carry at least 1 byte", strings.TrimSpace(s))
	}
	return v, nil
}

// IsRange reports whether sizes are drawn from a range.
func (s Size) IsRange() bool { return s.Max != s.Min }

// String formats the size as it is written in files.
func (s Size) String() string {
	if s.IsRange() {
		return units.FormatSize(s.Min) + ".." + units.FormatSize(s.Max)
	}
	return units.FormatSize(s.Min)
}

// draw picks a size: uniform over [Min, Max] in bytes.
func (s Size) draw(r *rand.Rand) uint64 {
	if !s.IsRange() {
		return s.Min
	}
	return s.Min + r.Uint64N(s.Max-s.Min+1)
}

// MarshalJSON writes {"min_bytes": .., "max_bytes": ..}.
func (s Size) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Min uint64 `json:"min_bytes"`
		Max uint64 `json:"max_bytes"`
	}{s.Min, s.Max})
}
