package routing

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ftlab/ftlab/internal/topology"
)

// oracle answers reachability questions from the graph alone, independently
// of how Compute reasons: which hosts each node reaches going only down,
// and going up first (valley-free: up zero or more tiers, then down).
// A walk that repeats a node can always be shortened to a simple
// valley-free path, so sets are enough; no path enumeration is needed.
type oracle struct {
	top       *topology.Topology
	failed    map[int]bool
	hostIdx   map[string]int
	downReach map[string][]bool
	upReach   map[string][]bool
}

func newOracle(top *topology.Topology, failed map[int]bool) *oracle {
	o := &oracle{top: top, failed: failed, hostIdx: map[string]int{},
		downReach: map[string][]bool{}, upReach: map[string][]bool{}}
	for i, h := range top.Hosts() {
		o.hostIdx[h.Name] = i
	}
	return o
}

// neighbours lists the peers of n over live links, higher or lower tier.
func (o *oracle) neighbours(n *topology.Node, higher bool) []*topology.Node {
	var out []*topology.Node
	for _, p := range n.Ports {
		if o.failed[p.Link] {
			continue
		}
		peer, _ := o.top.Node(o.top.Peer(p).Node)
		if (peer.Role.Tier() > n.Role.Tier()) == higher {
			out = append(out, peer)
		}
	}
	return out
}

func (o *oracle) down(n *topology.Node) []bool {
	if r, ok := o.downReach[n.Name]; ok {
		return r
	}
	r := make([]bool, len(o.hostIdx))
	if n.Role == topology.RoleHost {
		r[o.hostIdx[n.Name]] = true
	}
	for _, peer := range o.neighbours(n, false) {
		for i, ok := range o.down(peer) {
			r[i] = r[i] || ok
		}
	}
	o.downReach[n.Name] = r
	return r
}

func (o *oracle) up(n *topology.Node) []bool {
	if r, ok := o.upReach[n.Name]; ok {
		return r
	}
	r := slices.Clone(o.down(n))
	for _, peer := range o.neighbours(n, true) {
		for i, ok := range o.up(peer) {
			r[i] = r[i] || ok
		}
	}
	o.upReach[n.Name] = r
	return r
}

// expect is what switch n should do with a packet for host h, in render's
// notation: down to the neighbour below that reaches h, else up to every
// neighbour above that reaches h valley-free, else drop.
func (o *oracle) expect(n, h *topology.Node) string {
	hi := o.hostIdx[h.Name]
	var below []string
	for _, peer := range o.neighbours(n, false) {
		if o.down(peer)[hi] {
			below = append(below, peer.Name)
		}
	}
	if len(below) > 0 {
		return "down " + strings.Join(below, " ")
	}
	s := "up"
	for _, peer := range o.neighbours(n, true) {
		if o.up(peer)[hi] {
			s += " " + peer.Name
		}
	}
	if s == "up" {
		return "noroute"
	}
	return s
}

// walker forwards a packet hop by hop through the tables, following every
// uplink of every valid set, and reports all outcomes.
type walker struct {
	top    *topology.Topology
	tables map[string]*Table
	failed map[int]bool
	memo   map[walkKey]string
}

type walkKey struct {
	sw        string
	goingDown bool
	dst       string
}

// outcomes of a walk, possibly several joined by "+" when branches differ.
const (
	delivered = "delivered"
	dropped   = "dropped"
)

// walk returns the sorted distinct outcomes of a packet for host dst that
// arrives at switch sw, going down already or not.
func (w *walker) walk(sw string, goingDown bool, dst *topology.Node, hops int) string {
	key := walkKey{sw, goingDown, dst.Name}
	if r, ok := w.memo[key]; ok {
		return r
	}
	if hops > 8 {
		return "loop"
	}
	tb := w.tables[sw]
	r, ok := tb.Lookup(dst.Addr)
	n, _ := w.top.Node(sw)
	var next []int // ports to follow
	switch {
	case !ok || r.Kind == NoRoute:
		return w.save(key, dropped)
	case r.Kind == Local:
		return w.save(key, "delivered to switch "+sw)
	case r.Kind == Down:
		next = []int{r.Port}
	case goingDown:
		return w.save(key, "valley at "+sw)
	default:
		for i, port := range tb.Uplinks {
			if tb.Valid(r)>>i&1 == 1 {
				next = append(next, port)
			}
		}
	}
	var outs []string
	for _, port := range next {
		pr := n.Ports[port]
		peer := w.top.Peer(pr).Node
		var out string
		switch {
		case w.failed[pr.Link]:
			out = "sent on dead link " + w.top.Links[pr.Link].Name
		case peer == dst.Name:
			out = delivered
		case w.tables[peer] == nil:
			out = "delivered to wrong host " + peer
		default:
			out = w.walk(peer, r.Kind == Down, dst, hops+1)
		}
		outs = append(outs, strings.Split(out, "+")...)
	}
	slices.Sort(outs)
	return w.save(key, strings.Join(slices.Compact(outs), "+"))
}

func (w *walker) save(key walkKey, out string) string {
	w.memo[key] = out
	return out
}

// randomFailures fails each inter-switch or host link with probability pl
// and each switch with probability ps.
func randomFailures(top *topology.Topology, rng *rand.Rand, pl, ps float64) map[int]bool {
	failed := map[int]bool{}
	for i := range top.Links {
		if rng.Float64() < pl {
			failed[i] = true
		}
	}
	for _, n := range top.Switches() {
		if rng.Float64() < ps {
			for _, p := range n.Ports {
				failed[p.Link] = true
			}
		}
	}
	return failed
}

// TestRandomFailures is the property test: for random failure sets,
//   - every switch's decision for every host equals the oracle's: Down
//     where the host is below, else Up over exactly the uplinks that still
//     lead to it valley-free (so no valid set holds a dead end, none misses
//     a usable uplink, and no dead uplink is ever valid), else NoRoute.
//     Host links count as up here except at the host's own edge: routes are
//     per rack, and a dead host is dropped at its edge (package doc);
//   - a packet walked hop by hop along every choice of every valid set is
//     delivered to its destination host iff a valley-free path exists from
//     its source, and otherwise dropped — never looping, bouncing back up,
//     using a dead link or reaching another host;
//   - tables are well formed.
func TestRandomFailures(t *testing.T) {
	type fabric struct {
		name string
		top  *topology.Topology
	}
	fabrics := []fabric{
		{"fattree k=4", newFatTree(t, 4)},
		{"fattree k=6", newFatTree(t, 6)},
		{"fattree k=8", newFatTree(t, 8)},
		{"leafspine 6x4x2", newLeafSpine(t, 6, 4, 2)},
		{"leafspine 5x1x1", newLeafSpine(t, 5, 1, 1)},
	}
	runs := 30
	if testing.Short() {
		runs = 5
	}
	rng := rand.New(rand.NewPCG(2610, 7230))
	for _, f := range fabrics {
		t.Run(f.name, func(t *testing.T) {
			var pairs, reachable, partial int
			for run := range runs {
				pl := []float64{0.02, 0.1, 0.3}[run%3]
				ps := []float64{0, 0.05}[run%2]
				failed := randomFailures(f.top, rng, pl, ps)
				tables := compute(t, f.top, failed)
				checkWellFormed(t, f.top, tables)
				o := newOracle(f.top, failed)
				// Routes are per rack, so the tables ignore host links
				// except at the host's own edge (see the package doc):
				// compare them with an oracle that sees every host link up.
				ro := newOracle(f.top, withoutHostLinks(f.top, failed))
				for _, sw := range f.top.Switches() {
					for _, h := range f.top.Hosts() {
						want := ro.expect(sw, h)
						if failed[h.Ports[0].Link] && f.top.Peer(h.Ports[0]).Node == sw.Name {
							want = "noroute"
						}
						if got := render(f.top, tables, sw.Name, h.Addr.String()); got != want {
							t.Fatalf("run %d (failed %v): %s for %s (%s): got %q, want %q",
								run, linkNames(f.top, failed), sw.Name, h.Name, h.Addr, got, want)
						}
						if want != "noroute" && strings.HasPrefix(want, "up") &&
							strings.Count(want, " ") < len(tables[sw.Name].Uplinks) {
							partial++
						}
					}
				}
				w := &walker{top: f.top, tables: tables, failed: failed, memo: map[walkKey]string{}}
				for _, src := range f.top.Hosts() {
					srcEdge := f.top.Peer(src.Ports[0])
					for _, dst := range f.top.Hosts() {
						if src == dst {
							continue
						}
						pairs++
						ok := !failed[src.Ports[0].Link] && o.up(src)[o.hostIdx[dst.Name]]
						want := dropped
						if ok {
							reachable++
							want = delivered
						}
						got := dropped
						if !failed[src.Ports[0].Link] {
							got = w.walk(srcEdge.Node, false, dst, 0)
						}
						if got != want {
							t.Fatalf("run %d (failed %v): %s -> %s: %s, want %s",
								run, linkNames(f.top, failed), src.Name, dst.Name, got, want)
						}
					}
				}
			}
			t.Logf("%d runs: %d host pairs, %d reachable valley-free, all delivered on every branch; %d (switch, host) up decisions with a partial valid set",
				runs, pairs, reachable, partial)
		})
	}
}

// withoutHostLinks returns failed minus the host links.
func withoutHostLinks(top *topology.Topology, failed map[int]bool) map[int]bool {
	out := map[int]bool{}
	for id, down := range failed {
		if l := top.Links[id]; down && l.Stage != topology.StageHostEdge && l.Stage != topology.StageHostLeaf {
			out[id] = true
		}
	}
	return out
}

// checkWellFormed checks the invariants of every table.
func checkWellFormed(t *testing.T, top *topology.Topology, tables map[string]*Table) {
	t.Helper()
	for name, tb := range tables {
		n, _ := top.Node(name)
		if tb.Switch != name {
			t.Fatalf("%s: table says %s", name, tb.Switch)
		}
		all := uint64(1)<<len(tb.Uplinks) - 1
		for i, m := range tb.ValidSets {
			if m == 0 || m&^all != 0 || (i > 0 && m <= tb.ValidSets[i-1]) {
				t.Fatalf("%s: valid sets %b not distinct, ascending, nonempty subsets of %d uplinks", name, tb.ValidSets, len(tb.Uplinks))
			}
		}
		for i, r := range tb.Routes {
			if i > 0 && !routeLess(tb.Routes[i-1], r) {
				t.Fatalf("%s: routes not sorted: %v before %v", name, tb.Routes[i-1].Prefix, r.Prefix)
			}
			switch r.Kind {
			case Up:
				if r.Pointer < 0 || r.Pointer >= tb.Pointers || r.ValidSet < 0 || r.ValidSet >= len(tb.ValidSets) || r.Port != -1 {
					t.Fatalf("%s: bad up route %+v", name, r)
				}
			case Down:
				if r.Port < 0 || r.Port >= len(n.Ports) || slices.Contains(tb.Uplinks, r.Port) || r.Pointer != -1 || r.ValidSet != -1 {
					t.Fatalf("%s: bad down route %+v", name, r)
				}
			default:
				if r.Port != -1 || r.Pointer != -1 || r.ValidSet != -1 {
					t.Fatalf("%s: bad %s route %+v", name, r.Kind, r)
				}
			}
		}
		for _, port := range tb.Uplinks {
			if peer, _ := top.Node(top.Peer(n.Ports[port]).Node); peer.Role.Tier() <= n.Role.Tier() {
				t.Fatalf("%s: uplink %d leads to %s", name, port, peer.Name)
			}
		}
	}
}

func routeLess(a, b Route) bool {
	if c := a.Prefix.Addr().Compare(b.Prefix.Addr()); c != 0 {
		return c < 0
	}
	return a.Prefix.Bits() < b.Prefix.Bits()
}

func linkNames(top *topology.Topology, failed map[int]bool) []string {
	var out []string
	for id := range top.Links {
		if failed[id] {
			out = append(out, top.Links[id].Name)
		}
	}
	return out
}
