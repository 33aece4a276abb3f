package scenario

import "testing"

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
