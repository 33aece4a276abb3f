package lab

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ftlab/ftlab/internal/testlab"
	"github.com/ftlab/ftlab/orchestrator/fabric"
)

// TestStatusOf joins a lab's record with a kernel view in which one host
// is missing, one link is down at one end and another failed on purpose.
func TestStatusOf(t *testing.T) {
	topo := testlab.Topology(t, "fattree-k4")
	st := &State{Name: "k4", Phase: PhaseUp, Topology: topo, Failed: []int{1}}
	live := map[string]fabric.NodeState{}
	up := fabric.Interface{Exists: true, AdminUp: true, Carrier: true}
	for _, n := range topo.Nodes {
		live[n.Name] = fabric.NodeState{Present: true, Interfaces: map[string]fabric.Interface{}}
	}
	for _, l := range topo.Links {
		live[l.A.Node].Interfaces[l.A.Ifname] = up
		live[l.B.Node].Interfaces[l.B.Ifname] = up
	}
	down := topo.Links[2]
	live[down.B.Node].Interfaces[down.B.Ifname] = fabric.Interface{Exists: true}
	gone := topo.Hosts()[0].Name
	live[gone] = fabric.NodeState{}

	v := statusOf(st, func(n string) string { return "ns-" + n }, live)
	want := Health{Namespaces: len(topo.Nodes), NamespacesPresent: len(topo.Nodes) - 1, Links: len(topo.Links),
		LinksUp: len(topo.Links) - 3, LinksFailed: 1}
	// The missing host's link is down too: its end is missing.
	if diff := cmp.Diff(want, v.Health); diff != "" {
		t.Errorf("health (-want +got):\n%s", diff)
	}
	if v.Links[1].State != "failed" || v.Links[2].State != "down" || v.Links[2].B.State != "down" || v.Links[3].State != "up" {
		t.Errorf("link states %s %s (%s) %s", v.Links[1].State, v.Links[2].State, v.Links[2].B.State, v.Links[3].State)
	}
	if v.Nodes[0].Namespace != "ns-"+topo.Nodes[0].Name || v.Topology.K != 4 || v.Topology.Hosts != 16 || v.FailedLinks[0] != topo.Links[1].Name {
		t.Errorf("status %+v", v)
	}
	for _, n := range v.Nodes {
		if n.Present != (n.Name != gone) {
			t.Errorf("node %s present %v", n.Name, n.Present)
		}
	}
}
