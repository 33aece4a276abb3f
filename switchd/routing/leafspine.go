package routing

import (
	"fmt"
	"net/netip"

	"github.com/ftlab/ftlab/internal/topology"
)

func (f *fabric) leafSpine() (map[string]*Table, error) {
	nl, ns := f.top.Leaves, f.top.Spines
	// leafSpine[l][s]: link l<l> ~ s<s> is up.
	leafSpine := make([][]bool, nl)
	for l := range leafSpine {
		leafSpine[l] = make([]bool, ns)
	}
	for i := range f.top.Links {
		l := &f.top.Links[i]
		if l.Stage != topology.StageLeafSpine {
			continue
		}
		a, _ := f.top.Node(l.A.Node)
		b, _ := f.top.Node(l.B.Node)
		if a == nil || b == nil || a.Edge >= nl || b.Index >= ns {
			return nil, fmt.Errorf("routing: link %s: unknown node", l.Name)
		}
		leafSpine[a.Edge][b.Index] = f.alive(l.ID)
	}

	return f.tables(func(n *topology.Node, down, up []port) (*Table, error) {
		var b *builder
		switch n.Role {
		case topology.RoleLeaf:
			b = newBuilder(n, up, nl)
			for _, d := range down {
				b.down(prefixOf(d.peer.Addr, 32), d.num, d.alive)
			}
			b.noRoute(prefix(10, 0, byte(n.Edge), 0, 24))
			for m := range nl {
				if m == n.Edge {
					continue
				}
				valid := mask(up, func(s *topology.Node) bool { return leafSpine[m][s.Index] })
				b.up(prefix(10, 0, byte(m), 0, 24), m, valid)
			}
		case topology.RoleSpine:
			b = newBuilder(n, up, 0)
			for _, d := range down {
				b.down(prefix(10, 0, byte(d.peer.Edge), 0, 24), d.num, d.alive)
			}
		default:
			return nil, fmt.Errorf("routing: %s: role %s in a leaf-spine", n.Name, n.Role)
		}
		return b.finish(), nil
	})
}

func prefixOf(a netip.Addr, bits int) netip.Prefix { return netip.PrefixFrom(a, bits) }
