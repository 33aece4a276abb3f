package topology

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFatTreeCounts(t *testing.T) {
	type counts struct {
		Hosts, Edge, Agg, Core, Switches, Links int
		MaxIfname                               string
	}
	tests := []struct {
		k    int
		want counts
	}{
		{4, counts{Hosts: 16, Edge: 8, Agg: 8, Core: 4, Switches: 20, Links: 48, MaxIfname: "h3-1-1"}},
		{6, counts{Hosts: 54, Edge: 18, Agg: 18, Core: 9, Switches: 45, Links: 162, MaxIfname: "h5-2-2"}},
		{8, counts{Hosts: 128, Edge: 32, Agg: 32, Core: 16, Switches: 80, Links: 384, MaxIfname: "h7-3-3"}},
		{16, counts{Hosts: 1024, Edge: 128, Agg: 128, Core: 64, Switches: 320, Links: 3072, MaxIfname: "h15-7-7"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("k=%d", tt.k), func(t *testing.T) {
			top, err := NewFatTree(tt.k)
			if err != nil {
				t.Fatal(err)
			}
			got := counts{
				Hosts: top.Count(RoleHost), Edge: top.Count(RoleEdge), Agg: top.Count(RoleAgg),
				Core: top.Count(RoleCore), Switches: len(top.Switches()), Links: len(top.Links),
			}
			for i := range top.Links {
				for _, ep := range []Endpoint{top.Links[i].A, top.Links[i].B} {
					if len(ep.Ifname) >= len(got.MaxIfname) { // the last of the longest
						got.MaxIfname = ep.Ifname
					}
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("counts mismatch (-want +got):\n%s", diff)
			}
			if len(top.Hosts()) != got.Hosts {
				t.Errorf("Hosts() returned %d nodes, Count says %d", len(top.Hosts()), got.Hosts)
			}
			checkInvariants(t, top)
		})
	}
}

// TestFatTreeCoreReachesEveryPod: core (j, i) must have exactly one link to
// each pod, and it must go to aggregation switch j of that pod.
func TestFatTreeCoreReachesEveryPod(t *testing.T) {
	for _, k := range []int{4, 6, 8, 16} {
		top, err := NewFatTree(k)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range top.Nodes {
			if c.Role != RoleCore {
				continue
			}
			pods := make([]int, k)
			for port, ref := range c.Ports {
				peer, _ := top.Node(top.Peer(ref).Node)
				if peer.Role != RoleAgg || peer.Index != c.Group || peer.Pod != port {
					t.Errorf("k=%d: %s port %d goes to %s, want aggregation a%d-%d", k, c.Name, port, peer.Name, port, c.Group)
					continue
				}
				pods[peer.Pod]++
			}
			for p, n := range pods {
				if n != 1 {
					t.Errorf("k=%d: %s reaches pod %d %d times, want once", k, c.Name, p, n)
				}
			}
		}
	}
}

// TestFatTreePlanK4 pins the naming, addressing, MAC and port plan of
// docs/topology.md on a few nodes of each role.
func TestFatTreePlanK4(t *testing.T) {
	top, err := NewFatTree(4)
	if err != nil {
		t.Fatal(err)
	}
	type port struct{ Peer, Ifname, MAC string }
	type node struct {
		Name                    string
		Role                    Role
		Pod, Edge, Group, Index int
		Addr                    string
		Ports                   []port
	}
	summarize := func(name string) node {
		n, ok := top.Node(name)
		if !ok {
			t.Fatalf("no node %s", name)
		}
		out := node{Name: n.Name, Role: n.Role, Pod: n.Pod, Edge: n.Edge, Group: n.Group, Index: n.Index, Addr: n.Addr.String()}
		for _, ref := range n.Ports {
			ep := top.Links[ref.Link].End(ref.Side)
			out.Ports = append(out.Ports, port{Peer: top.Peer(ref).Node, Ifname: ep.Ifname, MAC: ep.MAC.String()})
		}
		return out
	}
	want := []node{
		{Name: "h0-0-0", Role: RoleHost, Addr: "10.0.0.2", Ports: []port{{"e0-0", "e0-0", "02:01:00:00:00:00"}}},
		{Name: "h2-1-1", Role: RoleHost, Pod: 2, Edge: 1, Index: 1, Addr: "10.2.1.3", Ports: []port{{"e2-1", "e2-1", "02:01:02:01:01:00"}}},
		{Name: "e1-1", Role: RoleEdge, Pod: 1, Edge: 1, Addr: "10.1.1.1", Ports: []port{
			{"h1-1-0", "h1-1-0", "02:02:01:01:00:00"},
			{"h1-1-1", "h1-1-1", "02:02:01:01:00:01"},
			{"a1-0", "a1-0", "02:02:01:01:00:02"},
			{"a1-1", "a1-1", "02:02:01:01:00:03"},
		}},
		{Name: "a3-1", Role: RoleAgg, Pod: 3, Index: 1, Addr: "10.3.3.1", Ports: []port{
			{"e3-0", "e3-0", "02:03:03:01:00:00"},
			{"e3-1", "e3-1", "02:03:03:01:00:01"},
			{"c1-0", "c1-0", "02:03:03:01:00:02"},
			{"c1-1", "c1-1", "02:03:03:01:00:03"},
		}},
		{Name: "c1-0", Role: RoleCore, Group: 1, Addr: "10.4.2.1", Ports: []port{
			{"a0-1", "a0-1", "02:04:01:00:00:00"},
			{"a1-1", "a1-1", "02:04:01:00:00:01"},
			{"a2-1", "a2-1", "02:04:01:00:00:02"},
			{"a3-1", "a3-1", "02:04:01:00:00:03"},
		}},
	}
	for _, w := range want {
		if diff := cmp.Diff(w, summarize(w.Name)); diff != "" {
			t.Errorf("%s mismatch (-want +got):\n%s", w.Name, diff)
		}
	}
}

// TestFatTreeOrder pins the order of Nodes and Links, which the builder
// and the docs rely on.
func TestFatTreeOrder(t *testing.T) {
	top, err := NewFatTree(4)
	if err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for _, n := range top.Nodes {
		nodes = append(nodes, n.Name)
	}
	wantNodes := []string{
		"h0-0-0", "h0-0-1", "h0-1-0", "h0-1-1", "h1-0-0", "h1-0-1", "h1-1-0", "h1-1-1",
		"h2-0-0", "h2-0-1", "h2-1-0", "h2-1-1", "h3-0-0", "h3-0-1", "h3-1-0", "h3-1-1",
		"e0-0", "e0-1", "e1-0", "e1-1", "e2-0", "e2-1", "e3-0", "e3-1",
		"a0-0", "a0-1", "a1-0", "a1-1", "a2-0", "a2-1", "a3-0", "a3-1",
		"c0-0", "c0-1", "c1-0", "c1-1",
	}
	if diff := cmp.Diff(wantNodes, nodes); diff != "" {
		t.Errorf("node order mismatch (-want +got):\n%s", diff)
	}
	pick := func(i int) string { return fmt.Sprintf("%d %s %s", i, top.Links[i].Name, top.Links[i].Stage) }
	got := []string{pick(0), pick(1), pick(15), pick(16), pick(17), pick(18), pick(31), pick(32), pick(33), pick(34), pick(47)}
	wantLinks := []string{
		"0 h0-0-0~e0-0 host-edge", "1 h0-0-1~e0-0 host-edge", "15 h3-1-1~e3-1 host-edge",
		"16 e0-0~a0-0 edge-agg", "17 e0-0~a0-1 edge-agg", "18 e0-1~a0-0 edge-agg", "31 e3-1~a3-1 edge-agg",
		"32 a0-0~c0-0 agg-core", "33 a0-0~c0-1 agg-core", "34 a0-1~c1-0 agg-core", "47 a3-1~c1-1 agg-core",
	}
	if diff := cmp.Diff(wantLinks, got); diff != "" {
		t.Errorf("link order mismatch (-want +got):\n%s", diff)
	}
	l := top.Links[34]
	if diff := cmp.Diff([]int{2, 0}, []int{l.A.Port, l.B.Port}); diff != "" {
		t.Errorf("a0-1~c1-0 ports mismatch (-want +got):\n%s", diff)
	}
}

func TestFatTreeAddressesInPodPrefix(t *testing.T) {
	top, err := NewFatTree(8)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range top.Nodes {
		if n.Role == RoleCore {
			if want := netip.MustParsePrefix("10.8.0.0/16"); !want.Contains(n.Addr) {
				t.Errorf("core %s has %s, outside %s", n.Name, n.Addr, want)
			}
			continue
		}
		pod := netip.PrefixFrom(ip4(10, n.Pod, 0, 0), 16)
		if !pod.Contains(n.Addr) {
			t.Errorf("%s has %s, outside its pod prefix %s", n.Name, n.Addr, pod)
		}
	}
}
