package yamldoc

import (
	"fmt"
	"strings"
)

// Pos is a 1-based line and column in a YAML file. It is zero for values
// that were set in Go rather than decoded from a file.
type Pos struct{ Line, Column int }

// FieldError is one problem with a file, located as precisely as the file
// allows.
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
// field path, for a file that embeds another under a key: a scenario
// resolving its "topology:" section reports "topology.k: ..." with
// Prefix("topology").
func (es Errors) Prefix(field string) Errors {
	out := make(Errors, len(es))
	for i, e := range es {
		c := *e
		c.Field = JoinField(field, e.Field)
		out[i] = &c
	}
	return out
}

// JoinField builds a field path: "faults[1]" + "at" is "faults[1].at",
// "faults" + "[1]" is "faults[1]".
func JoinField(prefix, field string) string {
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
