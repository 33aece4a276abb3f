package scenario

import (
	"slices"
	"time"

	"github.com/ftlab/ftlab/internal/yamldoc"
	"gopkg.in/yaml.v3"
)

// entry is one mapping being decoded, such as the workload block or one
// fault: its fields by key, and where its problems go, named under field
// ("workload", "faults[2]").
type entry struct {
	field string
	w     *yamldoc.Walker
	nodes map[string]*yaml.Node
	pr    *yamldoc.Problems
}

// newEntry reads mapping n's fields (known lists them, want says what n
// should be); ok is false when n is not a mapping. The caller must close
// the entry to hand its walker's problems on.
func newEntry(n *yaml.Node, field, want string, known []string, pr *yamldoc.Problems) (e *entry, ok bool) {
	e = &entry{field: field, w: yamldoc.NewWalker(n), nodes: map[string]*yaml.Node{}, pr: pr}
	e.w.Fields(n, want, known, nil, func(key string, v *yaml.Node) { e.nodes[key] = v })
	return e, !e.w.NotMapping()
}

// close adds the problems found while walking the entry.
func (e *entry) close() { e.pr.AddAll(e.field, e.w.Problems()) }

// clean reports whether walking the entry found no problem.
func (e *entry) clean() bool { return e.w.Clean() }

func (e *entry) has(key string) bool { return e.nodes[key] != nil }

// problem reports a problem with key's value.
func (e *entry) problem(key, format string, args ...any) {
	e.pr.Add(e.w.Val(key), yamldoc.JoinField(e.field, key), format, args...)
}

// missing reports that key, which the entry needs, is not there.
func (e *entry) missing(key, format string, args ...any) {
	e.pr.Add(e.w.Pos(), yamldoc.JoinField(e.field, key), format, args...)
}

// scalar returns key's value when it is given as a scalar.
func (e *entry) scalar(key, want string) (string, bool) {
	if v := e.nodes[key]; v != nil {
		return e.w.Scalar(v, key, want)
	}
	return "", false
}

// integer returns key's value when it is given as a whole number.
func (e *entry) integer(key, want string) (int, bool) {
	if v := e.nodes[key]; v != nil {
		return e.w.Integer(v, key, want)
	}
	return 0, false
}

// duration returns key's value when it is a valid duration.
func (e *entry) duration(key string) (time.Duration, bool) {
	s, ok := e.scalar(key, "a duration such as 10ms")
	if !ok {
		return 0, false
	}
	d, err := parseDuration(s)
	if err != nil {
		e.problem(key, "%v", err)
		return 0, false
	}
	return d, true
}

// onlyFor reports and drops the options given that the entry's kind does
// not take: takes lists, per option in known order, the kinds that take
// it (an option it does not list is taken by every kind); noun names the
// entry in the message ("fault", "workload").
func onlyFor[K ~string](e *entry, known []string, takes func(option string) []K, kind K, noun string) {
	for _, key := range known {
		if kinds := takes(key); e.has(key) && kinds != nil && !slices.Contains(kinds, kind) {
			e.pr.Add(e.w.Key(key), yamldoc.JoinField(e.field, key), "only for %s %ss; this one is %s", joinNames(kinds), noun, kind)
			delete(e.nodes, key)
		}
	}
}
