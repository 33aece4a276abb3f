package yamldoc

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// Problems collects FieldErrors from several sources while a file is
// checked, and turns them into an Errors sorted by file and position.
type Problems struct{ list Errors }

// Add records a problem at a position.
func (p *Problems) Add(at Pos, field, format string, args ...any) {
	p.list = append(p.list, &FieldError{Line: at.Line, Column: at.Column, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// AddAll appends problems found relative to a nested field, prefixing
// their field paths with prefix. Problems that already name a file (from
// a file referenced by the one being checked) keep it.
func (p *Problems) AddAll(prefix string, es []*FieldError) {
	for _, e := range es {
		c := *e
		c.Field = JoinField(prefix, e.Field)
		p.list = append(p.list, &c)
	}
}

// AddError appends the problems of err: every FieldError it wraps (as an
// Errors or a single *FieldError) unchanged, anything else as one problem
// at the given position and field.
func (p *Problems) AddError(at Pos, field string, err error) {
	var es Errors
	var fe *FieldError
	switch {
	case errors.As(err, &es):
		for _, e := range es {
			c := *e
			p.list = append(p.list, &c)
		}
	case errors.As(err, &fe):
		c := *fe
		p.list = append(p.list, &c)
	default:
		p.Add(at, field, "%v", err)
	}
}

// Len is the number of problems collected.
func (p *Problems) Len() int { return len(p.list) }

// Result stamps file on every problem that names no file and returns them
// as an Errors, or nil when there are none. Problems in file come first,
// sorted by position (stably: problems at one position keep the order in
// which they were found); problems in other files follow, grouped by
// file. Identical problems (same file, position, field and message) are
// reported once.
func (p *Problems) Result(file string) error {
	if len(p.list) == 0 {
		return nil
	}
	out := make(Errors, 0, len(p.list))
	seen := map[FieldError]bool{}
	for _, e := range p.list {
		c := *e
		if c.File == "" {
			c.File = file
		}
		if seen[c] {
			continue
		}
		seen[c] = true
		out = append(out, &c)
	}
	slices.SortStableFunc(out, func(a, b *FieldError) int {
		if a.File != b.File {
			switch {
			case a.File == file:
				return -1
			case b.File == file:
				return 1
			}
			return cmp.Compare(a.File, b.File)
		}
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	return out
}
