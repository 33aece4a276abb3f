package topology

import "net/netip"

// builder assembles the nodes and links of a fabric. Link parameters are
// left zero; the resolver fills them in afterwards.
type builder struct{ t *Topology }

// node appends n with room for the given number of ports and returns its
// index in Topology.Nodes.
func (b *builder) node(n Node, ports int) int {
	n.Ports = make([]PortRef, ports)
	b.t.Nodes = append(b.t.Nodes, n)
	return len(b.t.Nodes) - 1
}

// link joins port aPort of node a (the lower tier) to port bPort of node
// up. Each interface is named after the node at its other end, which makes
// "ip link" output inside a namespace read like a neighbour table.
func (b *builder) link(stage Stage, a, aPort, up, bPort int) {
	id := len(b.t.Links)
	na, nb := &b.t.Nodes[a], &b.t.Nodes[up]
	b.t.Links = append(b.t.Links, Link{
		ID:    id,
		Name:  na.Name + "~" + nb.Name,
		Stage: stage,
		A:     Endpoint{Node: na.Name, Ifname: nb.Name, MAC: na.MAC(aPort), Port: aPort},
		B:     Endpoint{Node: nb.Name, Ifname: na.Name, MAC: nb.MAC(bPort), Port: bPort},
	})
	na.Ports[aPort] = PortRef{Link: id, Side: SideA}
	nb.Ports[bPort] = PortRef{Link: id, Side: SideB}
}

func ip4(a, b, c, d int) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(a), byte(b), byte(c), byte(d)})
}
