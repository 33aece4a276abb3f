package topology

import "fmt"

// buildLeafSpine lays out a two-tier Clos: leaves l<l> each serving hosts
// h<l>-<i>, every leaf linked to every spine s<s>. Nodes are ordered hosts,
// leaves, spines; links host-leaf, then leaf-spine by (leaf, spine). Leaf
// ports 0..H-1 are its hosts, H..H+S-1 the spines; spine port l is leaf l.
// Addresses reuse the fat-tree scheme as pod 0: host 10.0.l.(i+2), leaf
// 10.0.l.1, and spines live apart in 10.1.(s+1).1.
func buildLeafSpine(leaves, spines, hostsPerLeaf int) *Topology {
	t := &Topology{Kind: LeafSpine, Leaves: leaves, Spines: spines, HostsPerLeaf: hostsPerLeaf}
	b := builder{t}
	nHosts := leaves * hostsPerLeaf
	t.Nodes = make([]Node, 0, nHosts+leaves+spines)
	t.Links = make([]Link, 0, nHosts+leaves*spines)

	host := func(l, i int) int { return l*hostsPerLeaf + i }
	leaf := func(l int) int { return nHosts + l }
	spine := func(s int) int { return nHosts + leaves + s }

	for l := range leaves {
		for i := range hostsPerLeaf {
			b.node(Node{Name: fmt.Sprintf("h%d-%d", l, i), Role: RoleHost,
				Edge: l, Index: i, Addr: ip4(10, 0, l, i+2)}, 1)
		}
	}
	for l := range leaves {
		b.node(Node{Name: fmt.Sprintf("l%d", l), Role: RoleLeaf, Edge: l, Addr: ip4(10, 0, l, 1)}, hostsPerLeaf+spines)
	}
	for s := range spines {
		b.node(Node{Name: fmt.Sprintf("s%d", s), Role: RoleSpine, Index: s, Addr: ip4(10, 1, s+1, 1)}, leaves)
	}

	for l := range leaves {
		for i := range hostsPerLeaf {
			b.link(StageHostLeaf, host(l, i), 0, leaf(l), i)
		}
	}
	for l := range leaves {
		for s := range spines {
			b.link(StageLeafSpine, leaf(l), hostsPerLeaf+s, spine(s), l)
		}
	}
	return t
}
