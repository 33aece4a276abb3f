package switchd

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vishvananda/netlink"

	"github.com/ftlab/ftlab/bpf"
	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/switchd/shaping"
)

// PortStats are one switch port's counters and, for its egress direction,
// the link model's queue statistics and the qdisc's own counters.
type PortStats struct {
	Switch string `json:"switch"`
	Port   int    `json:"port"`
	Ifname string `json:"ifname"`
	Link   string `json:"link"`
	// Direction of the traffic leaving this port, e.g. "E->A", "C->A".
	Direction string           `json:"direction"`
	Stage     topology.Stage   `json:"stage"`
	Counters  bpf.PortCounters `json:"counters"`
	Queue     bpf.QueueStats   `json:"queue"`
	Qdisc     *shaping.Stats   `json:"qdisc,omitempty"`
	// Dequeue is how the real egress queue drained (shaped mode, when a
	// DequeueWatch ran; see Lab.WatchDequeues).
	Dequeue *bpf.DequeueStats   `json:"dequeue,omitempty"`
	Params  topology.LinkParams `json:"params"`
}

// roleLetter abbreviates a role for direction labels.
func roleLetter(r topology.Role) string {
	switch r {
	case topology.RoleHost:
		return "H"
	case topology.RoleEdge:
		return "E"
	case topology.RoleAgg:
		return "A"
	case topology.RoleCore:
		return "C"
	case topology.RoleLeaf:
		return "L"
	case topology.RoleSpine:
		return "S"
	}
	return strings.ToUpper(string(r))
}

// Direction is the label of traffic from a node of role from to one of
// role to, e.g. Direction(RoleEdge, RoleAgg) = "E->A".
func Direction(from, to topology.Role) string { return roleLetter(from) + "->" + roleLetter(to) }

// pathOrder lists the directions along a packet's path: up the tree, then
// down (fat tree, then leaf-spine).
var pathOrder = []string{"H->E", "E->A", "A->C", "C->A", "A->E", "E->H", "H->L", "L->S", "S->L", "L->H"}

// DirectionRank orders direction labels along a packet's path, for tables
// and plots; unknown labels sort last.
func DirectionRank(d string) int {
	if i := slices.Index(pathOrder, d); i >= 0 {
		return i
	}
	return len(pathOrder)
}

// Stats reads every switch port's counters (eBPF data plane).
func (l *Lab) Stats() ([]PortStats, error) {
	if l.Config.DataPlane != DataPlaneBPF {
		return nil, fmt.Errorf("per-port counters need the eBPF data plane (this lab runs %s)", l.Config.DataPlane)
	}
	var out []PortStats
	err := l.withPlane(func(switchOf func(string) *bpf.Switch) error {
		for _, n := range l.Topo.Switches() {
			sw := switchOf(n.Name)
			first := len(out)
			for i, p := range n.Ports {
				link := &l.Topo.Links[p.Link]
				self := link.End(p.Side)
				peer, _ := l.Topo.Node(l.Topo.Peer(p).Node)
				params, _ := egress(l.Topo, p)
				ps := PortStats{
					Switch: n.Name, Port: i, Ifname: self.Ifname, Link: link.Name,
					Direction: Direction(n.Role, peer.Role), Stage: link.Stage, Params: params,
				}
				var err error
				if ps.Counters, err = sw.PortCounters(i); err != nil {
					return err
				}
				if ps.Queue, err = sw.QueueStats(i); err != nil {
					return err
				}
				out = append(out, ps)
			}
			if l.Config.Mode == ModeShaped {
				if err := l.readQdiscs(n.Name, out[first:]); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readQdiscs fills the qdisc statistics of one switch's ports, read in
// its namespace.
func (l *Lab) readQdiscs(node string, ports []PortStats) error {
	return nsutil.DoNamed(l.Namespace(node), func() error {
		h, err := netlink.NewHandle()
		if err != nil {
			return err
		}
		defer h.Close()
		for i := range ports {
			nl, err := h.LinkByName(ports[i].Ifname)
			if err != nil {
				return err
			}
			q, err := shaping.Read(h, nl)
			if err != nil {
				return err
			}
			ports[i].Qdisc = &q
		}
		return nil
	})
}

// ResetStats zeroes every switch port's counters and queue statistics.
func (l *Lab) ResetStats() error {
	if l.Config.DataPlane != DataPlaneBPF {
		return nil
	}
	return l.withPlane(func(switchOf func(string) *bpf.Switch) error {
		for _, n := range l.Topo.Switches() {
			sw := switchOf(n.Name)
			for i := range n.Ports {
				if err := sw.ResetStats(i); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// Counters are one port's data plane counters.
type Counters = bpf.PortCounters
