package topology

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"

	"gopkg.in/yaml.v3"
)

// This file exports the strict, position-keeping YAML machinery that
// topology files are decoded with, so that other file formats embedding a
// topology (scenario files) decode and report problems the same way:
// unknown fields with a guess and the valid list, repeated keys, values of
// the wrong shape, every problem as file:line:col: field: message.

// Walker decodes one YAML mapping strictly and remembers where each of its
// fields was written. Field paths it records and reports are relative to
// the mapping; a caller embedding it prefixes them (Problems.AddAll).
// A Walker never fails: problems are collected and read with Problems.
type Walker struct{ o origin }

// NewWalker starts a Walker for the mapping n; n only sets the position
// that problems about missing fields point at.
func NewWalker(n *yaml.Node) *Walker {
	w := &Walker{}
	if n = deref(n); n != nil {
		w.o.pos = posOf(n)
	}
	return w
}

// Fields walks the mapping n, whose keys must be among known, calling fn
// for each known key in file order. Unknown keys are problems that list
// the valid ones and guess a typo; hints adds advice for keys that belong
// elsewhere. want describes a valid value for "expected X, found Y".
func (w *Walker) Fields(n *yaml.Node, want string, known []string, hints map[string]string, fn func(key string, v *yaml.Node)) {
	w.o.fields(n, want, known, hints, fn)
}

// Mapping calls fn for each key of the mapping n, in file order, after
// checking that n is a mapping (null is an empty one) and rejecting
// repeated keys. path names n in problems.
func (w *Walker) Mapping(n *yaml.Node, path, want string, fn func(key string, k, v *yaml.Node)) {
	w.o.mapping(n, path, want, fn)
}

// Sequence calls fn for each item of the list n; null is an empty list.
func (w *Walker) Sequence(n *yaml.Node, path, want string, fn func(i int, item *yaml.Node)) {
	w.o.sequence(n, path, want, fn)
}

// Scalar returns the text of a scalar value; a null, empty or non-scalar
// value is a problem.
func (w *Walker) Scalar(n *yaml.Node, field, want string) (string, bool) {
	return w.o.scalar(n, field, want)
}

// Integer returns the value of a whole-number scalar.
func (w *Walker) Integer(n *yaml.Node, field, want string) (int, bool) {
	return w.o.integer(n, field, want)
}

// Problem records a problem at a position and marks field (and its
// parents) bad, so later checks can skip it (IsBad).
func (w *Walker) Problem(at Pos, field, format string, args ...any) {
	w.o.problem(at, field, format, args...)
}

// Record notes where a field's key and value were written, for fields
// decoded outside Fields (list items, map entries).
func (w *Walker) Record(field string, key, val Pos) { w.o.record(field, key, val) }

// Has reports whether the field was written in the file.
func (w *Walker) Has(field string) bool { return w.o.has(field) }

// Key is where the field's key was written, or the mapping's position
// when it was not written.
func (w *Walker) Key(field string) Pos { return w.o.key(field) }

// Val is where the field's value was written, falling back like Key.
func (w *Walker) Val(field string) Pos { return w.o.val(field) }

// IsBad reports whether the field already has a problem.
func (w *Walker) IsBad(field string) bool { return w.o.isBad(field) }

// Pos is the position of the mapping itself.
func (w *Walker) Pos() Pos { return w.o.pos }

// NotMapping reports whether the walked value was not a mapping at all
// (set by Fields), in which case nothing inside it can be checked.
func (w *Walker) NotMapping() bool { return w.o.notMap }

// Problems returns the problems found so far, with relative field paths
// and no file name.
func (w *Walker) Problems() []*FieldError { return slices.Clone(w.o.problems) }

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
		c.Field = joinField(prefix, e.Field)
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
// sorted by position; problems in other files follow, grouped by file.
// Identical problems (same file, position, field and message) are
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

// PosOf is the position of a node (following aliases).
func PosOf(n *yaml.Node) Pos { return posOf(deref(n)) }

// Deref follows YAML aliases to the node they stand for.
func Deref(n *yaml.Node) *yaml.Node { return deref(n) }

// IsNull reports whether n is an explicit or implicit null ("key:" alone).
func IsNull(n *yaml.Node) bool { return isNull(deref(n)) }

// Describe names what a node is, for "expected X, found Y" messages.
func Describe(n *yaml.Node) string { return describe(deref(n)) }

// Closest returns the candidate nearest to a misspelled word, or "" when
// none is close enough to be a plausible typo.
func Closest(word string, candidates []string) string { return closest(word, candidates) }

// JoinField builds a field path: "faults[1]" + "at" is "faults[1].at",
// "faults" + "[1]" is "faults[1]".
func JoinField(prefix, field string) string { return joinField(prefix, field) }

// ParseDocument parses a file holding exactly one YAML document and
// returns its root node (aliases followed). Syntax errors are located the
// way topology files locate them; an empty document (or a second one) is
// reported with emptyMsg (or as an extra document). The result is an
// Errors on failure.
func ParseDocument(file string, data []byte, emptyMsg string) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, Errors{{File: file, Msg: emptyMsg}}
		}
		return nil, syntaxError(file, data, err)
	}
	root := deref(doc.Content[0])
	if isNull(root) {
		return nil, Errors{{File: file, Msg: emptyMsg}}
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return nil, Errors{{File: file, Line: extra.Line, Column: extra.Column,
			Msg: "a file holds one YAML document; remove this second one (after ---)"}}
	case !errors.Is(err, io.EOF):
		return nil, syntaxError(file, data, err)
	}
	return root, nil
}

// Inventory lists the ranges of node names by role ("this fattree k=4 has
// hosts h0-0-0..h3-1-1, edge switches e0-0..e3-1, ..."), for errors about
// names that do not exist. withHosts includes the hosts.
func (t *Topology) Inventory(withHosts bool) string { return t.inventory(withHosts) }

// Neighbors lists the names of the nodes linked to n, in port order.
func (t *Topology) Neighbors(n *Node) string { return t.peers(n) }
