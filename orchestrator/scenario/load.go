package scenario

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ftlab/ftlab/internal/yamldoc"
	"github.com/ftlab/ftlab/orchestrator/workload"
	"gopkg.in/yaml.v3"
)

// load checks a parsed scenario document and builds the Scenario.
func load(file string, root *yaml.Node, opt Options) (*Scenario, error) {
	l := &loader{file: file, opt: opt}
	var pr yamldoc.Problems
	axes := l.compare(root, &pr)

	base := clone(root)
	if base.Kind == yaml.MappingNode {
		deleteEntry(base, "compare")
	}
	combos := product(axes)
	results := make([]cellResult, len(combos))
	seen := map[FieldError][]int{} // problem -> cells it occurs in
	var order []FieldError
	for c, combo := range combos {
		doc := clone(base)
		for k, a := range axes {
			a.set(doc, combo[k])
		}
		res := l.decodeCell(doc)
		for k, a := range axes {
			a.remap(file, combo[k], res.problems)
		}
		for _, e := range res.problems {
			if _, ok := seen[*e]; !ok {
				order = append(order, *e)
			}
			seen[*e] = append(seen[*e], c)
		}
		results[c] = res
	}
	names := make([]string, len(combos))
	for c, combo := range combos {
		names[c] = cellName(axes, combo)
	}
	for _, e := range order {
		cells := seen[e]
		if len(cells) < len(combos) && !strings.HasPrefix(e.Field, "compare.") {
			e.Msg += " " + inCells(cells, names)
		}
		pr.AddAll("", []*FieldError{&e})
	}
	if pr.Len() == 0 {
		l.unusedBlocks(root, axes, results, &pr)
	}
	if pr.Len() > 0 {
		return nil, pr.Result(file)
	}

	first := results[0].wide
	s := &Scenario{Name: first.name, Description: first.description, File: file, Seeds: first.seeds}
	if s.Name == "" {
		s.Name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	for _, a := range axes {
		s.Compare = append(s.Compare, Axis{Key: a.key, Values: a.labels})
	}
	gen := generator{cache: map[string][]workload.Message{}}
	for c, combo := range combos {
		cell := &Cell{Name: names[c], Config: results[c].cfg}
		for k, a := range axes {
			cell.Choices = append(cell.Choices, Choice{Key: a.key, Value: a.labels[combo[k]]})
		}
		for rep, seed := range s.Seeds {
			cell.Runs = append(cell.Runs, gen.run(cell.Config, rep, seed, len(s.Seeds) > 1, &pr))
		}
		s.Cells = append(s.Cells, cell)
	}
	if pr.Len() > 0 {
		return nil, pr.Result(file)
	}
	return s, nil
}

// product lists every combination of value indexes, the first axis
// varying slowest; one empty combination when nothing is compared.
func product(axes []*axis) [][]int {
	combos := [][]int{{}}
	for _, a := range axes {
		var next [][]int
		for _, c := range combos {
			for i := range a.values {
				next = append(next, append(slices.Clone(c), i))
			}
		}
		combos = next
	}
	return combos
}

// cellName joins a combination's labels: "policy=ofan,transport=rss".
func cellName(axes []*axis, combo []int) string {
	if len(axes) == 0 {
		return "base"
	}
	parts := make([]string, len(axes))
	for k, a := range axes {
		parts[k] = a.key + "=" + a.labels[combo[k]]
	}
	return strings.Join(parts, ",")
}

// inCells says which cells a problem occurs in, when not in all of them.
func inCells(cells []int, names []string) string {
	switch len(cells) {
	case 1:
		return fmt.Sprintf("(in cell %s)", names[cells[0]])
	case 2:
		return fmt.Sprintf("(in cells %s and %s)", names[cells[0]], names[cells[1]])
	}
	return fmt.Sprintf("(in %d of the %d cells, e.g. %s)", len(cells), len(names), names[cells[0]])
}

// unusedBlocks reports parameter blocks that no cell uses: settings that
// would silently do nothing are almost always a mistake (a transport name
// that was meant to be compared, a block for the wrong scheme).
func (l *loader) unusedBlocks(root *yaml.Node, axes []*axis, results []cellResult, pr *yamldoc.Problems) {
	for _, b := range blocks {
		if b.Key == "host" {
			continue
		}
		at, field := yamldoc.Pos{}, ""
		if k, _ := mappingEntry(root, b.Key); k != nil {
			at, field = yamldoc.PosOf(k), b.Key
		}
		for _, a := range axes {
			if a.top == b.Key && field == "" {
				at, field = a.pos, "compare."+a.key
			}
		}
		if field == "" {
			continue
		}
		used := false
		for _, r := range results {
			used = used || r.used[b.Key]
		}
		if !used {
			pr.Add(at, field, "no cell uses it: it configures %s, and the scenario runs %s; remove it, or compare a %s that uses it",
				b.What, runsWhat(b.Key, results), blockKind(b.Key))
		}
	}
}

// runsWhat lists the policies, transports or congestion controls the
// cells run, whichever reads block.
func runsWhat(block string, results []cellResult) string {
	kind := blockKind(block)
	var names []string
	add := func(n string) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, r := range results {
		switch kind {
		case kindPolicy:
			for _, ly := range []Layer{LayerEdge, LayerAgg, LayerLeaf} {
				if p, ok := r.cfg.Policy[ly]; ok {
					add(string(p))
				}
			}
		case kindCC:
			add(string(r.cfg.CC))
		default:
			add(string(r.cfg.Transport))
		}
	}
	if len(names) > 1 {
		kind += "s"
	}
	return kind + " " + strings.Join(names, ", ")
}

// generator builds runs, sharing the messages of cells that run the same
// workload on the same hosts with the same seed.
type generator struct {
	cache map[string][]workload.Message
}

func (g *generator) run(cfg *Config, rep int, seed uint64, multi bool, pr *yamldoc.Problems) *Run {
	r := &Run{Repetition: rep, Seed: seed}
	spec, _ := json.Marshal(cfg.Workload)
	hosts, _ := json.Marshal(cfg.Topology)
	key := fmt.Sprintf("%s|%s|%d", spec, hosts, seed)
	msgs, ok := g.cache[key]
	if !ok {
		var err error
		msgs, err = cfg.Workload.Generate(cfg.fabric, seed)
		if err != nil {
			pr.Add(yamldoc.Pos{}, "workload", "%v (seed %d)", err, seed)
		}
		g.cache[key] = msgs
	}
	r.Messages = msgs
	e := expander{t: cfg.topo, seed: seed, pr: pr, multi: multi}
	r.Faults, r.Timeline = e.expand(cfg.Faults)
	if cfg.DataPlane == Shaped && msgs != nil {
		b, err := workload.LowerBound(msgs, cfg.fabric, cfg.Wire())
		if err != nil {
			pr.Add(yamldoc.Pos{}, "workload", "CCT lower bound: %v", err)
		} else {
			r.Bound = &b
		}
	}
	return r
}
