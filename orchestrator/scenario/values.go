package scenario

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ftlab/ftlab/internal/yamldoc"
)

// durationUnits is quoted in errors about durations.
const durationUnits = "ns, us, ms, s, m, h"

// parseDuration parses a duration as Go writes them ("10ms", "1.5s",
// "100us", "1m30s"). A bare number other than 0 is rejected, like a rate
// without a unit: "10" could be seconds or milliseconds.
func parseDuration(s string) (time.Duration, error) {
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

// formatDuration writes d the way files do; 0 is "0s".
func formatDuration(d time.Duration) string { return d.String() }

// parseFraction parses a number such as 0.05, 5e-2 or a percentage "5%".
func parseFraction(s string) (float64, error) {
	in := strings.TrimSpace(s)
	scale := 1.0
	if t, ok := strings.CutSuffix(in, "%"); ok {
		in, scale = strings.TrimSpace(t), 0.01
	}
	v, err := strconv.ParseFloat(in, 64)
	if err != nil || v != v { // NaN
		return 0, fmt.Errorf("cannot parse %q: expected a number such as 0.05, 1e-3 or 5%%", strings.TrimSpace(s))
	}
	return v * scale, nil
}

// parseBool accepts the YAML 1.1 spellings people still write.
func parseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "on", "yes":
		return true, nil
	case "false", "off", "no":
		return false, nil
	}
	return false, fmt.Errorf("expected true or false, found %q", s)
}

// parseSeed parses a seed: any unsigned 64-bit number.
func parseSeed(s string) (uint64, error) {
	v, err := strconv.ParseUint(strings.TrimSpace(s), 0, 64)
	if err != nil {
		return 0, fmt.Errorf("expected a whole number from 0 to %d, found %q", uint64(1<<64-1), s)
	}
	return v, nil
}

// oneOf reports whether v is among valid; the error lists the valid ones.
func oneOf[T ~string](what string, v T, valid []T) error {
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
