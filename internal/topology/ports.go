package topology

import (
	"fmt"
	"net"
	"strings"

	"github.com/ftlab/ftlab/internal/units"
)

// roleCode is the second byte of every MAC address of a node of that role,
// so a MAC in a packet capture tells at a glance what sent it.
var roleCode = map[Role]byte{
	RoleHost: 0x01, RoleEdge: 0x02, RoleAgg: 0x03, RoleCore: 0x04, RoleLeaf: 0x05, RoleSpine: 0x06,
}

// MAC returns the address of the node's port: 02:RR:XX:YY:ZZ:PP with RR the
// role code, XX:YY:ZZ the node's position and PP the port number. 02 marks
// it locally administered, so it cannot clash with real hardware.
// Positions: host (pod, edge, index); edge (pod, edge, 0); aggregation
// (pod, index, 0); core (group, index, 0); leaf (0, edge, 0); spine
// (0, index, 0). Leaf-spine hosts have pod 0, so (0, leaf, index).
func (n *Node) MAC(port int) net.HardwareAddr {
	var x, y, z int
	switch n.Role {
	case RoleHost:
		x, y, z = n.Pod, n.Edge, n.Index
	case RoleEdge, RoleLeaf:
		x, y = n.Pod, n.Edge
	case RoleAgg:
		x, y = n.Pod, n.Index
	case RoleCore:
		x, y = n.Group, n.Index
	case RoleSpine:
		y = n.Index
	}
	return net.HardwareAddr{0x02, roleCode[n.Role], byte(x), byte(y), byte(z), byte(port)}
}

// LinkBetween returns the link joining nodes a and b and the side of that
// link that a is on; ok is false if either node is missing or they are not
// directly linked.
func (t *Topology) LinkBetween(a, b string) (l *Link, aSide Side, ok bool) {
	n, found := t.Node(a)
	if !found {
		return nil, 0, false
	}
	for _, p := range n.Ports {
		if t.Peer(p).Node == b {
			return &t.Links[p.Link], p.Side, true
		}
	}
	return nil, 0, false
}

// Direction is the link direction sent from side s ("e0-0 -> a0-0"); Up
// when s is SideA.
func (l *Link) Direction(s Side) string {
	return l.End(s).Node + " -> " + l.End(1-s).Node
}

// Params returns the parameters of the direction sent from side s.
func (l *Link) Params(s Side) *LinkParams {
	if s == SideA {
		return &l.Up
	}
	return &l.Down
}

// String formats the parameters as they would be written in a file, e.g.
// "rate 100Mbit, buffer 64KiB, ecn 16KiB".
func (p LinkParams) String() string {
	ecn := "off"
	if p.ECNBytes > 0 {
		ecn = units.FormatSize(p.ECNBytes)
	}
	s := fmt.Sprintf("rate %s, buffer %s, ecn %s", units.FormatRate(p.RateBps), units.FormatSize(p.BufferBytes), ecn)
	if p.Delay > 0 {
		s += ", delay " + p.Delay.String()
	}
	if p.Jitter > 0 {
		s += ", jitter " + p.Jitter.String()
	}
	return s
}

// peers lists the names of the nodes linked to n, in port order.
func (t *Topology) peers(n *Node) string {
	names := make([]string, len(n.Ports))
	for i, p := range n.Ports {
		names[i] = t.Peer(p).Node
	}
	return strings.Join(names, ", ")
}
