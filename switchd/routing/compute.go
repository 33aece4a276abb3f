package routing

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/ftlab/ftlab/internal/topology"
)

// maxUplinks is the widest valid set a uint64 bitmap holds.
const maxUplinks = 64

// Compute returns the forwarding table of every switch of t, keyed by
// switch name, with the links whose IDs are true in failed down in both
// directions. t is not modified.
func Compute(t *topology.Topology, failed map[int]bool) (map[string]*Table, error) {
	if t == nil {
		return nil, errors.New("routing: nil topology")
	}
	for id, down := range failed {
		if down && (id < 0 || id >= len(t.Links)) {
			return nil, fmt.Errorf("routing: failed link %d does not exist (%s has links 0..%d)", id, t.Name, len(t.Links)-1)
		}
	}
	f := &fabric{top: t, failed: failed}
	switch t.Kind {
	case topology.FatTree:
		return f.fatTree()
	case topology.LeafSpine:
		return f.leafSpine()
	}
	return nil, fmt.Errorf("routing: unknown fabric kind %q", t.Kind)
}

// fabric is a topology with its failed links.
type fabric struct {
	top    *topology.Topology
	failed map[int]bool
}

func (f *fabric) alive(link int) bool { return !f.failed[link] }

// port is one port of a switch as routing sees it.
type port struct {
	num   int
	link  int
	alive bool
	peer  *topology.Node
}

// ports lists a node's ports in port order.
func (f *fabric) ports(n *topology.Node) ([]port, error) {
	out := make([]port, len(n.Ports))
	for i, p := range n.Ports {
		ep := f.top.Peer(p)
		peer, ok := f.top.Node(ep.Node)
		if !ok {
			return nil, fmt.Errorf("routing: %s port %d: peer %q not in topology", n.Name, i, ep.Node)
		}
		out[i] = port{num: i, link: p.Link, alive: f.alive(p.Link), peer: peer}
	}
	return out, nil
}

// split separates a switch's ports into downlinks (towards the hosts) and
// uplinks, each in port order, by comparing tiers rather than trusting
// port numbers.
func split(n *topology.Node, ports []port) (down, up []port, err error) {
	for _, p := range ports {
		if p.peer.Role.Tier() > n.Role.Tier() {
			up = append(up, p)
		} else {
			down = append(down, p)
		}
	}
	if len(up) > maxUplinks {
		return nil, nil, fmt.Errorf("routing: %s has %d uplinks, at most %d supported", n.Name, len(up), maxUplinks)
	}
	return down, up, nil
}

// newBuilder starts the table of switch n with its identity route.
func newBuilder(n *topology.Node, up []port, pointers int) *builder {
	t := &Table{Switch: n.Name, Pointers: pointers}
	for _, p := range up {
		t.Uplinks = append(t.Uplinks, p.num)
	}
	b := &builder{t: t}
	b.local(netip.PrefixFrom(n.Addr, 32))
	return b
}

// mask sets bit i for every uplink i that is alive and satisfies ok.
func mask(up []port, ok func(peer *topology.Node) bool) uint64 {
	var m uint64
	for i, p := range up {
		if p.alive && ok(p.peer) {
			m |= 1 << i
		}
	}
	return m
}

func prefix(a, b, c, d byte, bits int) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{a, b, c, d}), bits)
}

// grid allocates an x by y by z table of booleans, used to record which
// links are up by the positions of their two ends.
func grid(x, y, z int) [][][]bool {
	g := make([][][]bool, x)
	for i := range g {
		g[i] = make([][]bool, y)
		for j := range g[i] {
			g[i][j] = make([]bool, z)
		}
	}
	return g
}

// tables builds every switch's table with build, handing it the switch's
// downlink and uplink ports.
func (f *fabric) tables(build func(n *topology.Node, down, up []port) (*Table, error)) (map[string]*Table, error) {
	tables := make(map[string]*Table)
	for _, n := range f.top.Switches() {
		ports, err := f.ports(n)
		if err != nil {
			return nil, err
		}
		down, up, err := split(n, ports)
		if err != nil {
			return nil, err
		}
		if tables[n.Name], err = build(n, down, up); err != nil {
			return nil, err
		}
	}
	return tables, nil
}
