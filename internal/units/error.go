package units

import "fmt"

// Error reports text that is not a valid rate or size. Its message always
// quotes the input and, for unit mistakes, lists the valid units.
type Error struct {
	Input  string // the text as given
	Reason string // what is wrong with it
}

func (e *Error) Error() string { return fmt.Sprintf("cannot parse %q: %s", e.Input, e.Reason) }

func fail(input, format string, args ...any) error {
	return &Error{Input: input, Reason: fmt.Sprintf(format, args...)}
}
