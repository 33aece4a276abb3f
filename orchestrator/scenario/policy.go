package scenario

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/internal/yamldoc"
	"gopkg.in/yaml.v3"
)

const wantPolicy = "a policy such as ofan, or one per layer such as {edge: ofan, agg: ecmp}"

// allLayers are the layer names accepted before the fabric's kind is
// known; Layers(kind) narrows them.
var allLayers = []Layer{LayerEdge, LayerAgg, LayerLeaf}

// policy decodes policy: one name for every layer, or a mapping from
// layer to name; layers left out run ecmp. t may be nil when the topology
// did not resolve: names are still checked, layers only against all kinds.
func (l *loader) policy(n *yaml.Node, t *topology.Topology, w *yamldoc.Walker, pr *yamldoc.Problems) Policy {
	layers := allLayers
	kind := topology.FatTree
	if t != nil {
		kind = t.Kind
		layers = Layers(kind)
	}
	out := Policy{}
	for _, ly := range layers {
		out[ly] = DefaultPolicy
	}
	if n == nil {
		return out
	}
	name := func(v *yaml.Node, field string) (PolicyName, bool) {
		s, ok := w.Scalar(v, field, "a policy such as ofan")
		if !ok {
			return "", false
		}
		if err := oneOf("policy", PolicyName(s), Policies); err != nil {
			pr.Add(yamldoc.PosOf(v), field, "%v", err)
			return "", false
		}
		return PolicyName(s), true
	}
	switch v := yamldoc.Deref(n); v.Kind {
	case yaml.ScalarNode:
		if p, ok := name(v, "policy"); ok {
			for ly := range out {
				out[ly] = p
			}
		}
	case yaml.MappingNode:
		w.Mapping(v, "policy", wantPolicy, func(key string, k, val *yaml.Node) {
			field := "policy." + key
			ly := Layer(key)
			valid := make([]string, len(layers))
			for i, x := range layers {
				valid[i] = string(x)
			}
			switch {
			case key == "core" || key == "spine":
				pr.Add(yamldoc.PosOf(k), field, "%s switches have one way down to every destination and choose no uplinks; give a policy for %s",
					key, strings.Join(valid, " and "))
				return
			case !slices.Contains(layers, ly):
				msg := fmt.Sprintf("unknown layer %q", key)
				if t != nil && slices.Contains(allLayers, ly) {
					msg = fmt.Sprintf("a %s has no %s layer", kind, key)
				} else if g := yamldoc.Closest(key, valid); g != "" {
					msg += fmt.Sprintf("; did you mean %q?", g)
				}
				pr.Add(yamldoc.PosOf(k), field, "%s (valid: %s)", msg, strings.Join(valid, ", "))
				return
			}
			w.Record(field, yamldoc.PosOf(k), yamldoc.PosOf(val))
			if p, ok := name(val, field); ok {
				out[ly] = p
			}
		})
	default:
		w.Problem(yamldoc.PosOf(v), "policy", "expected %s, found %s", wantPolicy, yamldoc.Describe(v))
	}
	return out
}
