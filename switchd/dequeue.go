package switchd

import (
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/ftlab/ftlab/bpf"
	"github.com/ftlab/ftlab/internal/topology"
)

// PortMark is the skb mark tc_shaped stamps on packets queued for port
// of the node at index node in the topology: the lab's tag (from its pin
// root, unique per lab) in the top byte and node and port below, so a
// dequeue monitor tells every port of every running lab apart.
func PortMark(pinRoot string, node, port int) uint32 {
	id := uint32(node)*uint32(bpf.MaxPorts) + uint32(port) + 1
	return MarkTag(pinRoot)<<24 | id&0xffffff
}

// MarkTag is the top byte of every port mark of the lab pinned at pinRoot,
// 1 to 128: labs up at the same time must have different tags, or their
// dequeue monitors see each other's packets (lab names can be chosen for
// it: runner's lanes do).
func MarkTag(pinRoot string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(pinRoot))
	return h.Sum32()&0x7f + 1 // never 0, never 0xff..
}

// HostMark is the mark a host's agent puts on everything it sends
// (SO_MARK), so the dequeue monitor follows the host's egress queue too;
// 0 for a node that is not a host of t.
func HostMark(t *topology.Topology, pinRoot, host string) uint32 {
	for i := range t.Nodes {
		if t.Nodes[i].Name == host && t.Nodes[i].Role == topology.RoleHost {
			return PortMark(pinRoot, i, 0)
		}
	}
	return 0
}

// DequeueWatch measures the real egress queues (HTB qdiscs) of a shaped
// lab's ports from WatchDequeues until Close: how fast each link served
// packets while it had them queued. Switch ports are marked by the data
// plane, host ports by their agents (HostMark). See bpf.DequeueMonitor.
type DequeueWatch struct {
	mon     *bpf.DequeueMonitor
	topo    *topology.Topology
	marks   map[portRef]uint32
	watched []watchedPort
}

// watchedPort is one mark the monitor counts: a switch port's, with its
// plane port for the real-queue entry, or a host's alone.
type watchedPort struct {
	mark, planePort uint32
	isSwitch        bool
}

type portRef struct {
	node string
	port int
}

// WatchDequeues starts measuring every switch port's egress queue. Only
// the eBPF data plane in shaped mode queues packets in qdiscs. From then
// until Close, the switches' link models also see their real queues
// (bpf.DequeueMonitor.WatchPort).
func (l *Lab) WatchDequeues() (*DequeueWatch, error) {
	if l.Config.DataPlane != DataPlaneBPF || l.Config.Mode != ModeShaped {
		return nil, fmt.Errorf("dequeue monitor: only the eBPF data plane in shaped mode queues in qdiscs")
	}
	plane, err := bpf.OpenPlane(PlaneDir(l.PinRoot))
	if err != nil {
		return nil, fmt.Errorf("dequeue monitor: %w", err)
	}
	// The monitor keeps its own reference to the plane's map.
	defer plane.Close()
	index := switchIndexes(l.Topo)
	marks := map[portRef]uint32{}
	for i := range l.Topo.Nodes {
		n := &l.Topo.Nodes[i]
		for p := range n.Ports {
			marks[portRef{n.Name, p}] = PortMark(l.PinRoot, i, p)
		}
	}
	w := &DequeueWatch{topo: l.Topo, marks: marks}
	for ref, m := range marks {
		i, isSwitch := index[ref.node]
		wp := watchedPort{mark: m, isSwitch: isSwitch}
		if isSwitch {
			if wp.planePort, err = plane.Switch(i).PlanePort(ref.port); err != nil {
				return nil, fmt.Errorf("dequeue monitor: %s port %d: %w", ref.node, ref.port, err)
			}
		}
		w.watched = append(w.watched, wp)
	}
	if w.mon, err = bpf.StartDequeueMonitor(len(marks), plane); err != nil {
		return nil, err
	}
	if err := w.Restart(); err != nil {
		return nil, errors.Join(err, w.mon.Close())
	}
	return w, nil
}

// Restart measures every port from zero again, as a new watch of the same
// lab would, without loading the monitor again (a load is most of a
// watch's 30-40 ms). The lab's data plane must be the one the watch was
// started on.
func (w *DequeueWatch) Restart() error {
	for _, p := range w.watched {
		var err error
		if p.isSwitch {
			err = w.mon.WatchPort(p.mark, p.planePort)
		} else {
			err = w.mon.Watch(p.mark)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Fill sets the Dequeue statistics of every port in ports.
func (w *DequeueWatch) Fill(ports []PortStats) error {
	for i := range ports {
		m, ok := w.marks[portRef{ports[i].Switch, ports[i].Port}]
		if !ok {
			continue
		}
		d, err := w.mon.Stats(m)
		if err != nil {
			return err
		}
		ports[i].Dequeue = &d
	}
	return nil
}

// HostPorts returns the hosts' egress ports (direction H->E or H->L) with
// what the monitor measured of them; their counters are zero (hosts run
// no data plane).
func (w *DequeueWatch) HostPorts() ([]PortStats, error) {
	var out []PortStats
	for _, n := range w.topo.Hosts() {
		p := n.Ports[0]
		link := &w.topo.Links[p.Link]
		peer, _ := w.topo.Node(w.topo.Peer(p).Node)
		params, _ := egress(w.topo, p)
		d, err := w.mon.Stats(w.marks[portRef{n.Name, 0}])
		if err != nil {
			return nil, err
		}
		out = append(out, PortStats{Switch: n.Name, Port: 0, Ifname: link.End(p.Side).Ifname, Link: link.Name,
			Direction: Direction(n.Role, peer.Role), Stage: link.Stage, Params: params, Dequeue: &d})
	}
	return out, nil
}

// Close stops measuring. Safe to call more than once.
func (w *DequeueWatch) Close() error { return w.mon.Close() }
