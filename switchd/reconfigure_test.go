package switchd_test

import (
	"context"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vishvananda/netlink"

	"github.com/ftlab/ftlab/bpf"
	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/testlab"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/switchd"
	"github.com/ftlab/ftlab/switchd/routing"
	"github.com/ftlab/ftlab/switchd/shaping"
)

// dataPlaneState is everything of a lab's eBPF data plane a cell's
// results could depend on, read back from the kernel.
type dataPlaneState struct {
	Switches map[string]switchState
	Qdiscs   map[string]qdiscState // node/ifname -> the port's root qdisc
}

// qdiscState is what results read of a port's HTB tree (drops, backlog)
// and the rates it serves at. The kernel's cumulative sent counts are
// not in it: no result reads them, and Reconfigure keeps a clean tree.
type qdiscState struct {
	Installed          bool
	Drops, BacklogPkts uint32
	BacklogBytes       uint32
	ClassRates         map[uint32]uint64 // class handle -> rate, bytes/s
	TxQLen             int
}

type switchState struct {
	Config   bpf.Config
	Ports    []bpf.PortConfig
	Counters []bpf.PortCounters
	Queues   []bpf.QueueStats
	Routes   map[netip.Prefix]bpf.Route
	Valid    []uint64 // valid sets of the routing table, and the blackhole
	Pointers map[bpf.PointerKey]pointerState
	RR       uint32
}

type pointerState struct {
	Counter uint32
	Order   []int
}

// readState reads l's data plane, for the policies and pipes of cfg.
func readState(t *testing.T, l *lab, cfg switchd.Config) dataPlaneState {
	t.Helper()
	tables, err := routing.Compute(l.topo, nil)
	if err != nil {
		t.Fatal(err)
	}
	plane, err := bpf.OpenPlane(switchd.PlaneDir(l.pinRoot))
	if err != nil {
		t.Fatal(err)
	}
	defer plane.Close()
	routes, err := plane.Routes()
	if err != nil {
		t.Fatal(err)
	}
	st := dataPlaneState{Switches: map[string]switchState{}, Qdiscs: map[string]qdiscState{}}
	for i, n := range l.topo.Switches() {
		sw, tab := plane.Switch(i), tables[n.Name]
		s := switchState{Config: sw.Config(), Routes: routes[i], Pointers: map[bpf.PointerKey]pointerState{}}
		for p := range n.Ports {
			pc, err := sw.Port(p)
			must(t, err)
			pc.Mark = 0 // names the lab, not its state
			c, err := sw.PortCounters(p)
			must(t, err)
			q, err := sw.QueueStats(p)
			must(t, err)
			s.Ports, s.Counters, s.Queues = append(s.Ports, pc), append(s.Counters, c), append(s.Queues, q)
		}
		for v := range len(tab.ValidSets) + 1 {
			b, err := sw.GroupValid(v)
			must(t, err)
			s.Valid = append(s.Valid, b)
		}
		pipes := max(1, int(s.Config.Pipes))
		if s.Config.Policy != bpf.PolicyPofan {
			pipes = 1
		}
		for g := range tab.Pointers {
			for _, class := range []bpf.Class{bpf.ClassData, bpf.ClassAck} {
				for pipe := range pipes {
					k := bpf.PointerKey{Group: g, Class: class, Pipe: pipe}
					c, order, err := sw.Pointer(k)
					must(t, err)
					s.Pointers[k] = pointerState{c, order}
				}
			}
		}
		s.RR, err = sw.RRCounter()
		must(t, err)
		st.Switches[n.Name] = s
	}
	for i := range l.topo.Nodes {
		n := &l.topo.Nodes[i]
		err := nsutil.DoNamed(l.name(n.Name), func() error {
			h, err := netlink.NewHandle()
			if err != nil {
				return err
			}
			defer h.Close()
			for _, p := range n.Ports {
				ifname := l.topo.Links[p.Link].End(p.Side).Ifname
				link, err := h.LinkByName(ifname)
				if err != nil {
					return err
				}
				q, err := shaping.Read(h, link)
				if err != nil {
					return err
				}
				qs := qdiscState{Installed: q.Installed, Drops: q.Drops, BacklogPkts: q.BacklogPkts, BacklogBytes: q.BacklogBytes,
					ClassRates: map[uint32]uint64{}, TxQLen: link.Attrs().TxQLen}
				classes, err := h.ClassList(link, netlink.HANDLE_NONE)
				if err != nil {
					return err
				}
				for _, c := range classes {
					if htb, ok := c.(*netlink.HtbClass); ok {
						qs.ClassRates[htb.Handle] = htb.Rate
					}
				}
				st.Qdiscs[n.Name+"/"+ifname] = qs
			}
			return nil
		})
		must(t, err)
	}
	return st
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestReconfigureStartsClean runs two cells back to back on one lab: the
// first carries traffic and every kind of fault (a failed link and the
// reconvergence around it, corruption, a degraded rate), which leaves
// counters, queues, pointers, routes and link state behind; then the lab
// is reconfigured for a second cell with other policies, seed and rates.
// The second cell must start from exactly the state a lab freshly built
// for it has.
func TestReconfigureStartsClean(t *testing.T) {
	testlab.RequireRoot(t)
	ctx := context.Background()
	cell1 := switchd.Config{Mode: switchd.ModeShaped, EdgePolicy: "ofan", AggPolicy: "ofan", Seed: 1}
	a := newLab(t, "fattree-k4", cell1)
	ctl := a.control()

	// Cell 1: traffic through every switch, then faults.
	if res := a.pingAll(t); res.OK != res.Total {
		t.Fatalf("cell 1 pingall %d/%d", res.OK, res.Total)
	}
	a.send(t, "h0-0-0", "h3-1-1", 200)
	link, _, ok := a.topo.LinkBetween("e0-0", "a0-0")
	if !ok {
		t.Fatal("no link e0-0~a0-0")
	}
	must(t, ctl.SetLinkUp(link, false))
	must(t, ctl.Reconverge(ctx, nil, map[int]bool{link.ID: true}))
	other, _, _ := a.topo.LinkBetween("h1-0-0", "e1-0")
	must(t, ctl.SetCorruption(other, topology.SideA, 0.5))
	must(t, ctl.SetRate(other, topology.SideB, 1_000_000))
	// Into the degraded link: packets still wait in its HTB at the end.
	a.send(t, "h2-1-0", "h1-0-0", 100)
	dirty := readState(t, a, cell1)
	if q := dirty.Qdiscs["e1-0/h1-0-0"]; q.BacklogPkts == 0 {
		t.Logf("nothing queued at e1-0 toward h1-0-0 after the burst (%+v): the tree's renewal is not exercised", q)
	}
	if dirty.Switches["e0-0"].Counters[0] == (bpf.PortCounters{}) {
		t.Fatal("cell 1 left no counters on e0-0: the test dirtied nothing")
	}

	// Cell 2 on the same lab: other policies, seed, trimming and rates.
	cell2 := switchd.Config{Mode: switchd.ModeShaped, EdgePolicy: "pofan", AggPolicy: "ecmp", Seed: 7, Trim: true}.WithDefaults()
	topo2 := testlab.Topology(t, "fattree-k4")
	setRates(topo2, 50_000_000, topology.StageEdgeAgg)
	re := &switchd.Lab{Topo: topo2, Config: cell2, Namespace: a.name, PinRoot: a.pinRoot}
	inPlace, err := re.Reconfigure(ctx)
	must(t, err)
	if !inPlace {
		t.Fatal("Reconfigure did not reuse the installed plane")
	}
	a.topo, a.cfg = topo2, cell2
	got := readState(t, a, cell2)

	// The reference: a lab built for cell 2 from scratch.
	fresh := testlab.Topology(t, "fattree-k4")
	setRates(fresh, 50_000_000, topology.StageEdgeAgg)
	b := newLabOf(t, fresh, cell2)
	want := readState(t, b, cell2)
	if d := cmp.Diff(want, got, cmp.Comparer(func(x, y netip.Addr) bool { return x == y })); d != "" {
		t.Errorf("cell 2's data plane after Reconfigure differs from a fresh install (-fresh +reconfigured):\n%s", d)
	}
	if res := a.pingAll(t); res.OK != res.Total {
		t.Errorf("cell 2 pingall %d/%d: %v", res.OK, res.Total, res.Failed())
	}
}
