package scenario

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ftlab/ftlab/internal/params"
)

// Values are written in scenario files as parameter blocks write them
// (package internal/params), so a duration or a fraction reads the same
// everywhere.
var (
	parseDuration = params.ParseDuration
	parseFraction = params.ParseFraction
	parseBool     = params.ParseBool
)

// oneOf reports whether v is among valid; the error lists the valid ones.
func oneOf[T ~string](what string, v T, valid []T) error { return params.OneOf(what, v, valid) }

// parseSeed parses a seed: any unsigned 64-bit number.
func parseSeed(s string) (uint64, error) {
	v, err := strconv.ParseUint(strings.TrimSpace(s), 0, 64)
	if err != nil {
		return 0, fmt.Errorf("expected a whole number from 0 to %d, found %q", uint64(1<<64-1), s)
	}
	return v, nil
}
