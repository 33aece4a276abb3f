package topology

import (
	"fmt"
	"strings"
)

// origin remembers where the fields of one decoded struct were written and
// what was wrong with them as YAML. Field paths are relative to the struct,
// so an Override decoded inside a scenario file reports the same way as one
// inside a topology file; the caller prefixes them.
type origin struct {
	pos      Pos             // the mapping itself
	keys     map[string]Pos  // field path -> position of its key
	vals     map[string]Pos  // field path -> position of its value
	bad      map[string]bool // field paths (and their parents) that already have a problem
	notMap   bool            // the struct was given something other than a mapping
	problems []*FieldError
}

// has reports whether the field was written in the file.
func (o *origin) has(field string) bool {
	_, ok := o.keys[field]
	return ok
}

// key is where the field's name was written; the enclosing mapping when
// unknown, so errors about missing or Go-built fields still point somewhere.
func (o *origin) key(field string) Pos {
	if p, ok := o.keys[field]; ok {
		return p
	}
	return o.pos
}

// val is where the field's value was written, falling back like key.
func (o *origin) val(field string) Pos {
	if p, ok := o.vals[field]; ok {
		return p
	}
	return o.key(field)
}

func (o *origin) record(field string, key, val Pos) {
	if o.keys == nil {
		o.keys, o.vals = map[string]Pos{}, map[string]Pos{}
	}
	o.keys[field], o.vals[field] = key, val
}

// problem records a decoding problem and marks the field and its parents
// bad, so that validation does not report the same mistake a second time
// (a k that is not a number must not also be "out of range").
func (o *origin) problem(at Pos, field, format string, args ...any) {
	o.problems = append(o.problems, &FieldError{Line: at.Line, Column: at.Column, Field: field, Msg: fmt.Sprintf(format, args...)})
	if o.bad == nil {
		o.bad = map[string]bool{}
	}
	o.bad[field] = true
	for i := range len(field) {
		if field[i] == '.' || field[i] == '[' {
			o.bad[field[:i]] = true
		}
	}
}

// isBad reports whether the field already has a decoding problem.
func (o *origin) isBad(field string) bool { return o.bad[field] }

// closest returns the candidate nearest to a misspelled word, or "" when
// none is close enough to be a plausible typo.
func closest(word string, candidates []string) string {
	limit := 2
	if len(word) <= 3 {
		limit = 1 // "ecm" is a typo of "ecn", "mt" is not a typo of "k"
	}
	best, bestDist := "", limit+1
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(word), c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
