package units

import (
	"strings"
)

// SizeUnits is the list of size units quoted in error messages.
const SizeUnits = "B, KB, MB, GB, KiB, MiB, GiB"

// Size multipliers, in bytes.
const (
	B   uint64 = 1
	KB         = 1000 * B
	MB         = 1000 * KB
	GB         = 1000 * MB
	KiB        = 1024 * B
	MiB        = 1024 * KiB
	GiB        = 1024 * MiB
)

// sizeUnits maps lowercase unit spellings to bytes. The trailing "b" is
// checked separately: it must be a capital B.
var sizeUnits = map[string]uint64{
	"b": B, "kb": KB, "mb": MB, "gb": GB, "kib": KiB, "mib": MiB, "gib": GiB,
}

// ambiguous lists the prefixes people write without saying whether they
// mean powers of 1000 or of 1024, with what to write instead.
var ambiguous = map[string]string{
	"k":  "KiB (1024 bytes) or KB (1000 bytes)",
	"m":  "MiB (1048576 bytes) or MB (1000000 bytes)",
	"g":  "GiB (1073741824 bytes) or GB (1000000000 bytes)",
	"ki": "KiB", "mi": "MiB", "gi": "GiB",
}

// bytesSpelling says how to write a size unit typed with a lowercase b.
var bytesSpelling = map[string]string{
	"b": "B", "kb": ambiguous["k"], "mb": ambiguous["m"], "gb": ambiguous["g"],
	"kib": "KiB", "mib": "MiB", "gib": "GiB",
}

// ParseSize parses a size such as "64KiB", "1500" or "1.5MB" into bytes.
func ParseSize(s string) (uint64, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return 0, fail(s, "empty size; expected a number of bytes with an optional unit, e.g. 64KiB")
	}
	if in[0] == '-' {
		return 0, fail(s, "sizes cannot be negative")
	}
	intPart, fracPart, unit, ok := splitNumber(in)
	if !ok {
		return 0, fail(s, "expected a number of bytes with an optional unit, e.g. 64KiB or 1500")
	}
	lower := strings.ToLower(unit)
	mult := B
	switch {
	case unit == "":
	case ambiguous[lower] != "":
		return 0, fail(s, "ambiguous unit %q: write %s", unit, ambiguous[lower])
	case sizeUnits[lower] != 0 && unit[len(unit)-1] == 'b':
		return 0, fail(s, "unit %q ends in a lowercase b, which usually means bits; sizes are in bytes: write %s", unit, bytesSpelling[lower])
	case sizeUnits[lower] != 0:
		mult = sizeUnits[lower]
	case rateUnits[lower] != 0:
		return 0, fail(s, "%q is a rate unit; sizes are in bytes (valid: %s)", unit, SizeUnits)
	default:
		return 0, fail(s, "unknown unit %q (valid: %s)", unit, SizeUnits)
	}
	v, whole, fits := scale(intPart, fracPart, mult)
	if !fits {
		return 0, fail(s, "too large; the maximum is %d bytes", ^uint64(0))
	}
	if !whole {
		return 0, fail(s, "not a whole number of bytes")
	}
	return v, nil
}

// FormatSize formats bytes exactly, preferring binary units because
// buffers are usually sized in them: 65536 is "64KiB", 1000 is "1KB" and
// 1500 stays "1500B". ParseSize(FormatSize(v)) == v for every v.
func FormatSize(bytes uint64) string {
	for _, u := range []struct {
		mult uint64
		name string
	}{{GiB, "GiB"}, {MiB, "MiB"}, {KiB, "KiB"}, {GB, "GB"}, {MB, "MB"}, {KB, "KB"}} {
		if bytes >= u.mult && bytes%u.mult == 0 {
			return uitoa(bytes/u.mult) + u.name
		}
	}
	return uitoa(bytes) + "B"
}
