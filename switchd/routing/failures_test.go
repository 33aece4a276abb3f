package routing

import (
	"testing"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/google/go-cmp/cmp"
)

// TestFailures spot-checks, per failure scenario, what given switches do
// with packets for given addresses (see render for the notation).
func TestFailures(t *testing.T) {
	type check struct{ sw, dst, want string }
	k4 := func(t *testing.T) *topology.Topology { return newFatTree(t, 4) }
	k8 := func(t *testing.T) *topology.Topology { return newFatTree(t, 8) }
	ls := func(t *testing.T) *topology.Topology { return newLeafSpine(t, 4, 3, 2) }
	tests := []struct {
		name   string
		top    func(*testing.T) *topology.Topology
		failed []string
		checks []check
	}{
		{"agg-core link", k4, []string{"a0-0~c0-0"}, []check{
			// a0-0 loses c0-0 for every pod.
			{"a0-0", "10.1.0.2", "up c0-1"},
			{"a0-0", "10.3.1.3", "up c0-1"},
			// Elsewhere c0-0 no longer reaches pod 0, and only pod 0.
			{"a1-0", "10.0.0.2", "up c0-1"},
			{"a1-0", "10.0.1.2", "up c0-1"},
			{"a1-0", "10.2.0.2", "up c0-0 c0-1"},
			{"a3-0", "10.0.1.3", "up c0-1"},
			// Edges are unaffected: a(q,0) still reaches pod 0 via c0-1.
			{"e1-0", "10.0.0.2", "up a1-0 a1-1"},
			{"e0-0", "10.1.0.2", "up a0-0 a0-1"},
			{"c0-0", "10.0.0.2", "noroute"},
			{"c0-0", "10.1.0.2", "down a1-0"},
			{"c0-1", "10.0.0.2", "down a0-0"},
		}},
		{"agg-core link k=8", k8, []string{"a0-0~c0-0"}, []check{
			{"a0-0", "10.5.0.2", "up c0-1 c0-2 c0-3"},
			{"a1-0", "10.0.0.2", "up c0-1 c0-2 c0-3"},
			{"a1-0", "10.2.0.2", "up c0-0 c0-1 c0-2 c0-3"},
			{"e7-3", "10.0.0.2", "up a7-0 a7-1 a7-2 a7-3"},
		}},
		{"agg cut off from the core", k4, []string{"a0-0~c0-0", "a0-0~c0-1"}, []check{
			{"a0-0", "10.1.0.2", "noroute"},
			{"a0-0", "10.0.1.2", "down e0-1"},
			// a(q,0) has no path left to pod 0: edges of pod q drop it for pod 0 only.
			{"a1-0", "10.0.0.2", "noroute"},
			{"e1-0", "10.0.0.2", "up a1-1"},
			{"e1-0", "10.2.0.2", "up a1-0 a1-1"},
			// Pod 0 itself: a0-0 is useless for other pods, fine within the pod.
			{"e0-0", "10.1.0.2", "up a0-1"},
			{"e0-0", "10.0.1.2", "up a0-0 a0-1"},
		}},
		{"edge-agg link", k4, []string{"e0-0~a0-0"}, []check{
			{"e0-0", "10.0.1.2", "up a0-1"},
			{"e0-0", "10.2.1.2", "up a0-1"},
			{"e0-1", "10.0.0.2", "up a0-1"},
			{"e0-1", "10.2.0.2", "up a0-0 a0-1"},
			{"a0-0", "10.0.0.3", "noroute"},
			{"a0-0", "10.0.1.3", "down e0-1"},
			// Other pods: a(q,0) keeps the pod route but cannot reach e0-0.
			{"a2-0", "10.0.0.2", "noroute"},
			{"a2-0", "10.0.1.2", "up c0-0 c0-1"},
			{"e2-0", "10.0.0.2", "up a2-1"},
			{"e2-0", "10.0.1.2", "up a2-0 a2-1"},
			{"c0-1", "10.0.0.2", "noroute"},
			{"c0-1", "10.0.1.2", "down a0-0"},
			{"c1-1", "10.0.0.2", "down a0-1"},
		}},
		{"aggregation switch down", k4, []string{"a0-0"}, []check{
			{"e0-0", "10.0.1.2", "up a0-1"},
			{"e0-1", "10.3.0.2", "up a0-1"},
			{"a0-0", "10.1.0.2", "noroute"},
			{"a0-0", "10.0.0.2", "noroute"},
			{"a0-0", "10.0.2.1", "local"},
			{"a1-0", "10.0.0.2", "noroute"},
			{"a1-0", "10.2.0.2", "up c0-0 c0-1"},
			{"e1-1", "10.0.1.2", "up a1-1"},
			{"c0-0", "10.0.0.2", "noroute"},
		}},
		{"core switch down", k4, []string{"c0-0"}, []check{
			{"a0-0", "10.1.0.2", "up c0-1"},
			{"a2-0", "10.0.0.2", "up c0-1"},
			{"e2-0", "10.0.0.2", "up a2-0 a2-1"},
			{"c0-0", "10.0.0.2", "noroute"},
		}},
		{"edge switch down", k4, []string{"e0-0"}, []check{
			{"e1-0", "10.0.0.2", "noroute"},
			{"e0-1", "10.0.0.2", "noroute"},
			{"e1-0", "10.0.1.2", "up a1-0 a1-1"},
			{"a1-0", "10.0.0.2", "noroute"},
			{"a1-0", "10.0.1.2", "up c0-0 c0-1"},
			{"c0-0", "10.0.0.2", "noroute"},
		}},
		{"host link", k4, []string{"h0-0-0~e0-0"}, []check{
			// Not routed around: there is no other way to the host.
			{"e0-0", "10.0.0.2", "noroute"},
			{"e0-0", "10.0.0.3", "down h0-0-1"},
			{"e1-0", "10.0.0.2", "up a1-0 a1-1"},
		}},
		{"leaf-spine link", ls, []string{"l0~s0"}, []check{
			{"l0", "10.0.1.2", "up s1 s2"},
			{"l1", "10.0.0.2", "up s1 s2"},
			{"l1", "10.0.2.2", "up s0 s1 s2"},
			{"s0", "10.0.0.2", "noroute"},
			{"s0", "10.0.3.3", "down l3"},
		}},
		{"leaf cut off", ls, []string{"l0~s0", "l0~s1", "l0~s2"}, []check{
			{"l0", "10.0.1.2", "noroute"},
			{"l0", "10.0.0.3", "down h0-1"},
			{"l1", "10.0.0.2", "noroute"},
			{"l1", "10.0.2.2", "up s0 s1 s2"},
		}},
		{"spine down", ls, []string{"s2"}, []check{
			{"l0", "10.0.1.2", "up s0 s1"},
			{"s2", "10.0.1.2", "noroute"},
			{"s2", "10.1.3.1", "local"},
		}},
		{"two spines on different leaves", ls, []string{"l0~s0", "l1~s1"}, []check{
			{"l0", "10.0.1.2", "up s2"},
			{"l1", "10.0.0.2", "up s2"},
			{"l2", "10.0.0.2", "up s1 s2"},
			{"l2", "10.0.1.2", "up s0 s2"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top := tt.top(t)
			tables := compute(t, top, fail(t, top, tt.failed...))
			var want, got []string
			for _, c := range tt.checks {
				want = append(want, c.sw+" "+c.dst+": "+c.want)
				got = append(got, c.sw+" "+c.dst+": "+render(top, tables, c.sw, c.dst))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestFailureValidSetsShared: a partial failure splits the valid sets, and
// tables number them in ascending order.
func TestFailureValidSetsShared(t *testing.T) {
	top := newFatTree(t, 4)
	tables := compute(t, top, fail(t, top, "a0-0~c0-0"))
	if diff := cmp.Diff([]uint64{0b10, 0b11}, tables["a1-0"].ValidSets); diff != "" {
		t.Errorf("a1-0 valid sets (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]uint64{0b10}, tables["a0-0"].ValidSets); diff != "" {
		t.Errorf("a0-0 valid sets (-want +got):\n%s", diff)
	}
	r, _ := tables["a1-0"].Lookup(netipAddr("10.0.0.2"))
	if diff := cmp.Diff(up("10.0.0.0/16", 0, 0), r, netipEqual); diff != "" {
		t.Errorf("a1-0 route to pod 0 (-want +got):\n%s", diff)
	}
}
