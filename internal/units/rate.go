package units

import (
	"strings"
)

// RateUnits is the list of rate units quoted in error messages, in the
// spelling the documentation uses.
const RateUnits = "bit, Kbit, Mbit, Gbit, Tbit, bps, Kbps, Mbps, Gbps"

// Rate multipliers, in bits per second.
const (
	Bit  uint64 = 1
	Kbit        = 1000 * Bit
	Mbit        = 1000 * Kbit
	Gbit        = 1000 * Mbit
	Tbit        = 1000 * Gbit
)

// rateUnits maps lowercase unit spellings to bits per second.
var rateUnits = map[string]uint64{
	"bit": Bit, "kbit": Kbit, "mbit": Mbit, "gbit": Gbit, "tbit": Tbit,
	"bit/s": Bit, "kbit/s": Kbit, "mbit/s": Mbit, "gbit/s": Gbit, "tbit/s": Tbit,
	"bps": Bit, "kbps": Kbit, "mbps": Mbit, "gbps": Gbit,
}

// ParseRate parses a rate such as "100Mbit", "2.5Gbit/s" or "10Mbps" into
// bits per second. A bare number is rejected: whether it meant bits or
// bytes is exactly the mistake the unit is there to prevent.
func ParseRate(s string) (uint64, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return 0, fail(s, "empty rate; expected a number and a unit, e.g. 100Mbit")
	}
	if in[0] == '-' {
		return 0, fail(s, "rates cannot be negative")
	}
	intPart, fracPart, unit, ok := splitNumber(in)
	if !ok {
		return 0, fail(s, "expected a number and a unit, e.g. 100Mbit or 2.5Gbit")
	}
	if unit == "" {
		return 0, fail(s, "missing unit, e.g. %sMbit (valid: %s)", in, RateUnits)
	}
	if strings.HasSuffix(unit, "Bps") || strings.HasSuffix(unit, "B/s") {
		return 0, fail(s, "unit %q has a capital B, which means bytes; rates are in bits per second (valid: %s)", unit, RateUnits)
	}
	mult, known := rateUnits[strings.ToLower(unit)]
	if !known {
		return 0, fail(s, "unknown unit %q (valid: %s)", unit, RateUnits)
	}
	v, whole, fits := scale(intPart, fracPart, mult)
	if !fits {
		return 0, fail(s, "too large; the maximum is %s", FormatRate(^uint64(0)))
	}
	if !whole {
		return 0, fail(s, "not a whole number of bits per second")
	}
	return v, nil
}

// FormatRate formats bits per second with the largest unit that keeps the
// number at least 1, exactly: ParseRate(FormatRate(v)) == v for every v.
func FormatRate(bps uint64) string {
	for _, u := range []struct {
		mult uint64
		name string
	}{{Tbit, "Tbit"}, {Gbit, "Gbit"}, {Mbit, "Mbit"}, {Kbit, "Kbit"}} {
		if bps >= u.mult {
			return formatScaled(bps, u.mult, u.name)
		}
	}
	return uitoa(bps) + "bit"
}
