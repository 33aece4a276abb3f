package topology

import "fmt"

// buildFatTree lays out a k-ary fat tree (k even) following the plan in
// docs/topology.md. With h = k/2:
//
//   - pod p has edge switches e<p>-<e> and aggregation switches a<p>-<a>,
//     e, a in 0..h-1; edge e<p>-<e> serves hosts h<p>-<e>-<i>, i in 0..h-1;
//   - core switch c<j>-<i> (j, i in 0..h-1) links to aggregation switch
//     a<p>-<j> of every pod p, so core group j hangs off aggregation index j.
//
// Nodes are ordered hosts, edge, aggregation, core; links host-edge,
// edge-agg, agg-core; every switch numbers its downlinks before its uplinks.
func buildFatTree(k int) *Topology {
	h := k / 2
	t := &Topology{Kind: FatTree, K: k}
	b := builder{t}
	nHosts := k * h * h
	t.Nodes = make([]Node, 0, nHosts+k*k+h*h)
	t.Links = make([]Link, 0, 3*nHosts)

	// Node indexes follow directly from the ordering above.
	host := func(p, e, i int) int { return (p*h+e)*h + i }
	edge := func(p, e int) int { return nHosts + p*h + e }
	agg := func(p, a int) int { return nHosts + k*h + p*h + a }
	core := func(j, i int) int { return nHosts + 2*k*h + j*h + i }

	for p := range k {
		for e := range h {
			for i := range h {
				b.node(Node{Name: fmt.Sprintf("h%d-%d-%d", p, e, i), Role: RoleHost,
					Pod: p, Edge: e, Index: i, Addr: ip4(10, p, e, i+2)}, 1)
			}
		}
	}
	for p := range k {
		for e := range h {
			b.node(Node{Name: fmt.Sprintf("e%d-%d", p, e), Role: RoleEdge,
				Pod: p, Edge: e, Addr: ip4(10, p, e, 1)}, k)
		}
	}
	for p := range k {
		for a := range h {
			b.node(Node{Name: fmt.Sprintf("a%d-%d", p, a), Role: RoleAgg,
				Pod: p, Index: a, Addr: ip4(10, p, h+a, 1)}, k)
		}
	}
	for j := range h {
		for i := range h {
			b.node(Node{Name: fmt.Sprintf("c%d-%d", j, i), Role: RoleCore,
				Group: j, Index: i, Addr: ip4(10, k, j+1, i+1)}, k)
		}
	}

	// Host port 0 is its edge; edge ports 0..h-1 are its hosts.
	for p := range k {
		for e := range h {
			for i := range h {
				b.link(StageHostEdge, host(p, e, i), 0, edge(p, e), i)
			}
		}
	}
	// Edge ports h..k-1 are aggregation a; aggregation ports 0..h-1 are edge e.
	for p := range k {
		for e := range h {
			for a := range h {
				b.link(StageEdgeAgg, edge(p, e), h+a, agg(p, a), e)
			}
		}
	}
	// Aggregation ports h..k-1 are cores c<a>-<i>; core port p is pod p.
	for p := range k {
		for a := range h {
			for i := range h {
				b.link(StageAggCore, agg(p, a), h+i, core(a, i), p)
			}
		}
	}
	return t
}
