package scenario

import (
	"slices"
	"testing"

	"github.com/ftlab/ftlab/orchestrator/workload"
)

func TestPolicyLayers(t *testing.T) {
	for _, tt := range []struct {
		p         Policy
		edge, agg PolicyName
	}{
		{Policy{LayerEdge: Ofan, LayerAgg: AR}, Ofan, AR},
		{Policy{LayerLeaf: RR}, RR, ECMP},
		{Policy{}, ECMP, ECMP},
	} {
		if e, a := tt.p.Edge(), tt.p.Agg(); e != tt.edge || a != tt.agg {
			t.Errorf("%v: edge %s agg %s, want %s %s", tt.p, e, a, tt.edge, tt.agg)
		}
	}
}

// TestKindRegistries: the fault and workload decoders know every kind, in
// the order errors list them, and only options their files have.
func TestKindRegistries(t *testing.T) {
	for i, fk := range faultKinds {
		if i >= len(FaultKinds) || fk.kind != FaultKinds[i] || fk.targets == nil {
			t.Errorf("faultKinds[%d] is %q; want FaultKinds' %d kinds in order, each with its targets", i, fk.kind, len(FaultKinds))
		}
		for _, o := range fk.options {
			if !slices.Contains(faultFields, o) || slices.Contains([]string{"kind", "at", "for", "random"}, o) {
				t.Errorf("fault kind %s takes %q, which is no kind-specific fault field", fk.kind, o)
			}
		}
	}
	if len(faultKinds) != len(FaultKinds) {
		t.Errorf("%d fault kinds decode, %d exist", len(faultKinds), len(FaultKinds))
	}
	for i, wk := range workloadKinds {
		if i >= len(workload.Kinds) || wk.kind != workload.Kinds[i] {
			t.Errorf("workloadKinds[%d] is %q; want workload.Kinds in order", i, wk.kind)
		}
		for _, o := range wk.options {
			if !slices.Contains(workloadFields, o) || o == "kind" || o == "hosts" {
				t.Errorf("workload kind %s takes %q, which is no kind-specific workload field", wk.kind, o)
			}
		}
	}
	if len(workloadKinds) != len(workload.Kinds) {
		t.Errorf("%d workload kinds decode, %d exist", len(workloadKinds), len(workload.Kinds))
	}
}
