// Package topology turns a topology file into a fully resolved fabric: every
// node with its role, position and address, every link with both endpoints'
// interface names and MACs and per-direction link parameters.
//
// The naming and addressing plan is deterministic and documented in
// docs/topology.md. It follows Al-Fares et al. ("A Scalable, Commodity Data
// Center Network Architecture", SIGCOMM 2008): host i under edge switch e of
// pod p is 10.p.e.(i+2), the edge switch itself is 10.p.e.1, aggregation
// switch a of pod p is 10.p.(k/2+a).1 and core switch (j,i) is 10.k.(j+1).(i+1).
// A switch therefore routes by prefix: 10.p.0.0/16 is pod p, 10.p.e.0/24 is
// the hosts below edge switch e.
package topology

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"
)

// Kind is the shape of a fabric.
type Kind string

const (
	// FatTree is the 3-tier k-ary fat tree: k pods of k/2 edge and k/2
	// aggregation switches, (k/2)^2 core switches, k/2 hosts per edge switch.
	FatTree Kind = "fattree"
	// LeafSpine is the 2-tier Clos: every leaf connects to every spine.
	LeafSpine Kind = "leafspine"
)

// Role is what a node does in the fabric.
type Role string

const (
	RoleHost  Role = "host"
	RoleEdge  Role = "edge"  // fat-tree tier 1 (top of rack)
	RoleAgg   Role = "agg"   // fat-tree tier 2 (aggregation)
	RoleCore  Role = "core"  // fat-tree tier 3
	RoleLeaf  Role = "leaf"  // leaf-spine tier 1 (top of rack)
	RoleSpine Role = "spine" // leaf-spine tier 2
)

// IsSwitch reports whether nodes of this role forward packets.
func (r Role) IsSwitch() bool { return r != RoleHost }

// Tier is the distance of the role from the hosts: 0 for hosts, 1 for edge
// and leaf switches, 2 for aggregation and spine switches, 3 for core.
func (r Role) Tier() int {
	switch r {
	case RoleEdge, RoleLeaf:
		return 1
	case RoleAgg, RoleSpine:
		return 2
	case RoleCore:
		return 3
	}
	return 0
}

// Stage names a layer of links. Overrides can be given per stage.
type Stage string

const (
	StageHostEdge  Stage = "host-edge"  // fat tree: host <-> edge
	StageEdgeAgg   Stage = "edge-agg"   // fat tree: edge <-> aggregation
	StageAggCore   Stage = "agg-core"   // fat tree: aggregation <-> core
	StageHostLeaf  Stage = "host-leaf"  // leaf-spine: host <-> leaf
	StageLeafSpine Stage = "leaf-spine" // leaf-spine: leaf <-> spine
)

// Stages lists the stages of a kind, from the hosts upward.
func Stages(k Kind) []Stage {
	switch k {
	case FatTree:
		return []Stage{StageHostEdge, StageEdgeAgg, StageAggCore}
	case LeafSpine:
		return []Stage{StageHostLeaf, StageLeafSpine}
	}
	return nil
}

// LinkParams are the properties of one direction of a link.
type LinkParams struct {
	RateBps     uint64 `json:"rate_bps"`     // serialization rate, bits per second
	BufferBytes uint64 `json:"buffer_bytes"` // egress queue capacity
	ECNBytes    uint64 `json:"ecn_bytes"`    // queue depth above which ECT packets get CE
	// Delay is the propagation delay a packet takes on the direction, on
	// top of serialization; Jitter bounds a random extra delay (docs/delay.md).
	Delay  time.Duration `json:"delay_ns,omitempty"`
	Jitter time.Duration `json:"jitter_ns,omitempty"`
}

// Node is one namespace of the fabric: a host or a switch.
type Node struct {
	Name string `json:"name"` // e.g. h0-1-2, e0-1, a0-1, c1-0, l3, s1
	Role Role   `json:"role"`
	// Position. Fat tree: hosts and edge switches have Pod and Edge;
	// hosts also Index (within the edge); aggregation switches Pod and
	// Index; core switches Group (the aggregation index they attach to)
	// and Index. Leaf-spine: leaves are Edge (pod 0), hosts Edge and Index,
	// spines Index. Unused fields are zero.
	Pod   int `json:"pod"`
	Edge  int `json:"edge"`
	Group int `json:"group"`
	Index int `json:"index"`
	// Addr is the node's identity address (hosts: their address; switches:
	// the address carried on every port, as on an unnumbered fabric).
	Addr netip.Addr `json:"addr"`
	// Ports are the indexes into Topology.Links of the node's links,
	// ordered by port number: for switches downlinks first, then uplinks.
	Ports []PortRef `json:"ports"`
}

// PortRef names one end of a link from a node's point of view.
type PortRef struct {
	Link int  `json:"link"` // index into Topology.Links
	Side Side `json:"side"` // which end of that link is this node
}

// Side is one end of a link: A is the lower-tier end (towards the hosts), B
// the upper-tier end.
type Side int

const (
	SideA Side = 0
	SideB Side = 1
)

// Endpoint is one end of a link.
type Endpoint struct {
	Node   string           `json:"node"`
	Ifname string           `json:"ifname"` // the interface in Node's namespace; named after the peer node
	MAC    net.HardwareAddr `json:"mac"`
	Port   int              `json:"port"` // port number on Node (index into Node.Ports)
}

// Link is a full-duplex link between two nodes. A is always the lower tier.
type Link struct {
	ID    int      `json:"id"`
	Name  string   `json:"name"` // "<A>~<B>", e.g. e0-1~a0-0
	Stage Stage    `json:"stage"`
	A     Endpoint `json:"a"`
	B     Endpoint `json:"b"`
	MTU   int      `json:"mtu"`
	// Up is the direction A->B (towards the core), Down is B->A.
	Up   LinkParams `json:"up"`
	Down LinkParams `json:"down"`
}

// End returns the endpoint on the given side.
func (l *Link) End(s Side) *Endpoint {
	if s == SideA {
		return &l.A
	}
	return &l.B
}

// Topology is a resolved fabric.
type Topology struct {
	Name   string `json:"name"`
	Kind   Kind   `json:"kind"`
	Source string `json:"source,omitempty"` // file it came from, if any
	// Fat tree.
	K int `json:"k,omitempty"`
	// Leaf-spine.
	Leaves       int `json:"leaves,omitempty"`
	Spines       int `json:"spines,omitempty"`
	HostsPerLeaf int `json:"hosts_per_leaf,omitempty"`

	Nodes []Node `json:"nodes"`
	Links []Link `json:"links"`

	byName map[string]int
}

// Node returns the node with the given name. Safe for concurrent use.
func (t *Topology) Node(name string) (*Node, bool) {
	indexMu.Lock()
	if t.byName == nil {
		t.index()
	}
	i, ok := t.byName[name]
	indexMu.Unlock()
	if !ok {
		return nil, false
	}
	return &t.Nodes[i], true
}

// indexMu guards the lazily built name indexes of all topologies: a
// topology decoded from JSON has none until its first lookup.
var indexMu sync.Mutex

func (t *Topology) index() {
	t.byName = make(map[string]int, len(t.Nodes))
	for i := range t.Nodes {
		t.byName[t.Nodes[i].Name] = i
	}
}

// Count returns the number of nodes with the given role.
func (t *Topology) Count(r Role) int {
	n := 0
	for i := range t.Nodes {
		if t.Nodes[i].Role == r {
			n++
		}
	}
	return n
}

// Hosts returns the host nodes in plan order.
func (t *Topology) Hosts() []*Node { return t.byRole(func(r Role) bool { return r == RoleHost }) }

// Switches returns the switch nodes in plan order.
func (t *Topology) Switches() []*Node { return t.byRole(Role.IsSwitch) }

func (t *Topology) byRole(keep func(Role) bool) []*Node {
	var out []*Node
	for i := range t.Nodes {
		if keep(t.Nodes[i].Role) {
			out = append(out, &t.Nodes[i])
		}
	}
	return out
}

// Peer returns the node at the other end of a node's port.
func (t *Topology) Peer(p PortRef) *Endpoint {
	return t.Links[p.Link].End(1 - p.Side)
}

// String summarizes the topology in one line.
func (t *Topology) String() string {
	switch t.Kind {
	case FatTree:
		return fmt.Sprintf("%s: fat tree k=%d, %d hosts, %d switches, %d links", t.Name, t.K,
			t.Count(RoleHost), len(t.Switches()), len(t.Links))
	default:
		return fmt.Sprintf("%s: leaf-spine %d leaves x %d spines, %d hosts, %d links", t.Name,
			t.Leaves, t.Spines, t.Count(RoleHost), len(t.Links))
	}
}
