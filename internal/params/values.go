package params

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ftlab/ftlab/internal/yamldoc"
)

// durationUnits is quoted in errors about durations.
const durationUnits = "ns, us, ms, s, m, h"

// ParseDuration parses a duration as Go writes them ("10ms", "1.5s",
// "100us", "1m30s"). A bare number other than 0 is rejected, like a rate
// without a unit: "10" could be seconds or milliseconds.
func ParseDuration(s string) (time.Duration, error) {
	in := strings.TrimSpace(s)
	if strings.HasPrefix(in, "-") {
		return 0, fmt.Errorf("%q is negative; times count from the start of the run", in)
	}
	if _, err := strconv.ParseFloat(in, 64); err == nil && in != "0" {
		return 0, fmt.Errorf("%q has no unit, e.g. %sms (valid: %s)", in, in, durationUnits)
	}
	d, err := time.ParseDuration(in)
	if err != nil {
		return 0, fmt.Errorf("cannot parse %q: expected a duration such as 10ms or 1.5s (units: %s)", in, durationUnits)
	}
	return d, nil
}

// FormatDuration writes d the way files do; 0 is "0s".
func FormatDuration(d time.Duration) string { return d.String() }

// ParseFraction parses a number such as 0.05, 5e-2 or a percentage "5%".
func ParseFraction(s string) (float64, error) {
	in := strings.TrimSpace(s)
	scale := 1.0
	if t, ok := strings.CutSuffix(in, "%"); ok {
		in, scale = strings.TrimSpace(t), 0.01
	}
	v, err := strconv.ParseFloat(in, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("cannot parse %q: expected a number such as 0.05, 1e-3 or 5%%", strings.TrimSpace(s))
	}
	return v * scale, nil
}

// ParseBool accepts the YAML 1.1 spellings people still write.
func ParseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "on", "yes":
		return true, nil
	case "false", "off", "no":
		return false, nil
	}
	return false, fmt.Errorf("expected true or false, found %q", s)
}

// ParseRTTs parses the factor of "<factor>rtt" and returns factor * rtt.
func ParseRTTs(factor string, rtt time.Duration) (time.Duration, error) {
	x, err := strconv.ParseFloat(factor, 64)
	if err != nil || x <= 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return 0, fmt.Errorf("expected a positive multiple of the base RTT such as 2rtt, found %q", factor+"rtt")
	}
	return time.Duration(math.Round(x * float64(rtt))), nil
}

// OneOf reports whether v is among valid; the error lists the valid ones
// and guesses a typo.
func OneOf[T ~string](what string, v T, valid []T) error {
	for _, x := range valid {
		if v == x {
			return nil
		}
	}
	names := make([]string, len(valid))
	for i, x := range valid {
		names[i] = string(x)
	}
	guess := ""
	if g := yamldoc.Closest(string(v), names); g != "" {
		guess = fmt.Sprintf("; did you mean %q?", g)
	}
	return fmt.Errorf("unknown %s %q%s (valid: %s)", what, v, guess, strings.Join(names, ", "))
}
