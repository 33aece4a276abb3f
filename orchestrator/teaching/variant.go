package teaching

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/ftlab/ftlab/internal/topology"
)

// Facts are what a student's seed drew: concrete hidden faults and picks.
// The checker knows them, so it knows the expected answers.
type Facts struct {
	Student string            `json:"student"`
	Seed    uint64            `json:"seed"`
	Faults  []Impairment      `json:"faults"`
	Picks   map[string]string `json:"picks"`
	// Addrs are the addresses of picked nodes, by pick name.
	Addrs map[string]string `json:"addrs"`
}

// Impairment is one link direction set of a hidden fault.
type Impairment struct {
	Kind         string  `json:"kind"` // corrupt or degrade
	Link         string  `json:"link"`
	Direction    string  `json:"direction"` // up (towards the core), down, both
	Drop         float64 `json:"drop,omitempty"`
	RateFraction float64 `json:"rate_fraction,omitempty"`
}

// Sides are the link ends whose sending direction the impairment changes.
func (im Impairment) Sides() []topology.Side {
	switch im.Direction {
	case "up":
		return []topology.Side{topology.SideA}
	case "down":
		return []topology.Side{topology.SideB}
	}
	return []topology.Side{topology.SideA, topology.SideB}
}

// NormalizeStudent is the form of a student's name that seeds the variant:
// trimmed and lower-case, so "Alice " and "alice" get the same lab.
func NormalizeStudent(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// SeedOf is a student's seed for a lab: FNV-1a of the lab id and the
// normalized student name. Another lab gives the same student other
// faults; the same lab always the same ones.
func SeedOf(labID, student string) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "ftlab-lab\x00%s\x00%s", labID, NormalizeStudent(student))
	return h.Sum64()
}

// Draw makes a student's variant of the lab. Each rule draws from its own
// random stream, so adding a pick does not change the faults.
func (l *Lab) Draw(student string) *Facts {
	f := &Facts{Student: NormalizeStudent(student), Seed: SeedOf(l.ID, student), Picks: map[string]string{}, Addrs: map[string]string{}}
	t := l.Topo
	// Faulty links share no switch: each can be found on its own, and
	// taking them all out of service never cuts the fabric apart.
	touched := map[string]bool{}
	for i, r := range l.Variant.Faults {
		rng := rand.New(rand.NewPCG(f.Seed, uint64(i)+1))
		var pool []*topology.Link
		for j := range t.Links {
			if lk := &t.Links[j]; slices.Contains(r.Stages, string(lk.Stage)) {
				pool = append(pool, lk)
			}
		}
		rng.Shuffle(len(pool), func(a, b int) { pool[a], pool[b] = pool[b], pool[a] })
		n := 0
		for _, lk := range pool {
			if n == r.Count || touched[lk.A.Node] || touched[lk.B.Node] {
				continue
			}
			n++
			touched[lk.A.Node], touched[lk.B.Node] = true, true
			name := lk.Name
			dir := r.Direction
			if dir == "random" {
				dir = []string{"up", "down"}[rng.IntN(2)]
			}
			f.Faults = append(f.Faults, Impairment{Kind: r.Kind, Link: name, Direction: dir, Drop: r.Drop, RateFraction: r.RateFraction})
		}
	}
	slices.SortFunc(f.Faults, func(a, b Impairment) int { return strings.Compare(a.Link, b.Link) })
	picked := map[string]bool{}
	for i, p := range l.Variant.Picks {
		rng := rand.New(rand.NewPCG(f.Seed, 1000+uint64(i)))
		pool := pickPool(t, p.From)
		avoid := -1
		if p.OtherPodThan != "" {
			if n, ok := t.Node(f.Picks[p.OtherPodThan]); ok {
				avoid = n.Pod
			}
		}
		var cands []string
		for _, name := range pool {
			if picked[name] {
				continue
			}
			if n, ok := t.Node(name); ok && avoid >= 0 && n.Pod == avoid {
				continue
			}
			cands = append(cands, name)
		}
		if len(cands) > 0 {
			name := cands[rng.IntN(len(cands))]
			f.Picks[p.Name] = name
			picked[name] = true
			if n, ok := t.Node(name); ok {
				f.Addrs[p.Name] = n.Addr.String()
			}
		}
	}
	return f
}

// pickPools are the sets a pick may draw from.
var pickPools = []string{"hosts", "edges", "aggs", "cores", "links"}

func pickPool(t *topology.Topology, from string) []string {
	var out []string
	if from == "links" {
		for _, l := range t.Links {
			if l.Stage != topology.StageHostEdge && l.Stage != topology.StageHostLeaf {
				out = append(out, l.Name)
			}
		}
		return out
	}
	role := map[string]topology.Role{"hosts": topology.RoleHost, "edges": topology.RoleEdge, "aggs": topology.RoleAgg, "cores": topology.RoleCore}[from]
	for i := range t.Nodes {
		if t.Nodes[i].Role == role {
			out = append(out, t.Nodes[i].Name)
		}
	}
	return out
}

// FaultyLinks are the names of the links the variant impairs, sorted.
func (f *Facts) FaultyLinks() []string {
	var out []string
	for _, im := range f.Faults {
		if !slices.Contains(out, im.Link) {
			out = append(out, im.Link)
		}
	}
	slices.Sort(out)
	return out
}

// doc is what expressions see as variant.
func (f *Facts) doc() any {
	if f == nil {
		return map[string]any{}
	}
	d, _ := JSONDoc(f)
	m, _ := d.(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	links := make([]any, 0)
	for _, l := range f.FaultyLinks() {
		links = append(links, l)
	}
	m["faulty_links"] = links
	return m
}

// Expand substitutes {lab}, {pick.NAME} and {addr.NAME} (a picked
// node's address) in a step's command.
func (f *Facts) Expand(labName, s string) string {
	if labName != "" {
		s = strings.ReplaceAll(s, "{lab}", labName)
	}
	if f != nil {
		for k, v := range f.Picks {
			s = strings.ReplaceAll(s, "{pick."+k+"}", v)
		}
		for k, v := range f.Addrs {
			s = strings.ReplaceAll(s, "{addr."+k+"}", v)
		}
	}
	return s
}
