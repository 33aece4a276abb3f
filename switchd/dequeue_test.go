package switchd

import (
	"testing"

	"github.com/ftlab/ftlab/internal/testlab"
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
