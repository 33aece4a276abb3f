package scenario

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/internal/yamldoc"
	"gopkg.in/yaml.v3"
)

// Fault is one entry of the faults: timeline, resolved: link names are
// canonical ("<lower tier>~<upper tier>") and defaults are filled in. In a
// Run, Links (or Switches) name exactly the links (switches) affected,
// random choices included; Random, Stage and Layer then record how they
// were chosen.
type Fault struct {
	Kind FaultKind `json:"kind"`
	// At is when the fault starts, from the start of the run.
	At time.Duration `json:"at_ns"`
	// For is how long it lasts; 0 until the end of the run. For a flap,
	// how long the links stay down each time.
	For time.Duration `json:"for_ns,omitempty"`
	// Repeat and Every: a flap goes down Repeat times, Every apart.
	Repeat int           `json:"repeat,omitempty"`
	Every  time.Duration `json:"every_ns,omitempty"`
	// Links, Stage and Random select links; Switches, Layer and Random
	// select switches (switch-down).
	Links    []string       `json:"links,omitempty"`
	Stage    topology.Stage `json:"stage,omitempty"`
	Switches []string       `json:"switches,omitempty"`
	Layer    topology.Role  `json:"layer,omitempty"`
	Random   int            `json:"random,omitempty"`
	// Direction of the links a corrupt or degrade fault applies to.
	Direction Direction `json:"direction,omitempty"`
	// Drop is the probability that a corrupt link drops a packet.
	Drop float64 `json:"drop,omitempty"`
	// RateBps is the rate a degraded link runs at, or, when 0, RateFactor
	// times its normal rate.
	RateBps    uint64  `json:"rate_bps,omitempty"`
	RateFactor float64 `json:"rate_factor,omitempty"`

	at faultPos
}

// faultPos locates a fault's parts for errors found when it is expanded.
type faultPos struct {
	field  string // "faults[2]"
	pos    yamldoc.Pos
	links  []yamldoc.Pos
	random yamldoc.Pos
}

var faultFields = []string{"kind", "at", "for", "repeat", "every", "links", "stage", "switches", "layer", "random", "direction", "drop", "rate"}

// faultOptions says which kinds each option applies to.
var faultOptions = map[string][]FaultKind{
	"links":     {Corrupt, LinkDown, Flap, Degrade},
	"stage":     {Corrupt, LinkDown, Flap, Degrade},
	"switches":  {SwitchDown},
	"layer":     {SwitchDown},
	"direction": {Corrupt, Degrade},
	"drop":      {Corrupt},
	"rate":      {Degrade},
	"repeat":    {Flap},
	"every":     {Flap},
}

const wantFault = "a fault: a mapping with kind (corrupt, down, flap, degrade, switch-down), at, and what it applies to"

// faults decodes the faults: list. t may be nil when the topology did not
// resolve; names are then not checked.
func (l *loader) faults(n *yaml.Node, top *yamldoc.Walker, t *topology.Topology, timeout time.Duration, autoRate bool, pr *yamldoc.Problems) []Fault {
	out := []Fault{}
	if n == nil {
		return out
	}
	top.Sequence(n, "faults", "a list of faults, each starting with - kind:", func(i int, item *yaml.Node) {
		f, ok := l.fault(item, fmt.Sprintf("faults[%d]", i), t, timeout, autoRate, pr)
		if ok {
			out = append(out, f)
		}
	})
	return out
}

// fault decodes one entry of faults. autoRate: the cell says rate: auto,
// so link rates are not known yet and a degraded rate must be a fraction.
func (l *loader) fault(n *yaml.Node, field string, t *topology.Topology, timeout time.Duration, autoRate bool, pr *yamldoc.Problems) (Fault, bool) {
	w := yamldoc.NewWalker(n)
	before := pr.Len()
	defer func() { pr.AddAll(field, w.Problems()) }()
	f := Fault{at: faultPos{field: field, pos: w.Pos()}}
	nodes := map[string]*yaml.Node{}
	w.Fields(n, wantFault, faultFields, nil, func(key string, v *yaml.Node) { nodes[key] = v })
	if w.NotMapping() {
		return f, false
	}
	problem := func(key, format string, args ...any) {
		pr.Add(w.Val(key), yamldoc.JoinField(field, key), format, args...)
	}
	scalar := func(key, want string) (string, bool) {
		if v := nodes[key]; v != nil {
			return w.Scalar(v, key, want)
		}
		return "", false
	}
	duration := func(key string) (time.Duration, bool) {
		s, ok := scalar(key, "a duration such as 10ms")
		if !ok {
			return 0, false
		}
		d, err := parseDuration(s)
		if err != nil {
			problem(key, "%v", err)
			return 0, false
		}
		return d, true
	}

	s, ok := scalar("kind", "a fault kind such as corrupt")
	switch {
	case ok:
		f.Kind = FaultKind(s)
		if err := oneOf("fault kind", f.Kind, FaultKinds); err != nil {
			problem("kind", "%v", err)
			return f, false
		}
	case nodes["kind"] == nil:
		pr.Add(w.Pos(), yamldoc.JoinField(field, "kind"), "missing (valid: %s)", faultKindNames())
		return f, false
	default:
		return f, false
	}
	for _, key := range faultFields {
		if kinds := faultOptions[key]; nodes[key] != nil && kinds != nil && !slices.Contains(kinds, f.Kind) {
			pr.Add(w.Key(key), yamldoc.JoinField(field, key), "only for %s faults; this one is %s", joinNames(kinds), f.Kind)
			delete(nodes, key)
		}
	}

	// Timing.
	if d, ok := duration("at"); ok {
		f.At = d
		if f.At >= timeout {
			problem("at", "%s is not before the run's timeout %s; the fault would never happen", d, timeout)
		}
	}
	if d, ok := duration("for"); ok {
		if d <= 0 {
			problem("for", "must be longer than 0s; leave it out to last until the end of the run")
		}
		f.For = d
	} else if f.Kind == Flap && nodes["for"] == nil {
		pr.Add(w.Pos(), yamldoc.JoinField(field, "for"), "missing; a flap needs for: how long the links stay down each time")
	}
	if f.Kind == Flap {
		f.Repeat = 1
		if v := nodes["repeat"]; v != nil {
			if r, ok := w.Integer(v, "repeat", "a number of flaps such as 3"); ok {
				if r < 1 || r > 10000 {
					problem("repeat", "%d is out of range; repeat must be from 1 to 10000", r)
				} else {
					f.Repeat = r
				}
			}
		}
		f.Every = 2 * f.For
		if d, ok := duration("every"); ok {
			f.Every = d
			if f.For > 0 && d <= f.For {
				problem("every", "%s is not longer than for %s: the links must come up before they go down again", d, f.For)
			}
		}
	}

	// What the fault does.
	if f.Kind == Corrupt || f.Kind == Degrade {
		f.Direction = Both
		if s, ok := scalar("direction", "up, down or both"); ok {
			f.Direction = Direction(s)
			if err := oneOf("direction", f.Direction, Directions); err != nil {
				problem("direction", "%v", err)
			}
		}
	}
	if f.Kind == Corrupt {
		if s, ok := scalar("drop", "a probability such as 1e-3 or 0.1%"); ok {
			p, err := parseFraction(s)
			switch {
			case err != nil:
				problem("drop", "%v", err)
			case p <= 0 || p > 1:
				problem("drop", "%s is out of range; drop is a probability above 0 and at most 1 (or 100%%)", s)
			}
			f.Drop = p
		} else if nodes["drop"] == nil {
			pr.Add(w.Pos(), yamldoc.JoinField(field, "drop"), "missing; a corrupt fault needs drop: the probability that a packet is lost, e.g. 1e-3")
		}
	}
	if f.Kind == Degrade {
		if s, ok := scalar("rate", "a rate such as 25Mbit or a fraction of the link's rate such as 25%"); ok {
			if strings.HasSuffix(strings.TrimSpace(s), "%") {
				v, err := parseFraction(s)
				switch {
				case err != nil:
					problem("rate", "%v", err)
				case v <= 0 || v >= 1:
					problem("rate", "%s is out of range; a degraded link runs at more than 0%% and less than 100%% of its rate", s)
				}
				f.RateFactor = v
			} else if v, err := units.ParseRate(s); err != nil {
				problem("rate", "%v; or a fraction of the link's rate such as 25%%", err)
			} else if v == 0 {
				problem("rate", "must be greater than 0; to take links down use kind: down")
			} else if autoRate {
				problem("rate", "with rate: auto a degraded link's rate must be a fraction of its rate, such as 25%%: link rates are known only after calibration")
			} else {
				f.RateBps = v
			}
		} else if nodes["rate"] == nil {
			pr.Add(w.Pos(), yamldoc.JoinField(field, "rate"), "missing; a degrade fault needs rate: the new rate (25Mbit) or a fraction of the current one (25%%)")
		}
	}

	// What it applies to.
	if v := nodes["random"]; v != nil {
		f.at.random = w.Val("random")
		if r, ok := w.Integer(v, "random", "a number of links or switches to pick at random"); ok {
			if r < 1 {
				problem("random", "%d is out of range; pick at least 1", r)
			} else {
				f.Random = r
			}
		}
	}
	if f.Kind == SwitchDown {
		l.faultSwitches(&f, nodes, w, t, scalar, problem)
	} else {
		l.faultLinks(&f, nodes, w, t, scalar, problem)
	}
	return f, pr.Len() == before && len(w.Problems()) == 0
}

// faultLinks decodes links: and stage: and checks the selection.
func (l *loader) faultLinks(f *Fault, nodes map[string]*yaml.Node, w *yamldoc.Walker, t *topology.Topology,
	scalar func(key, want string) (string, bool), problem func(key, format string, args ...any)) {
	if v := nodes["links"]; v != nil {
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
				problem(key, "%v", err)
				return
			}
			if j, dup := seen[link.Name]; dup {
				problem(key, "%s is listed twice (also links[%d])", link.Name, j)
				return
			}
			seen[link.Name] = i
			f.Links = append(f.Links, link.Name)
			f.at.links = append(f.at.links, yamldoc.PosOf(item))
		})
	}
	if s, ok := scalar("stage", "a stage such as agg-core"); ok {
		f.Stage = topology.Stage(s)
		if t != nil {
			if valid := topology.Stages(t.Kind); !slices.Contains(valid, f.Stage) {
				problem("stage", "%q is not a stage of a %s (valid: %s)", s, t.Kind, joinNames(valid))
				f.Stage = ""
			}
		}
	}
	switch {
	case isEmptyList(nodes["links"]):
		problem("links", "empty; list the links, e.g. [e0-0~a0-1]")
	case nodes["links"] != nil && nodes["stage"] != nil:
		problem("stage", "give either links (and random to pick some of them) or stage, not both")
	case nodes["links"] == nil && nodes["stage"] == nil && nodes["random"] == nil:
		problem("", "names no links; give links: [e0-0~a0-1], stage: agg-core, or random: N (N random links above the hosts)")
	}
	if t != nil && f.Random > 0 {
		if pool := len(linkPool(f, t)); f.Random > pool {
			problem("random", "%d is more than the %d links to pick from (%s)", f.Random, pool, poolName(f))
		}
	}
}

// faultSwitches decodes switches: and layer: and checks the selection.
func (l *loader) faultSwitches(f *Fault, nodes map[string]*yaml.Node, w *yamldoc.Walker, t *topology.Topology,
	scalar func(key, want string) (string, bool), problem func(key, format string, args ...any)) {
	if v := nodes["switches"]; v != nil {
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
					problem(key, "no switch named %q; %s", name, t.Inventory(false))
					return
				case !n.Role.IsSwitch():
					problem(key, "%s is a host; to take its link down use kind: down with links: [%s~%s]", name, name, t.Peer(n.Ports[0]).Node)
					return
				}
			}
			if j, dup := seen[name]; dup {
				problem(key, "%s is listed twice (also switches[%d])", name, j)
				return
			}
			seen[name] = i
			f.Switches = append(f.Switches, name)
		})
	}
	if s, ok := scalar("layer", "a switch layer such as agg"); ok {
		f.Layer = topology.Role(s)
		if t != nil {
			if valid := switchRoles(t.Kind); !slices.Contains(valid, f.Layer) {
				problem("layer", "%q is not a switch layer of a %s (valid: %s)", s, t.Kind, joinNames(valid))
				f.Layer = ""
			}
		}
	}
	switch {
	case isEmptyList(nodes["switches"]):
		problem("switches", "empty; list the switches, e.g. [a0-1]")
	case nodes["switches"] != nil && nodes["layer"] != nil:
		problem("layer", "give either switches (and random to pick some of them) or layer with random, not both")
	case nodes["layer"] != nil && nodes["random"] == nil:
		problem("layer", "would fail every %s switch; add random: N to fail N of them", f.Layer)
	case nodes["switches"] == nil && nodes["random"] == nil:
		problem("", "names no switches; give switches: [a0-1], or random: N with an optional layer")
	}
	if t != nil && f.Random > 0 {
		if pool := len(switchPool(f, t)); f.Random > pool {
			problem("random", "%d is more than the %d switches to pick from", f.Random, pool)
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

func faultKindNames() string { return joinNames(FaultKinds) }

// joinNames lists names for "(valid: ...)".
func joinNames[T ~string](vs []T) string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = string(v)
	}
	return strings.Join(names, ", ")
}
