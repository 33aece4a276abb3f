package yamldoc

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Walker decodes one YAML mapping strictly and remembers where each of its
// fields was written and what was wrong with them as YAML. Field paths it
// records and reports are relative to the mapping, so a struct decoded
// inside another file reports the same way as on its own; the caller
// prefixes them (Problems.AddAll). A Walker never fails: problems are
// collected and read with Problems. The zero Walker is ready to use; Start
// sets the position that problems about missing fields point at.
type Walker struct {
	pos      Pos             // the mapping itself
	keys     map[string]Pos  // field path -> position of its key
	vals     map[string]Pos  // field path -> position of its value
	bad      map[string]bool // field paths (and their parents) that already have a problem
	notMap   bool            // the walked value was something other than a mapping
	problems []*FieldError
}

// NewWalker starts a Walker for the mapping n.
func NewWalker(n *yaml.Node) *Walker {
	w := &Walker{}
	w.Start(n)
	return w
}

// Start sets the walker's own position to that of n (nil: unchanged).
func (w *Walker) Start(n *yaml.Node) {
	if n = Deref(n); n != nil {
		w.pos = PosOf(n)
	}
}

// Fields walks the mapping n, whose keys must be among known, calling fn
// for each known key in file order after recording where it was written.
// Unknown keys are problems that list the valid ones and guess a typo;
// hints adds advice for keys that belong elsewhere. want describes a valid
// value for "expected X, found Y".
func (w *Walker) Fields(n *yaml.Node, want string, known []string, hints map[string]string, fn func(key string, v *yaml.Node)) {
	w.Mapping(n, "", want, func(key string, k, v *yaml.Node) {
		if slices.Contains(known, key) {
			w.Record(key, PosOf(k), PosOf(v))
			fn(key, v)
			return
		}
		msg := fmt.Sprintf("unknown field %q", key)
		if hint := hints[key]; hint != "" {
			msg += "; " + hint
		} else if guess := Closest(key, known); guess != "" {
			msg += fmt.Sprintf("; did you mean %q?", guess)
		}
		w.Problem(PosOf(k), key, "%s (valid: %s)", msg, strings.Join(known, ", "))
	})
}

// Mapping calls fn for each key of the mapping n, in file order, after
// checking that n is a mapping and that no key is repeated (yaml.v3 only
// checks duplicates when decoding into Go maps and structs, not nodes).
// A missing or null value is an empty mapping. path names n in problems.
func (w *Walker) Mapping(n *yaml.Node, path, want string, fn func(key string, k, v *yaml.Node)) {
	n = Deref(n)
	if n == nil || IsNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		w.Problem(PosOf(n), path, "expected %s, found %s", want, Describe(n))
		w.notMap = w.notMap || path == ""
		return
	}
	first := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := Deref(n.Content[i]), Deref(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			w.Problem(PosOf(k), path, "expected a field name, found %s", Describe(k))
			continue
		}
		if line, dup := first[k.Value]; dup {
			w.Problem(PosOf(k), JoinField(path, k.Value), "given twice; the first is at line %d", line)
			continue
		}
		first[k.Value] = k.Line
		fn(k.Value, k, v)
	}
}

// Sequence calls fn for each item of the list n; null is an empty list.
func (w *Walker) Sequence(n *yaml.Node, path, want string, fn func(i int, item *yaml.Node)) {
	n = Deref(n)
	if n == nil || IsNull(n) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		w.Problem(PosOf(n), path, "expected %s, found %s", want, Describe(n))
		return
	}
	for i, item := range n.Content {
		fn(i, Deref(item))
	}
}

// Scalar returns the text of a scalar value. An absent value ("rate:") is
// a problem rather than "unset": the writer clearly meant to set it.
func (w *Walker) Scalar(n *yaml.Node, field, want string) (string, bool) {
	n = Deref(n)
	switch {
	case IsNull(n):
		w.Problem(PosOf(n), field, "no value; expected %s", want)
	case n.Kind != yaml.ScalarNode:
		w.Problem(PosOf(n), field, "expected %s, found %s", want, Describe(n))
	case strings.TrimSpace(n.Value) == "":
		w.Problem(PosOf(n), field, "empty; expected %s", want)
	default:
		return n.Value, true
	}
	return "", false
}

// Integer returns the value of a whole-number scalar.
func (w *Walker) Integer(n *yaml.Node, field, want string) (int, bool) {
	s, ok := w.Scalar(n, field, want)
	if !ok {
		return 0, false
	}
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		w.Problem(PosOf(n), field, "expected %s, found %q", want, s)
		return 0, false
	}
	return v, true
}

// Problem records a decoding problem and marks the field and its parents
// bad, so that validation does not report the same mistake a second time
// (a k that is not a number must not also be "out of range").
func (w *Walker) Problem(at Pos, field, format string, args ...any) {
	w.problems = append(w.problems, &FieldError{Line: at.Line, Column: at.Column, Field: field, Msg: fmt.Sprintf(format, args...)})
	if w.bad == nil {
		w.bad = map[string]bool{}
	}
	w.bad[field] = true
	for i := range len(field) {
		if field[i] == '.' || field[i] == '[' {
			w.bad[field[:i]] = true
		}
	}
}

// Append records a problem as it is, without marking any field bad: a
// problem about the file rather than one of its fields.
func (w *Walker) Append(e *FieldError) { w.problems = append(w.problems, e) }

// Record notes where a field's key and value were written, for fields
// decoded outside Fields (list items, map entries).
func (w *Walker) Record(field string, key, val Pos) {
	if w.keys == nil {
		w.keys, w.vals = map[string]Pos{}, map[string]Pos{}
	}
	w.keys[field], w.vals[field] = key, val
}

// Has reports whether the field was written in the file.
func (w *Walker) Has(field string) bool {
	_, ok := w.keys[field]
	return ok
}

// Key is where the field's name was written; the mapping's own position
// when it was not, so errors about missing or Go-built fields still point
// somewhere.
func (w *Walker) Key(field string) Pos {
	if p, ok := w.keys[field]; ok {
		return p
	}
	return w.pos
}

// Val is where the field's value was written, falling back like Key.
func (w *Walker) Val(field string) Pos {
	if p, ok := w.vals[field]; ok {
		return p
	}
	return w.Key(field)
}

// IsBad reports whether the field already has a problem.
func (w *Walker) IsBad(field string) bool { return w.bad[field] }

// Pos is the position of the mapping itself.
func (w *Walker) Pos() Pos { return w.pos }

// NotMapping reports whether the walked value was not a mapping at all
// (set by Fields), in which case nothing inside it can be checked.
func (w *Walker) NotMapping() bool { return w.notMap }

// Problems returns the problems found so far, with relative field paths
// and no file name.
func (w *Walker) Problems() []*FieldError { return slices.Clone(w.problems) }

// Clean reports whether no problem was found.
func (w *Walker) Clean() bool { return len(w.problems) == 0 }
