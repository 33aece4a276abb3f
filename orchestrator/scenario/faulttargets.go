package scenario

import (
	"fmt"
	"slices"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/internal/yamldoc"
	"gopkg.in/yaml.v3"
)

// What a fault applies to: the links (or switches) its entry selects, and
// the pools a random selection picks from.

// links decodes links: and stage: and checks the selection.
func (d *faultDecoder) links(f *Fault) {
	w, t := d.w, d.t
	if v := d.nodes["links"]; v != nil {
		seen := map[string]int{}
		w.Sequence(v, "links", "a list of link names, e.g. [e0-0~a0-1]", func(i int, item *yaml.Node) {
			key := fmt.Sprintf("links[%d]", i)
			w.Record(key, yamldoc.PosOf(item), yamldoc.PosOf(item))
			name, ok := w.Scalar(item, key, "a link name such as e0-0~a0-1")
			if !ok || t == nil {
				f.Links = append(f.Links, name)
				f.at.links = append(f.at.links, yamldoc.PosOf(item))
				return
			}
			link, err := linkByName(t, name)
			if err != nil {
				d.problem(key, "%v", err)
				return
			}
			if j, dup := seen[link.Name]; dup {
				d.problem(key, "%s is listed twice (also links[%d])", link.Name, j)
				return
			}
			seen[link.Name] = i
			f.Links = append(f.Links, link.Name)
			f.at.links = append(f.at.links, yamldoc.PosOf(item))
		})
	}
	if s, ok := d.scalar("stage", "a stage such as agg-core"); ok {
		f.Stage = topology.Stage(s)
		if t != nil {
			if valid := topology.Stages(t.Kind); !slices.Contains(valid, f.Stage) {
				d.problem("stage", "%q is not a stage of a %s (valid: %s)", s, t.Kind, joinNames(valid))
				f.Stage = ""
			}
		}
	}
	switch {
	case isEmptyList(d.nodes["links"]):
		d.problem("links", "empty; list the links, e.g. [e0-0~a0-1]")
	case d.has("links") && d.has("stage"):
		d.problem("stage", "give either links (and random to pick some of them) or stage, not both")
	case !d.has("links") && !d.has("stage") && !d.has("random"):
		d.problem("", "names no links; give links: [e0-0~a0-1], stage: agg-core, or random: N (N random links above the hosts)")
	}
	if t != nil && f.Random > 0 {
		if pool := len(linkPool(f, t)); f.Random > pool {
			d.problem("random", "%d is more than the %d links to pick from (%s)", f.Random, pool, poolName(f))
		}
	}
}

// switches decodes switches: and layer: and checks the selection.
func (d *faultDecoder) switches(f *Fault) {
	w, t := d.w, d.t
	if v := d.nodes["switches"]; v != nil {
		seen := map[string]int{}
		w.Sequence(v, "switches", "a list of switch names, e.g. [a0-1]", func(i int, item *yaml.Node) {
			key := fmt.Sprintf("switches[%d]", i)
			w.Record(key, yamldoc.PosOf(item), yamldoc.PosOf(item))
			name, ok := w.Scalar(item, key, "a switch name such as a0-1")
			if !ok {
				return
			}
			if t != nil {
				n, found := t.Node(name)
				switch {
				case !found:
					d.problem(key, "no switch named %q; %s", name, t.Inventory(false))
					return
				case !n.Role.IsSwitch():
					d.problem(key, "%s is a host; to take its link down use kind: down with links: [%s~%s]", name, name, t.Peer(n.Ports[0]).Node)
					return
				}
			}
			if j, dup := seen[name]; dup {
				d.problem(key, "%s is listed twice (also switches[%d])", name, j)
				return
			}
			seen[name] = i
			f.Switches = append(f.Switches, name)
		})
	}
	if s, ok := d.scalar("layer", "a switch layer such as agg"); ok {
		f.Layer = topology.Role(s)
		if t != nil {
			if valid := switchRoles(t.Kind); !slices.Contains(valid, f.Layer) {
				d.problem("layer", "%q is not a switch layer of a %s (valid: %s)", s, t.Kind, joinNames(valid))
				f.Layer = ""
			}
		}
	}
	switch {
	case isEmptyList(d.nodes["switches"]):
		d.problem("switches", "empty; list the switches, e.g. [a0-1]")
	case d.has("switches") && d.has("layer"):
		d.problem("layer", "give either switches (and random to pick some of them) or layer with random, not both")
	case d.has("layer") && !d.has("random"):
		d.problem("layer", "would fail every %s switch; add random: N to fail N of them", f.Layer)
	case !d.has("switches") && !d.has("random"):
		d.problem("", "names no switches; give switches: [a0-1], or random: N with an optional layer")
	}
	if t != nil && f.Random > 0 {
		if pool := len(switchPool(f, t)); f.Random > pool {
			d.problem("random", "%d is more than the %d switches to pick from", f.Random, pool)
		}
	}
}

// isEmptyList reports whether n is an empty list or null: an explicit
// empty selection, which must not fall back to the default pool.
func isEmptyList(n *yaml.Node) bool {
	if n == nil {
		return false
	}
	n = yamldoc.Deref(n)
	return yamldoc.IsNull(n) || (n.Kind == yaml.SequenceNode && len(n.Content) == 0)
}

// linkPool lists the links a fault may pick from, by index: its links,
// its stage, or every link above the hosts (where load balancing acts).
func linkPool(f *Fault, t *topology.Topology) []int {
	var pool []int
	if len(f.Links) > 0 {
		for _, name := range f.Links {
			if l, err := linkByName(t, name); err == nil {
				pool = append(pool, l.ID)
			}
		}
		return pool
	}
	host := topology.Stages(t.Kind)[0]
	for i := range t.Links {
		st := t.Links[i].Stage
		if (f.Stage != "" && st == f.Stage) || (f.Stage == "" && st != host) {
			pool = append(pool, i)
		}
	}
	return pool
}

func poolName(f *Fault) string {
	switch {
	case len(f.Links) > 0:
		return "the links listed"
	case f.Stage != "":
		return "stage " + string(f.Stage)
	}
	return "every link above the hosts"
}

// switchPool lists the switches a switch-down fault may pick from.
func switchPool(f *Fault, t *topology.Topology) []string {
	if len(f.Switches) > 0 {
		return f.Switches
	}
	var pool []string
	for _, n := range t.Switches() {
		if f.Layer == "" || n.Role == f.Layer {
			pool = append(pool, n.Name)
		}
	}
	return pool
}

func switchRoles(k topology.Kind) []topology.Role {
	if k == topology.LeafSpine {
		return []topology.Role{topology.RoleLeaf, topology.RoleSpine}
	}
	return []topology.Role{topology.RoleEdge, topology.RoleAgg, topology.RoleCore}
}
