package routing

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// netipEqual lets cmp compare netip values, whose fields are unexported.
var netipEqual = cmpopts.EquateComparable(netip.Prefix{}, netip.Addr{})

func newFatTree(t *testing.T, k int) *topology.Topology {
	t.Helper()
	top, err := topology.NewFatTree(k)
	if err != nil {
		t.Fatal(err)
	}
	return top
}

func newLeafSpine(t *testing.T, l, s, h int) *topology.Topology {
	t.Helper()
	top, err := topology.NewLeafSpine(l, s, h)
	if err != nil {
		t.Fatal(err)
	}
	return top
}

// fail returns the failed-link set for the given names: a link "x~y" (in
// either order) or a node, meaning all of its links.
func fail(t *testing.T, top *topology.Topology, names ...string) map[int]bool {
	t.Helper()
	failed := map[int]bool{}
	for _, name := range names {
		if a, b, ok := strings.Cut(name, "~"); ok {
			l, _, found := top.LinkBetween(a, b)
			if !found {
				t.Fatalf("no link %s", name)
			}
			failed[l.ID] = true
			continue
		}
		n, ok := top.Node(name)
		if !ok {
			t.Fatalf("no node %s", name)
		}
		for _, p := range n.Ports {
			failed[p.Link] = true
		}
	}
	return failed
}

func compute(t *testing.T, top *topology.Topology, failed map[int]bool) map[string]*Table {
	t.Helper()
	tables, err := Compute(top, failed)
	if err != nil {
		t.Fatal(err)
	}
	return tables
}

// peerOf names the node on the other end of a switch's port.
func peerOf(top *topology.Topology, sw string, port int) string {
	n, _ := top.Node(sw)
	return top.Peer(n.Ports[port]).Node
}

// render describes what switch sw does with packets for dst, naming ports
// by their peers: "down e0-1", "up c0-0 c0-1", "noroute", "local",
// "nomatch".
func render(top *topology.Topology, tables map[string]*Table, sw, dst string) string {
	tb := tables[sw]
	r, ok := tb.Lookup(netip.MustParseAddr(dst))
	if !ok {
		return "nomatch"
	}
	switch r.Kind {
	case Down:
		return "down " + peerOf(top, sw, r.Port)
	case Up:
		s := "up"
		for i, port := range tb.Uplinks {
			if tb.Valid(r)>>i&1 == 1 {
				s += " " + peerOf(top, sw, port)
			}
		}
		return s
	}
	return r.Kind.String()
}

// Route constructors for expected tables.
func local(p string) Route {
	return Route{Prefix: netip.MustParsePrefix(p), Kind: Local, Port: -1, Pointer: -1, ValidSet: -1}
}

func noRoute(p string) Route {
	return Route{Prefix: netip.MustParsePrefix(p), Kind: NoRoute, Port: -1, Pointer: -1, ValidSet: -1}
}

func down(p string, port int) Route {
	return Route{Prefix: netip.MustParsePrefix(p), Kind: Down, Port: port, Pointer: -1, ValidSet: -1}
}

func up(p string, pointer, set int) Route {
	return Route{Prefix: netip.MustParsePrefix(p), Kind: Up, Port: -1, Pointer: pointer, ValidSet: set}
}

func countKinds(tb *Table) string {
	n := map[Kind]int{}
	for _, r := range tb.Routes {
		n[r.Kind]++
	}
	return fmt.Sprintf("local %d down %d up %d noroute %d", n[Local], n[Down], n[Up], n[NoRoute])
}

func netipAddr(s string) netip.Addr { return netip.MustParseAddr(s) }
