package kernelfwd_test

import (
	"context"
	"testing"

	"github.com/ftlab/ftlab/internal/testlab"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/orchestrator/fabric"
	"github.com/ftlab/ftlab/switchd/kernelfwd"
	"github.com/ftlab/ftlab/switchd/routing"
)

func buildWithKernelForwarding(t *testing.T, topo *topology.Topology, failed map[int]bool) func(string) string {
	t.Helper()
	name := testlab.Namer(testlab.Prefix(t))
	if _, err := fabric.Build(context.Background(), topo, fabric.Options{Namespace: name}); err != nil {
		t.Fatal(err)
	}
	program(t, topo, failed, name)
	return name
}

func program(t *testing.T, topo *topology.Topology, failed map[int]bool, name func(string) string) {
	t.Helper()
	tables, err := routing.Compute(topo, failed)
	if err != nil {
		t.Fatal(err)
	}
	if err := kernelfwd.Program(context.Background(), topo, tables, name); err != nil {
		t.Fatal(err)
	}
}

func pingAll(t *testing.T, topo *topology.Topology, name func(string) string) *fabric.PingAllResult {
	t.Helper()
	res, err := fabric.PingAll(context.Background(), topo, name)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestPingAll checks that every host reaches every other host through
// kernel forwarding, on both fabric kinds.
func TestPingAll(t *testing.T) {
	testlab.RequireRoot(t)
	for _, file := range []string{"fattree-k4", "leafspine-4x2"} {
		t.Run(file, func(t *testing.T) {
			topo := testlab.Topology(t, file)
			res := pingAll(t, topo, buildWithKernelForwarding(t, topo, nil))
			hosts := topo.Count(topology.RoleHost)
			if res.Total != hosts*(hosts-1) || res.OK != res.Total {
				t.Errorf("pingall: %d/%d pairs answered; failed: %v", res.OK, res.Total, res.Failed())
			}
			t.Logf("rtt p50 %v p99 %v max %v", res.RTTP50, res.RTTP99, res.RTTMax)
		})
	}
}

// TestReconverge fails an aggregation-core link in the kernel (the link is
// taken down at both ends) and checks that after reprogramming with the
// failure every pair is reachable again, then that the repair restores
// the original routes.
func TestReconverge(t *testing.T) {
	testlab.RequireRoot(t)
	topo := testlab.Topology(t, "fattree-k4")
	name := buildWithKernelForwarding(t, topo, nil)
	l, _, ok := topo.LinkBetween("a0-0", "c0-0")
	if !ok {
		t.Fatal("no link a0-0~c0-0")
	}
	if err := fabric.SetLinkState(topo, name, l, false); err != nil {
		t.Fatal(err)
	}
	// Before reconvergence the routes still hash some flows onto the dead
	// link: those pairs fail.
	if res := pingAll(t, topo, name); res.OK == res.Total {
		t.Errorf("with %s down and stale routes every pair answered: the failure had no effect", l.Name)
	}
	program(t, topo, map[int]bool{l.ID: true}, name)
	if res := pingAll(t, topo, name); res.OK != res.Total {
		t.Errorf("after failing %s and reconverging: %d/%d; failed %v", l.Name, res.OK, res.Total, res.Failed())
	}
	if err := fabric.SetLinkState(topo, name, l, true); err != nil {
		t.Fatal(err)
	}
	program(t, topo, nil, name)
	if res := pingAll(t, topo, name); res.OK != res.Total {
		t.Errorf("after repairing %s: %d/%d", l.Name, res.OK, res.Total)
	}
}
