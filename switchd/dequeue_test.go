package switchd

import (
	"testing"

	"github.com/ftlab/ftlab/internal/testlab"
	"github.com/ftlab/ftlab/internal/topology"
)

// TestPortMarksUnique: every port of the largest fabric gets its own
// non-zero mark, so the dequeue monitor never mixes two ports up.
func TestPortMarksUnique(t *testing.T) {
	topo := testlab.Topology(t, "fattree-k16")
	seen := map[uint32]string{}
	for i, n := range topo.Nodes {
		for p := range n.Ports {
			m := PortMark("/run/ftlab/lab/bpf", i, p)
			if m == 0 {
				t.Fatalf("%s port %d: mark 0", n.Name, p)
			}
			if other, dup := seen[m]; dup {
				t.Fatalf("%s port %d and %s share mark %#x", n.Name, p, other, m)
			}
			seen[m] = n.Name
		}
	}
	if PortMark("/run/ftlab/a/bpf", 3, 1) == PortMark("/run/ftlab/b/bpf", 3, 1) {
		t.Error("two labs' pin roots give the same mark tag")
	}
}

// TestHostMark: a host's agent marks its packets with its own port's
// mark; switches and unknown names get none.
func TestHostMark(t *testing.T) {
	topo := testlab.Topology(t, "fattree-k4")
	root := "/run/ftlab/lab/bpf"
	for i, n := range topo.Nodes {
		got := HostMark(topo, root, n.Name)
		want := uint32(0)
		if n.Role == topology.RoleHost {
			want = PortMark(root, i, 0)
		}
		if got != want {
			t.Errorf("%s: mark %#x, want %#x", n.Name, got, want)
		}
	}
	if HostMark(topo, root, "nosuch") != 0 {
		t.Error("an unknown host has a mark")
	}
}
