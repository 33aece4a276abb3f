package topology

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// The helpers below walk yaml.Node trees by hand instead of using
// yaml.Decoder.KnownFields: that stops at the first unknown field and
// forgets positions, while a student needs every problem with its line.

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func posOf(n *yaml.Node) Pos { return Pos{Line: n.Line, Column: n.Column} }

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// describe names what was found, for "expected X, found Y" messages.
func describe(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.MappingNode:
		return "a mapping (key: value lines)"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case isNull(n):
		return "nothing"
	}
	return strconv.Quote(n.Value)
}

// mapping calls fn for each key of the mapping n, in file order, after
// checking that n is a mapping and that no key is repeated (yaml.v3 only
// checks duplicates when decoding into Go maps and structs, not nodes).
// A missing or null value is an empty mapping.
func (o *origin) mapping(n *yaml.Node, path, want string, fn func(key string, k, v *yaml.Node)) {
	n = deref(n)
	if n == nil || isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		o.problem(posOf(n), path, "expected %s, found %s", want, describe(n))
		o.notMap = o.notMap || path == ""
		return
	}
	first := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), deref(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			o.problem(posOf(k), path, "expected a field name, found %s", describe(k))
			continue
		}
		if line, dup := first[k.Value]; dup {
			o.problem(posOf(k), joinField(path, k.Value), "given twice; the first is at line %d", line)
			continue
		}
		first[k.Value] = k.Line
		fn(k.Value, k, v)
	}
}

// fields walks a mapping whose keys must be among known, recording the
// position of every known key and reporting the others, with a guess at
// what was meant. hints adds advice for keys that belong elsewhere.
func (o *origin) fields(n *yaml.Node, want string, known []string, hints map[string]string, fn func(key string, v *yaml.Node)) {
	o.mapping(n, "", want, func(key string, k, v *yaml.Node) {
		for _, f := range known {
			if key == f {
				o.record(key, posOf(k), posOf(v))
				fn(key, v)
				return
			}
		}
		msg := fmt.Sprintf("unknown field %q", key)
		if hint := hints[key]; hint != "" {
			msg += "; " + hint
		} else if guess := closest(key, known); guess != "" {
			msg += fmt.Sprintf("; did you mean %q?", guess)
		}
		o.problem(posOf(k), key, "%s (valid: %s)", msg, strings.Join(known, ", "))
	})
}

// sequence calls fn for each item of the list n. Null is an empty list.
func (o *origin) sequence(n *yaml.Node, path, want string, fn func(i int, item *yaml.Node)) {
	n = deref(n)
	if n == nil || isNull(n) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		o.problem(posOf(n), path, "expected %s, found %s", want, describe(n))
		return
	}
	for i, item := range n.Content {
		fn(i, deref(item))
	}
}

// scalar returns the text of a scalar value. An absent value ("rate:") is
// a problem rather than "unset": the student clearly meant to set it.
func (o *origin) scalar(n *yaml.Node, field, want string) (string, bool) {
	n = deref(n)
	switch {
	case isNull(n):
		o.problem(posOf(n), field, "no value; expected %s", want)
	case n.Kind != yaml.ScalarNode:
		o.problem(posOf(n), field, "expected %s, found %s", want, describe(n))
	case strings.TrimSpace(n.Value) == "":
		o.problem(posOf(n), field, "empty; expected %s", want)
	default:
		return n.Value, true
	}
	return "", false
}

// integer returns the value of a whole-number scalar.
func (o *origin) integer(n *yaml.Node, field, want string) (int, bool) {
	s, ok := o.scalar(n, field, want)
	if !ok {
		return 0, false
	}
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		o.problem(posOf(deref(n)), field, "expected %s, found %q", want, s)
		return 0, false
	}
	return v, true
}
