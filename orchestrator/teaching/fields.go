package teaching

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ftlab/ftlab/internal/yamldoc"
)

// fields decodes the values of one mapping (a check, a step) after the
// walker recorded them, reporting problems at their positions.
type fields struct {
	w     *yamldoc.Walker
	nodes map[string]*yaml.Node
	lab   *Lab
}

func (f *fields) has(key string) bool { return f.nodes[key] != nil }

func (f *fields) problem(key, format string, args ...any) {
	f.w.Problem(f.w.Val(key), key, format, args...)
}

// missing reports a required field that is not there.
func (f *fields) missing(key, want string) {
	f.w.Problem(f.w.Pos(), key, "missing; expected %s", want)
}

func (f *fields) str(key, want string, required bool) string {
	n := f.nodes[key]
	if n == nil {
		if required {
			f.missing(key, want)
		}
		return ""
	}
	s, _ := f.w.Scalar(n, key, want)
	return strings.TrimSpace(s)
}

func (f *fields) strs(key, want string) []string {
	n := f.nodes[key]
	if n == nil {
		return nil
	}
	if n.Kind == yaml.ScalarNode {
		if s, ok := f.w.Scalar(n, key, want); ok {
			return []string{strings.TrimSpace(s)}
		}
		return nil
	}
	var out []string
	f.w.Sequence(n, key, "a list of "+want, func(i int, item *yaml.Node) {
		if s, ok := f.w.Scalar(item, fmt.Sprintf("%s[%d]", key, i), want); ok {
			out = append(out, s)
		}
	})
	return out
}

func (f *fields) integer(key, want string, def, lo, hi int) int {
	n := f.nodes[key]
	if n == nil {
		return def
	}
	v, ok := f.w.Integer(n, key, want)
	if !ok {
		return def
	}
	if v < lo || v > hi {
		f.problem(key, "%d is out of range: expected %s from %d to %d", v, want, lo, hi)
		return def
	}
	return v
}

func (f *fields) duration(key string, def time.Duration) time.Duration {
	n := f.nodes[key]
	if n == nil {
		return def
	}
	s, ok := f.w.Scalar(n, key, "a duration such as 5s or 200ms")
	if !ok {
		return def
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d < 0 {
		f.problem(key, "expected a duration such as 5s or 200ms, found %q", s)
		return def
	}
	return d
}

func (f *fields) boolean(key string) bool {
	n := f.nodes[key]
	if n == nil {
		return false
	}
	s, ok := f.w.Scalar(n, key, "true or false")
	switch {
	case !ok:
	case s == "true":
		return true
	case s == "false":
	default:
		f.problem(key, "expected true or false, found %q", s)
	}
	return false
}

// expr compiles an expression field; problems carry the expression's
// own column inside the value.
func (f *fields) expr(key string, asBool, required bool) *Expr {
	s := f.str(key, "an expression (docs/labs.md)", required)
	if s == "" {
		return nil
	}
	e, err := compileExpr(s, asBool, f.lab.Topo)
	if err != nil {
		f.problem(key, "expression: %v", flatten(err))
		return nil
	}
	return e
}

func (f *fields) regexp(key string) *regexp.Regexp {
	s := f.str(key, "a regular expression (Go syntax)", false)
	if s == "" {
		return nil
	}
	re, err := regexp.Compile(s)
	if err != nil {
		f.problem(key, "regular expression: %v", err)
		return nil
	}
	return re
}

// value decodes a literal YAML value: a number, a string or a list.
func (f *fields) value(key string) any {
	n := f.nodes[key]
	if n == nil {
		return nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		f.problem(key, "%v", err)
		return nil
	}
	switch x := v.(type) {
	case int:
		return float64(x)
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			out = append(out, fmt.Sprint(e))
		}
		return out
	}
	return v
}

// oneOf checks a field against its valid values.
func (f *fields) oneOf(key, value string, valid []string) bool {
	for _, v := range valid {
		if v == value {
			return true
		}
	}
	msg := fmt.Sprintf("%q is not valid (valid: %s)", value, strings.Join(valid, ", "))
	if g := yamldoc.Closest(value, valid); g != "" {
		msg += fmt.Sprintf("; did you mean %q?", g)
	}
	f.problem(key, "%s", msg)
	return false
}
