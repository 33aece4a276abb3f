package check

import (
	"fmt"
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ftlab/ftlab/orchestrator/scenario"
)

// Reduction is how --quick shrinks one scenario of a check: fewer seeds,
// fewer compared alternatives, smaller messages, the regime (fabric,
// rates, delays, timers) left as it is, so the pipeline runs end to end
// in seconds. A quick check says whether the pipeline produces verdicts,
// not whether a claim holds: too few flows make its claims inconclusive.
type Reduction struct {
	Skip  bool
	Patch []Patch
}

// Patch changes one value of a scenario file.
type Patch struct {
	// Path is the keys from the document's root: {"compare", "transport"},
	// {"workload", "size"}; a compared key keeps its dots:
	// {"compare", "workload.size"}.
	Path []string
	// Value is YAML that replaces the value (or adds the key).
	Value string
	// Keep, instead of Value, keeps only these items (by index) of the
	// list at Path.
	Keep []int
	// Delete removes the key at Path (a parameter block no cell left uses).
	Delete bool
}

// loadReduced reads a scenario file, applies the patches and checks the
// result as a scenario (errors name the file; their lines are the
// patched document's).
func loadReduced(path string, patches []Patch, opt scenario.Options) (*scenario.Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load scenario: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: not a mapping", path)
	}
	for _, p := range patches {
		if err := apply(doc.Content[0], p); err != nil {
			return nil, fmt.Errorf("%s: quick reduction %s: %w", path, strings.Join(p.Path, "."), err)
		}
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return nil, err
	}
	return scenario.ParseWith(path, out, opt)
}

// apply carries out one patch on a mapping.
func apply(m *yaml.Node, p Patch) error {
	if len(p.Path) == 0 {
		return fmt.Errorf("empty path")
	}
	for i, key := range p.Path {
		if m.Kind != yaml.MappingNode {
			return fmt.Errorf("%s is not a mapping", strings.Join(p.Path[:i], "."))
		}
		var val *yaml.Node
		for j := 0; j+1 < len(m.Content); j += 2 {
			if m.Content[j].Value == key {
				val = m.Content[j+1]
			}
		}
		last := i == len(p.Path)-1
		switch {
		case last && p.Delete:
			for j := 0; j+1 < len(m.Content); j += 2 {
				if m.Content[j].Value == key {
					m.Content = append(m.Content[:j], m.Content[j+2:]...)
					return nil
				}
			}
			return fmt.Errorf("no key %q to delete", key)
		case last && p.Keep != nil:
			if val == nil || val.Kind != yaml.SequenceNode {
				return fmt.Errorf("no list to keep items of")
			}
			var kept []*yaml.Node
			for _, k := range p.Keep {
				if k < 0 || k >= len(val.Content) {
					return fmt.Errorf("no item %d (the list has %d)", k, len(val.Content))
				}
				kept = append(kept, val.Content[k])
			}
			val.Content = kept
			return nil
		case last:
			var v yaml.Node
			if err := yaml.Unmarshal([]byte(p.Value), &v); err != nil {
				return fmt.Errorf("value %q: %w", p.Value, err)
			}
			if val == nil {
				m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v.Content[0])
			} else {
				*val = *v.Content[0]
			}
			return nil
		case val == nil:
			return fmt.Errorf("no key %q", key)
		}
		m = val
	}
	return nil
}

// seeds and fewer are the reductions every quick check uses.
func seeds(n int) Patch { return Patch{Path: []string{"repetitions"}, Value: fmt.Sprint(n)} }

func keep(path string, items ...int) Patch {
	keys := []string{"compare", strings.TrimPrefix(path, "compare.")}
	return Patch{Path: keys, Keep: items}
}

func set(value string, path ...string) Patch { return Patch{Path: path, Value: value} }

func drop(path ...string) Patch { return Patch{Path: path, Delete: true} }
