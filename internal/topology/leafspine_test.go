package topology

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLeafSpineCounts(t *testing.T) {
	type counts struct{ Hosts, Leaves, Spines, Links int }
	tests := []struct {
		leaves, spines, hosts int
		want                  counts
	}{
		{4, 2, 4, counts{Hosts: 16, Leaves: 4, Spines: 2, Links: 16 + 8}},
		{2, 1, 1, counts{Hosts: 2, Leaves: 2, Spines: 1, Links: 2 + 2}},
		{8, 4, 16, counts{Hosts: 128, Leaves: 8, Spines: 4, Links: 128 + 32}},
		{64, 64, 64, counts{Hosts: 4096, Leaves: 64, Spines: 64, Links: 4096 + 4096}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%dx%dx%d", tt.leaves, tt.spines, tt.hosts), func(t *testing.T) {
			top, err := NewLeafSpine(tt.leaves, tt.spines, tt.hosts)
			if err != nil {
				t.Fatal(err)
			}
			got := counts{Hosts: top.Count(RoleHost), Leaves: top.Count(RoleLeaf), Spines: top.Count(RoleSpine), Links: len(top.Links)}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("counts mismatch (-want +got):\n%s", diff)
			}
			checkInvariants(t, top)
			// Every leaf reaches every spine exactly once.
			for _, n := range top.Nodes {
				if n.Role != RoleSpine {
					continue
				}
				for port, ref := range n.Ports {
					if want := fmt.Sprintf("l%d", port); top.Peer(ref).Node != want {
						t.Errorf("%s port %d goes to %s, want %s", n.Name, port, top.Peer(ref).Node, want)
					}
				}
			}
		})
	}
}

func TestLeafSpinePlan(t *testing.T) {
	top, err := NewLeafSpine(4, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	type node struct {
		Name        string
		Role        Role
		Edge, Index int
		Addr        string
		Peers, MACs []string
	}
	summarize := func(name string) node {
		n, _ := top.Node(name)
		out := node{Name: n.Name, Role: n.Role, Edge: n.Edge, Index: n.Index, Addr: n.Addr.String()}
		for _, ref := range n.Ports {
			out.Peers = append(out.Peers, top.Peer(ref).Node)
			out.MACs = append(out.MACs, top.Links[ref.Link].End(ref.Side).MAC.String())
		}
		return out
	}
	want := []node{
		{Name: "h2-3", Role: RoleHost, Edge: 2, Index: 3, Addr: "10.0.2.5", Peers: []string{"l2"}, MACs: []string{"02:01:00:02:03:00"}},
		{Name: "l1", Role: RoleLeaf, Edge: 1, Addr: "10.0.1.1",
			Peers: []string{"h1-0", "h1-1", "h1-2", "h1-3", "s0", "s1"},
			MACs:  []string{"02:05:00:01:00:00", "02:05:00:01:00:01", "02:05:00:01:00:02", "02:05:00:01:00:03", "02:05:00:01:00:04", "02:05:00:01:00:05"}},
		{Name: "s1", Role: RoleSpine, Index: 1, Addr: "10.1.2.1",
			Peers: []string{"l0", "l1", "l2", "l3"},
			MACs:  []string{"02:06:00:01:00:00", "02:06:00:01:00:01", "02:06:00:01:00:02", "02:06:00:01:00:03"}},
	}
	for _, w := range want {
		if diff := cmp.Diff(w, summarize(w.Name)); diff != "" {
			t.Errorf("%s mismatch (-want +got):\n%s", w.Name, diff)
		}
	}
	var links []string
	for _, i := range []int{0, 15, 16, 17, 23} {
		links = append(links, top.Links[i].Name+" "+string(top.Links[i].Stage))
	}
	wantLinks := []string{"h0-0~l0 host-leaf", "h3-3~l3 host-leaf", "l0~s0 leaf-spine", "l0~s1 leaf-spine", "l3~s1 leaf-spine"}
	if diff := cmp.Diff(wantLinks, links); diff != "" {
		t.Errorf("link order mismatch (-want +got):\n%s", diff)
	}
}
