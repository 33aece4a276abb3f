package scenario

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/internal/yamldoc"
	"gopkg.in/yaml.v3"
)

// TopologyInfo records which fabric a cell runs on.
type TopologyInfo struct {
	Name string `json:"name"`
	// Source is the topology file as found; empty for an inline topology,
	// whose spec is then in Spec.
	Source       string        `json:"source,omitempty"`
	Spec         string        `json:"spec_yaml,omitempty"`
	Kind         topology.Kind `json:"kind"`
	K            int           `json:"k,omitempty"`
	Leaves       int           `json:"leaves,omitempty"`
	Spines       int           `json:"spines,omitempty"`
	HostsPerLeaf int           `json:"hosts_per_leaf,omitempty"`
	Hosts        int           `json:"hosts"`
	Switches     int           `json:"switches"`
	Links        int           `json:"links"`
}

// LinkOverride is a link override of the links: list, as written.
type LinkOverride struct {
	Between []string `json:"between,omitempty"`
	From    string   `json:"from,omitempty"`
	To      string   `json:"to,omitempty"`
	Rate    string   `json:"rate,omitempty"`
	Buffer  string   `json:"buffer,omitempty"`
	ECN     string   `json:"ecn,omitempty"`
	MTU     int      `json:"mtu,omitempty"`
}

const wantTopology = "a topology file such as topologies/fattree-k4.yaml, or an inline topology such as {kind: fattree, k: 4}"

// topology resolves the topology: a file path, looked up next to the
// scenario and then in the directories above it up to the repository
// root, or an inline topology spec.
func (l *loader) topology(n *yaml.Node, w *yamldoc.Walker, pr *yamldoc.Problems) (*topology.Topology, TopologyInfo) {
	if n == nil {
		pr.Add(w.Pos(), "topology", "missing; give %s", wantTopology)
		return nil, TopologyInfo{}
	}
	n = yamldoc.Deref(n)
	var (
		t    *topology.Topology
		info TopologyInfo
		err  error
	)
	switch {
	case n.Kind == yaml.MappingNode:
		var spec topology.Spec
		_ = spec.UnmarshalYAML(n) // never fails; problems come from Resolve
		t, err = spec.Resolve(l.file)
		var es yamldoc.Errors
		if errors.As(err, &es) {
			pr.AddAll("", es.Prefix("topology"))
			return nil, info
		}
		if err != nil {
			pr.Add(yamldoc.PosOf(n), "topology", "%v", err)
			return nil, info
		}
		text, _ := yaml.Marshal(&spec)
		info.Spec = string(text)
	case n.Kind == yaml.ScalarNode && !yamldoc.IsNull(n):
		path, tried := l.find(n.Value)
		if path == "" {
			pr.Add(yamldoc.PosOf(n), "topology", "cannot find %s (looked for %s)", n.Value, strings.Join(tried, ", "))
			return nil, info
		}
		t, err = topology.Load(path)
		if err != nil {
			pr.Add(yamldoc.PosOf(n), "topology", "%s has problems, listed with their own file name", path)
			pr.AddError(yamldoc.PosOf(n), "topology", err)
			return nil, info
		}
		info.Source = path
	default:
		pr.Add(yamldoc.PosOf(n), "topology", "expected %s, found %s", wantTopology, yamldoc.Describe(n))
		return nil, info
	}
	info.Name, info.Kind, info.K = t.Name, t.Kind, t.K
	info.Leaves, info.Spines, info.HostsPerLeaf = t.Leaves, t.Spines, t.HostsPerLeaf
	info.Hosts, info.Switches, info.Links = t.Count(topology.RoleHost), len(t.Switches()), len(t.Links)
	return t, info
}

// find looks for a file referenced by the scenario (FindFile from the
// scenario's directory).
func (l *loader) find(name string) (string, []string) { return FindFile(filepath.Dir(l.file), name) }

// FindFile looks for a file a file in dir refers to: relative to dir, then
// to each directory above it, stopping at the repository root (the first
// directory holding go.mod or .git). This lets a scenario in scenarios/
// (or a lab in labs/<id>/) say topologies/fattree-k4.yaml, as a user at
// the repository root would. It returns the path found (relative as
// given) and every path tried.
func FindFile(dir, name string) (string, []string) {
	if filepath.IsAbs(name) {
		if fileExists(name) {
			return name, nil
		}
		return "", []string{name}
	}
	var tried []string
	for range 64 {
		p := filepath.Join(dir, name)
		tried = append(tried, p)
		if fileExists(p) {
			return p, tried
		}
		if fileExists(filepath.Join(dir, "go.mod")) || fileExists(filepath.Join(dir, ".git")) {
			break
		}
		abs, err := filepath.Abs(dir)
		if err != nil || filepath.Dir(abs) == abs {
			break
		}
		dir = filepath.Join(dir, "..")
	}
	return "", tried
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// links applies the links: overrides to the topology (when it resolved).
func (l *loader) links(n *yaml.Node, t *topology.Topology, w *yamldoc.Walker, pr *yamldoc.Problems) []LinkOverride {
	var ovs []topology.Override
	w.Sequence(n, "links", "a list of link overrides, each starting with - between: [X, Y] or - from: X", func(i int, item *yaml.Node) {
		var o topology.Override
		_ = o.UnmarshalYAML(item) // never fails; problems come from ApplyOverrides
		ovs = append(ovs, o)
	})
	if t != nil && len(ovs) > 0 {
		if err := t.ApplyOverrides(l.file, "links", ovs); err != nil {
			pr.AddError(w.Val("links"), "links", err)
		}
	}
	out := make([]LinkOverride, len(ovs))
	for i, o := range ovs {
		out[i] = LinkOverride{o.Between, o.From, o.To, o.Rate, o.Buffer, o.ECN, o.MTU}
	}
	return out
}

// linkByName finds a link by its name "A~B", in either order.
func linkByName(t *topology.Topology, name string) (*topology.Link, error) {
	a, b, ok := strings.Cut(name, "~")
	if !ok || a == "" || b == "" || strings.Contains(b, "~") {
		return nil, fmt.Errorf("%q is not a link name; links are named after their two ends, lower tier first, e.g. e0-0~a0-1", name)
	}
	for _, end := range []string{a, b} {
		if _, found := t.Node(end); !found {
			return nil, fmt.Errorf("no link %q: no node named %q; %s", name, end, t.Inventory(true))
		}
	}
	l, _, ok := t.LinkBetween(a, b)
	if !ok {
		n, _ := t.Node(a)
		return nil, fmt.Errorf("no link %q: %s and %s are not linked; %s links only to %s", name, a, b, a, t.Neighbors(n))
	}
	return l, nil
}
