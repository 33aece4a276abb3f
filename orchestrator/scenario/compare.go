package scenario

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ftlab/ftlab/internal/yamldoc"
	"gopkg.in/yaml.v3"
)

// The compare block crosses alternatives into a matrix of cells. Each
// key is the path of a field ("policy", "workload.size", "rss.sigma",
// "faults[0].drop") and each value one alternative, written exactly as the
// field itself would be. A cell is the scenario file with one value of
// every key substituted in the YAML tree; it is then decoded like a file
// written by hand, so cells are checked as strictly as anything else, and
// a substituted value keeps its own line and column for errors.

// axis is one decoded key of the compare block.
type axis struct {
	key    string // as written
	top    string // first segment without index: "faults"
	index  int    // faults[i]: i; -1 otherwise
	sub    string // second segment; "" for a whole field
	pos    yamldoc.Pos
	values []*yaml.Node
	labels []string
	// owned maps the position of every node inside each value to the value
	// index, so errors found in a cell can be attributed to the value.
	owned map[yamldoc.Pos]int
}

// notCompared explains the fields a cell cannot vary.
var notCompared = map[string]string{
	"name":        "the scenario has one name",
	"description": "the scenario has one description",
	"repetitions": "every cell runs every repetition; set repetitions for the whole scenario",
	"seed":        "every cell runs every seed, so cells are compared on the same workload and faults",
	"seeds":       "every cell runs every seed, so cells are compared on the same workload and faults",
	"compare":     "compare cannot be compared",
}

// wholeOnly are fields compared as a whole, never by sub-path.
var wholeOnly = map[string]string{
	"topology":       "compare whole topologies: topology: [topologies/fattree-k4.yaml, topologies/asymmetric-k4.yaml]",
	"links":          "compare whole lists of overrides",
	"dataplane":      "it is a single value",
	"policy":         "compare whole policies: policy: [ecmp, ofan, {edge: ofan, agg: ecmp}]",
	"trimming":       "it is a single value",
	"probe_headroom": "it is a single value",
	"transport":      "it is a single value",
	"cc":             "it is a single value",
	"timeout":        "it is a single value",
}

var keySyntax = regexp.MustCompile(`^([a-z_]+)(?:\[(\d+)\])?(?:\.([a-z_]+))?$`)

const wantCompare = "a mapping from a field to the list of its alternatives, e.g. {policy: [ecmp, ofan], transport: [rss, rss+pfld]}"

// subFields returns the fields a top-level field can be compared by.
func subFields(top string) []string {
	switch top {
	case "workload":
		return workloadFields
	case "faults":
		return faultFields
	}
	if b, ok := blockFor(top); ok {
		return b.Names()
	}
	return nil
}

// compare decodes the compare block of root. Only valid keys are
// returned, so the cells built from them can still be checked for other
// mistakes.
func (l *loader) compare(root *yaml.Node, pr *yamldoc.Problems) []*axis {
	k, n := mappingEntry(root, "compare")
	if k == nil {
		return nil
	}
	if n = yamldoc.Deref(n); yamldoc.IsNull(n) || (n.Kind == yaml.MappingNode && len(n.Content) == 0) {
		pr.Add(yamldoc.PosOf(n), "compare", "empty; give the fields to compare with their alternatives, e.g. {policy: [ecmp, ofan]}, or leave compare out")
		return nil
	}
	var axes []*axis
	w := yamldoc.NewWalker(n)
	w.Mapping(n, "compare", wantCompare, func(key string, k, v *yaml.Node) {
		a, ok := l.compareKey(root, key, yamldoc.PosOf(k), pr)
		if !ok {
			return
		}
		a.owned = map[yamldoc.Pos]int{}
		field := "compare." + key
		w.Sequence(v, field, "a list of alternatives, e.g. [ecmp, ofan]", func(i int, item *yaml.Node) {
			a.values = append(a.values, item)
			walk(item, func(x *yaml.Node) { a.owned[yamldoc.PosOf(x)] = i })
		})
		if yamldoc.Deref(v).Kind != yaml.SequenceNode {
			return // reported by Sequence
		}
		if len(a.values) == 0 {
			pr.Add(yamldoc.PosOf(v), field, "empty; list at least one alternative")
			return
		}
		texts := make([]string, len(a.values))
		for i, item := range a.values {
			texts[i] = canonical(item)
			if j := slices.Index(texts[:i], texts[i]); j >= 0 {
				pr.Add(yamldoc.PosOf(item), fmt.Sprintf("%s[%d]", field, i), "the same as %s[%d]; every alternative must differ", field, j)
				return
			}
		}
		a.labels = labels(a.values)
		axes = append(axes, a)
	})
	for _, p := range w.Problems() {
		c := *p
		if c.Field == "" {
			c.Field = "compare"
		}
		pr.AddAll("", []*FieldError{&c})
	}
	// Two keys that touch the same field would substitute over each other.
	var kept []*axis
	for _, a := range axes {
		clash := false
		for _, b := range kept {
			if a.top == b.top && (a.whole() || b.whole() || (a.index == b.index && (a.sub == "" || b.sub == "" || a.sub == b.sub))) {
				pr.Add(a.pos, "compare."+a.key, "overlaps compare.%s; compare a field either whole or by its parts", b.key)
				clash = true
				break
			}
		}
		if !clash {
			kept = append(kept, a)
		}
	}
	return kept
}

// compareKey checks one key of the compare block against the schema and
// against the base file: a compared field must not also be set there, as
// the compared values would silently replace it.
func (l *loader) compareKey(root *yaml.Node, key string, pos yamldoc.Pos, pr *yamldoc.Problems) (*axis, bool) {
	field := "compare." + key
	m := keySyntax.FindStringSubmatch(key)
	if m == nil {
		pr.Add(pos, field, "%q is not a field path; write a field (policy), a field of a block (rss.sigma, workload.size) or of a fault (faults[0].drop)", key)
		return nil, false
	}
	a := &axis{key: key, top: m[1], index: -1, sub: m[3], pos: pos}
	if why, ok := notCompared[a.top]; ok {
		pr.Add(pos, field, "%s cannot be compared: %s", a.top, why)
		return nil, false
	}
	if !slices.Contains(topFields, a.top) {
		var valid []string
		for _, f := range topFields {
			if _, no := notCompared[f]; !no {
				valid = append(valid, f)
			}
		}
		msg := fmt.Sprintf("unknown field %q", a.top)
		if g := yamldoc.Closest(a.top, valid); g != "" {
			msg += fmt.Sprintf("; did you mean %q?", g)
		}
		pr.Add(pos, field, "%s (valid: %s)", msg, strings.Join(valid, ", "))
		return nil, false
	}
	if m[2] != "" {
		if a.top != "faults" {
			pr.Add(pos, field, "only faults are a list; %s has no [%s]", a.top, m[2])
			return nil, false
		}
		a.index, _ = strconv.Atoi(m[2])
		count := 0
		if f := mappingValue(root, "faults"); f != nil && f.Kind == yaml.SequenceNode {
			count = len(f.Content)
		}
		if a.index >= count {
			pr.Add(pos, field, "there is no faults[%d]; the file has %s", a.index, plural(count, "fault"))
			return nil, false
		}
		if a.sub == "" {
			pr.Add(pos, field, "compare a field of the fault, e.g. faults[%d].drop, or the whole faults list", a.index)
			return nil, false
		}
	} else if a.top == "faults" && a.sub != "" {
		pr.Add(pos, field, "say which fault: faults[0].%s", a.sub)
		return nil, false
	}
	if a.sub != "" {
		if why, ok := wholeOnly[a.top]; ok {
			pr.Add(pos, field, "%s has no parts to compare; %s", a.top, why)
			return nil, false
		}
		valid := subFields(a.top)
		if !slices.Contains(valid, a.sub) {
			msg := fmt.Sprintf("unknown field %q of %s", a.sub, a.top)
			if g := yamldoc.Closest(a.sub, valid); g != "" {
				msg += fmt.Sprintf("; did you mean %q?", g)
			}
			pr.Add(pos, field, "%s (valid: %s)", msg, strings.Join(valid, ", "))
			return nil, false
		}
	}
	if k := a.find(root); k != nil {
		pr.Add(yamldoc.PosOf(k), a.key, "also compared (compare.%s, line %d); the compared values replace it, so remove it here", key, pos.Line)
		return nil, false
	}
	return a, true
}

// whole reports whether a compares a top-level field as a whole.
func (a *axis) whole() bool { return a.index < 0 && a.sub == "" }

// find returns the key node of the field a compares in doc, nil if unset.
func (a *axis) find(doc *yaml.Node) *yaml.Node {
	k, v := mappingEntry(doc, a.top)
	if k == nil {
		return nil
	}
	if a.index >= 0 {
		v = yamldoc.Deref(v)
		if v.Kind != yaml.SequenceNode || a.index >= len(v.Content) {
			return nil
		}
		v = v.Content[a.index]
	}
	if a.sub == "" {
		return k
	}
	sk, _ := mappingEntry(v, a.sub)
	return sk
}

// set substitutes value i of a into doc (a clone it may modify). A block
// or workload the file leaves out is created.
func (a *axis) set(doc *yaml.Node, i int) {
	value := clone(a.values[i])
	keyNode := func(name string) *yaml.Node {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name, Line: a.pos.Line, Column: a.pos.Column}
	}
	if a.sub == "" {
		putEntry(doc, keyNode(a.top), value)
		return
	}
	_, parent := mappingEntry(doc, a.top)
	if parent == nil || yamldoc.IsNull(parent) {
		parent = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: a.pos.Line, Column: a.pos.Column}
		putEntry(doc, keyNode(a.top), parent)
	}
	parent = yamldoc.Deref(parent)
	if a.index >= 0 {
		if parent.Kind != yaml.SequenceNode || a.index >= len(parent.Content) {
			return
		}
		parent = yamldoc.Deref(parent.Content[a.index])
	}
	if parent.Kind == yaml.MappingNode {
		putEntry(parent, keyNode(a.sub), value)
	} // otherwise the decoder reports the parent's shape
}

// remap attributes problems found inside value i to the compare block:
// "transport: unknown transport" at the position of compare.transport[2]
// becomes "compare.transport[2]: unknown transport".
func (a *axis) remap(file string, i int, es []*FieldError) {
	for _, e := range es {
		j, ok := a.owned[yamldoc.Pos{Line: e.Line, Column: e.Column}]
		if !ok || j != i || (e.File != "" && e.File != file) {
			continue
		}
		rest, ok := strings.CutPrefix(e.Field, a.key)
		if !ok || (rest != "" && rest[0] != '.' && rest[0] != '[') {
			continue
		}
		e.Field = fmt.Sprintf("compare.%s[%d]%s", a.key, i, rest)
	}
}

// mappingValue returns the value of key in mapping n, or nil.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	_, v := mappingEntry(n, key)
	if v == nil {
		return nil
	}
	return yamldoc.Deref(v)
}

func mappingEntry(n *yaml.Node, key string) (k, v *yaml.Node) {
	n = yamldoc.Deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i], n.Content[i+1]
		}
	}
	return nil, nil
}

// putEntry sets key in mapping n, replacing its value or appending it.
func putEntry(n, key, value *yaml.Node) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key.Value {
			n.Content[i+1] = value
			return
		}
	}
	n.Content = append(n.Content, key, value)
}

// deleteEntry removes key from mapping n.
func deleteEntry(n *yaml.Node, key string) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			n.Content = slices.Delete(n.Content, i, i+2)
			return
		}
	}
}

// clone deep-copies a node tree, replacing aliases by copies of what they
// stand for, so substitutions never reach through an anchor.
func clone(n *yaml.Node) *yaml.Node {
	n = yamldoc.Deref(n)
	if n == nil {
		return nil
	}
	c := *n
	c.Anchor = ""
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, x := range n.Content {
		c.Content[i] = clone(x)
	}
	return &c
}

// walk calls fn on n and every node below it.
func walk(n *yaml.Node, fn func(*yaml.Node)) {
	n = yamldoc.Deref(n)
	fn(n)
	for _, x := range n.Content {
		walk(x, fn)
	}
}

// canonical renders a value for equality checks.
func canonical(n *yaml.Node) string {
	n = yamldoc.Deref(n)
	if n.Kind == yaml.ScalarNode {
		return n.Value
	}
	out, err := yaml.Marshal(clone(n))
	if err != nil {
		return fmt.Sprint(n.Line, n.Column)
	}
	return string(out)
}

// labels names the values of an axis for cell names: a scalar by itself
// (a path by its base name without extension), a flat mapping as
// "key:value+key:value", an empty list as "none", a list of up to three
// flat mappings as their names joined by "@" (one fault:
// "kind:corrupt+stage:leaf-spine+drop:1e-3"), anything else by its
// position from 1. Characters that would upset shells or the cell-name
// syntax become "_"; clashes get "#position".
func labels(values []*yaml.Node) []string {
	out := make([]string, len(values))
	for i, v := range values {
		v = yamldoc.Deref(v)
		var s string
		switch {
		case v.Kind == yaml.ScalarNode && strings.ContainsAny(v.Value, `/\`):
			base := filepath.Base(v.Value)
			s = strings.TrimSuffix(base, filepath.Ext(base))
		case v.Kind == yaml.ScalarNode:
			s = v.Value
		case v.Kind == yaml.SequenceNode && len(v.Content) == 0:
			s = "none"
		case v.Kind == yaml.MappingNode && mappingValue(v, "name") != nil && mappingValue(v, "name").Kind == yaml.ScalarNode:
			s = mappingValue(v, "name").Value // an inline topology by its name
		case v.Kind == yaml.MappingNode && flat(v):
			s = flatLabel(v)
		case v.Kind == yaml.SequenceNode && allFlat(v.Content):
			// A short list of flat mappings, such as one fault: each
			// mapping's label, joined by "@".
			var parts []string
			for _, m := range v.Content {
				parts = append(parts, flatLabel(yamldoc.Deref(m)))
			}
			s = strings.Join(parts, "@")
		default:
			s = strconv.Itoa(i + 1)
		}
		out[i] = sanitize(s)
	}
	count := map[string]int{}
	for _, s := range out {
		count[s]++
	}
	for i, s := range out {
		if count[s] > 1 {
			out[i] = fmt.Sprintf("%s#%d", s, i+1)
		}
	}
	return out
}

// flatLabel names a flat mapping "key:value+key:value".
func flatLabel(m *yaml.Node) string {
	var parts []string
	for j := 0; j+1 < len(m.Content); j += 2 {
		parts = append(parts, m.Content[j].Value+":"+yamldoc.Deref(m.Content[j+1]).Value)
	}
	return strings.Join(parts, "+")
}

// allFlat reports whether a list holds one to three flat mappings and
// nothing else (longer lists are named by their position).
func allFlat(items []*yaml.Node) bool {
	if len(items) == 0 || len(items) > 3 {
		return false
	}
	for _, it := range items {
		if it = yamldoc.Deref(it); it.Kind != yaml.MappingNode || !flat(it) {
			return false
		}
	}
	return true
}

func flat(m *yaml.Node) bool {
	for _, c := range m.Content {
		if yamldoc.Deref(c).Kind != yaml.ScalarNode {
			return false
		}
	}
	return len(m.Content) > 0
}

var unsafe = regexp.MustCompile(`[^A-Za-z0-9._+:%@#-]`)

func sanitize(s string) string {
	if s == "" {
		return "_"
	}
	return unsafe.ReplaceAllString(s, "_")
}

// plural writes "1 fault", "2 faults".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
