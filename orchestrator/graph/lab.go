package graph

import (
	"context"
	"fmt"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/orchestrator/fabric"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/switchd"
)

// FromLab is the graph of a lab that is up: its links' state (failed on
// purpose, or an interface down or missing) and, with the eBPF data
// plane, every link's counters per direction.
func FromLab(ctx context.Context, store *lab.Store, st *lab.State) (*Graph, error) {
	if st.Phase != lab.PhaseUp {
		return nil, fmt.Errorf("graph: lab %q is %s, not up", st.Name, st.Phase)
	}
	t := st.Topology
	g := FromTopology(t)
	g.Title = fmt.Sprintf("lab %s: %s", st.Name, t)
	g.SetState(switchd.FailedSet(st.Failed), InterfacesDown(ctx, store, st))
	if st.DataPlane.DataPlane != switchd.DataPlaneBPF {
		return g, nil
	}
	stats, err := store.Control(st).Stats()
	if err != nil {
		return nil, fmt.Errorf("graph: lab %q: %w", st.Name, err)
	}
	g.SetCounters(t, stats)
	return g, nil
}

// InterfacesDown names the links of a lab with an interface down or
// missing, as the kernel says now (every namespace is asked).
func InterfacesDown(ctx context.Context, store *lab.Store, st *lab.State) map[string]bool {
	live := fabric.Inspect(ctx, st.Topology, store.Namer(st.Name), 0)
	down := map[string]bool{}
	for _, l := range st.Topology.Links {
		for _, ep := range []topology.Endpoint{l.A, l.B} {
			if i, ok := live[ep.Node].Interfaces[ep.Ifname]; !ok || !i.Up() {
				down[l.Name] = true
			}
		}
	}
	return down
}

// SetCounters gives every link its counters per direction from the
// switches' port counters. A direction's packets and bytes are what the
// sending switch port sent, or, from a host, what the receiving switch
// port received; its drops are the sender's egress queue drops and the
// receiver's ingress drops for corruption and a failed link.
func (g *Graph) SetCounters(t *topology.Topology, stats []switchd.PortStats) {
	type key struct {
		sw   string
		port int
	}
	by := map[key]*switchd.PortStats{}
	for i := range stats {
		by[key{stats[i].Switch, stats[i].Port}] = &stats[i]
	}
	dir := func(from, to *topology.Endpoint) *Direction {
		s, r := by[key{from.Node, from.Port}], by[key{to.Node, to.Port}]
		if s == nil && r == nil {
			return nil
		}
		d := &Direction{}
		if s != nil {
			d.Packets, d.Bytes, d.DropQueue = s.Counters.TxPackets, s.Counters.TxBytes, s.Counters.DropBuffer
		} else {
			d.Packets, d.Bytes = r.Counters.RxPackets, r.Counters.RxBytes
		}
		if r != nil {
			d.DropLoss, d.DropDown = r.Counters.DropCorrupt, r.Counters.DropLinkDown
		}
		d.Drops = d.DropQueue + d.DropLoss + d.DropDown
		return d
	}
	for i := range g.Links {
		l := &t.Links[i]
		g.Links[i].Up = dir(&l.A, &l.B)
		g.Links[i].Down = dir(&l.B, &l.A)
	}
	g.Stats = true
}
