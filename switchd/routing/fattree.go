package routing

import (
	"fmt"

	"github.com/ftlab/ftlab/internal/topology"
)

// fatTree holds what the fat-tree tables are computed from.
type fatTree struct {
	*fabric
	k, h    int
	edgeAgg [][][]bool // [p][e][a]: link e<p>-<e> ~ a<p>-<a> is up
	aggCore [][][]bool // [p][a][i]: link a<p>-<a> ~ c<a>-<i> is up
	// podCores[p][a][q]: a<p>-<a> has a live core uplink whose core still
	// links to a<q>-<a>, i.e. it can reach pod q at all.
	podCores [][][]bool
}

func (f *fabric) fatTree() (map[string]*Table, error) {
	k := f.top.K
	if k < 2 || k%2 != 0 {
		return nil, fmt.Errorf("routing: fat tree with k=%d", k)
	}
	ft := &fatTree{fabric: f, k: k, h: k / 2}
	h := ft.h
	ft.edgeAgg, ft.aggCore = grid(k, h, h), grid(k, h, h)
	for i := range f.top.Links {
		l := &f.top.Links[i]
		a, _ := f.top.Node(l.A.Node)
		b, _ := f.top.Node(l.B.Node)
		if a == nil || b == nil {
			return nil, fmt.Errorf("routing: link %s: unknown node", l.Name)
		}
		switch l.Stage {
		case topology.StageEdgeAgg:
			ft.edgeAgg[a.Pod][a.Edge][b.Index] = f.alive(l.ID)
		case topology.StageAggCore:
			ft.aggCore[a.Pod][a.Index][b.Index] = f.alive(l.ID)
		}
	}
	ft.podCores = grid(k, h, k)
	for p := range k {
		for a := range h {
			for q := range k {
				for i := range h {
					if ft.aggCore[p][a][i] && ft.aggCore[q][a][i] {
						ft.podCores[p][a][q] = true
						break
					}
				}
			}
		}
	}

	return f.tables(func(n *topology.Node, down, up []port) (*Table, error) {
		switch n.Role {
		case topology.RoleEdge:
			return ft.edge(n, down, up), nil
		case topology.RoleAgg:
			return ft.agg(n, down, up), nil
		case topology.RoleCore:
			return ft.core(n, down), nil
		}
		return nil, fmt.Errorf("routing: %s: role %s in a fat tree", n.Name, n.Role)
	})
}

// aggReaches reports whether a<p>-<a> can still deliver to edge e<q>-<f>
// going up then down: directly if q = p, else through some core to
// a<q>-<a>, the mandatory waypoint, and its link to the edge.
func (ft *fatTree) aggReaches(p, a, q, f int) bool {
	if q == p {
		return ft.edgeAgg[p][f][a]
	}
	return ft.podCores[p][a][q] && ft.edgeAgg[q][f][a]
}

func (ft *fatTree) edge(n *topology.Node, down, up []port) *Table {
	p, e, h := n.Pod, n.Edge, ft.h
	b := newBuilder(n, up, ft.k*h)
	for _, d := range down {
		b.down(prefixOf(d.peer.Addr, 32), d.num, d.alive)
	}
	b.noRoute(prefix(10, byte(p), byte(e), 0, 24))
	for q := range ft.k {
		for f := range h {
			if q == p && f == e {
				continue
			}
			valid := mask(up, func(agg *topology.Node) bool { return ft.aggReaches(p, agg.Index, q, f) })
			b.up(prefix(10, byte(q), byte(f), 0, 24), q*h+f, valid)
		}
	}
	return b.finish()
}

func (ft *fatTree) agg(n *topology.Node, down, up []port) *Table {
	p, a := n.Pod, n.Index
	b := newBuilder(n, up, ft.k)
	for _, d := range down {
		b.down(prefix(10, byte(p), byte(d.peer.Edge), 0, 24), d.num, d.alive)
	}
	for q := range ft.k {
		if q == p {
			continue
		}
		// Core c<a>-<i> links to a<q>-<c.Group> = a<q>-<a> in pod q.
		valid := mask(up, func(c *topology.Node) bool { return ft.aggCore[q][c.Group][c.Index] })
		b.up(prefix(10, byte(q), 0, 0, 16), q, valid)
		if valid != 0 {
			ft.unreachableEdges(b, q, a)
		}
	}
	return b.finish()
}

func (ft *fatTree) core(n *topology.Node, down []port) *Table {
	b := newBuilder(n, nil, 0)
	for _, d := range down {
		q := d.peer.Pod
		b.down(prefix(10, byte(q), 0, 0, 16), d.num, d.alive)
		if d.alive {
			ft.unreachableEdges(b, q, d.peer.Index)
		}
	}
	return b.finish()
}

// unreachableEdges adds NoRoute /24s for the edges of pod q that a<q>-<a>,
// the only way into pod q from above for this switch, cannot reach.
func (ft *fatTree) unreachableEdges(b *builder, q, a int) {
	for f := range ft.h {
		if !ft.edgeAgg[q][f][a] {
			b.noRoute(prefix(10, byte(q), byte(f), 0, 24))
		}
	}
}
