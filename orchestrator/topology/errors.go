package topology

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Pos is a 1-based line and column in a YAML file. It is zero for values
// that were set in Go rather than decoded from a file.
type Pos struct{ Line, Column int }

// FieldError is one problem with a topology (or scenario) file, located
// as precisely as the file allows.
type FieldError struct {
	File   string // as given to Parse or Load; may be empty
	Line   int    // 1-based; 0 when unknown
	Column int    // 1-based; 0 when unknown
	Field  string // path of the field, e.g. "stages.agg-core.rate"; empty for whole-file problems
	Msg    string
}

// Error formats the problem as "file:line:col: field: msg", leaving out
// the parts that are unknown, so editors can jump to the location.
func (e *FieldError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		if b.Len() > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in one file, sorted by position. Files
// are checked completely before giving up, so a student fixes all
// mistakes in one round instead of one per run.
type Errors []*FieldError

// Error joins the problems one per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap exposes the individual problems to errors.As and errors.Is.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// Prefix returns copies of the problems with field prepended to each
// field path, for a file that embeds a topology under a key: a scenario
// resolving its "topology:" section reports "topology.k: ..." with
// Prefix("topology").
func (es Errors) Prefix(field string) Errors {
	out := make(Errors, len(es))
	for i, e := range es {
		c := *e
		c.Field = joinField(field, e.Field)
		out[i] = &c
	}
	return out
}

// problems collects FieldErrors while a file is checked.
type problems struct{ list Errors }

func (p *problems) add(at Pos, field, format string, args ...any) {
	p.list = append(p.list, &FieldError{Line: at.Line, Column: at.Column, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// addAll appends problems recorded relative to a nested field, prefixing
// their field paths with the path of that field.
func (p *problems) addAll(prefix string, es []*FieldError) {
	for _, e := range es {
		c := *e
		c.Field = joinField(prefix, e.Field)
		p.list = append(p.list, &c)
	}
}

// result stamps the file name on every problem and sorts them by position;
// nil when there were none. The sort is stable so problems at the same
// position keep the order in which they were found.
func (p *problems) result(file string) error {
	if len(p.list) == 0 {
		return nil
	}
	out := make(Errors, len(p.list))
	for i, e := range p.list {
		c := *e
		c.File = file
		out[i] = &c
	}
	slices.SortStableFunc(out, func(a, b *FieldError) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	return out
}

// joinField builds a field path: "overrides[1]" + "rate" is
// "overrides[1].rate", "overrides" + "[1]" is "overrides[1]".
func joinField(prefix, field string) string {
	switch {
	case prefix == "":
		return field
	case field == "":
		return prefix
	case strings.HasPrefix(field, "["):
		return prefix + field
	}
	return prefix + "." + field
}
