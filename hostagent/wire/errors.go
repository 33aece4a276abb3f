package wire

import (
	"errors"
	"fmt"
)

// Sentinel errors, one per kind of malformation. Every error Parse returns
// wraps exactly one of them (test with errors.Is); Marshal returns
// ErrInvalid for packets it refuses to encode.
var (
	ErrTruncated = errors.New("truncated")           // shorter than its header says
	ErrMagic     = errors.New("bad magic")           // not an ftlab packet
	ErrVersion   = errors.New("unsupported version") // another header version
	ErrType      = errors.New("unknown type")        // type byte out of range
	ErrFlags     = errors.New("flags not allowed")   // unknown or misplaced flag bits
	ErrReserved  = errors.New("reserved field set")  // reserved bytes not zero
	ErrLength    = errors.New("length mismatch")     // declared and actual lengths differ
	ErrField     = errors.New("field out of range")  // e.g. sfbits > 15, NACK count 0
	ErrInvalid   = errors.New("invalid packet")      // Marshal: cannot encode
)

// Kinds lists the sentinels in a fixed order, so counters can be indexed.
var Kinds = []error{ErrTruncated, ErrMagic, ErrVersion, ErrType, ErrFlags, ErrReserved, ErrLength, ErrField}

// ParseError describes a malformed packet: which field, what was there.
type ParseError struct {
	Err   error  // one of the sentinels
	Field string // header field at fault
	Got   uint64 // the offending value (a length for ErrTruncated/ErrLength)
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("wire: %s: %v (got %d)", e.Field, e.Err, e.Got)
}

func (e *ParseError) Unwrap() error { return e.Err }

func perr(err error, field string, got uint64) error {
	return &ParseError{Err: err, Field: field, Got: got}
}

// KindIndex returns the index in Kinds of the sentinel err wraps, or -1.
func KindIndex(err error) int {
	for i, k := range Kinds {
		if errors.Is(err, k) {
			return i
		}
	}
	return -1
}
