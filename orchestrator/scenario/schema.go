package scenario

import (
	"github.com/ftlab/ftlab/hostagent/cc"
	"github.com/ftlab/ftlab/hostagent/scheme"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/switchd"
)

// DataPlane is how links are emulated.
type DataPlane string

const (
	// Shaped serializes every link direction at its configured rate, with
	// a real queue: the mode for measurements.
	Shaped DataPlane = "shaped"
	// LineRate leaves links unshaped: packets move as fast as the CPU
	// forwards them. For functional checks; rates and the CCT bound are
	// meaningless.
	LineRate DataPlane = "linerate"
)

// DataPlanes lists the valid data-plane modes.
var DataPlanes = []DataPlane{Shaped, LineRate}

// PolicyName is a switch load-balancing policy for upward packets: one
// of switchd's registry (switchd.Policies).
type PolicyName string

// Policies lists the valid policies.
var Policies = namesOf[PolicyName](switchd.PolicyNames())

func namesOf[T ~string](names []string) []T {
	out := make([]T, len(names))
	for i, n := range names {
		out[i] = T(n)
	}
	return out
}

// Layer is a tier of switches that chooses among uplinks.
type Layer string

const (
	LayerEdge Layer = "edge" // fat-tree edge switches
	LayerAgg  Layer = "agg"  // fat-tree aggregation switches
	LayerLeaf Layer = "leaf" // leaf-spine leaves
)

// Layers returns the layers of a kind of fabric that choose uplinks. Core
// and spine switches have a single way down to every destination.
func Layers(k topology.Kind) []Layer {
	if k == topology.LeafSpine {
		return []Layer{LayerLeaf}
	}
	return []Layer{LayerEdge, LayerAgg}
}

// Policy is the policy of every layer.
type Policy map[Layer]PolicyName

// Edge is the policy of the switches right above the hosts (fat-tree edge
// switches, leaf-spine leaves); ecmp when none is set.
func (p Policy) Edge() PolicyName { return p.first(LayerEdge, LayerLeaf) }

// Agg is the policy of fat-tree aggregation switches; ecmp when none is
// set (and in a leaf-spine fabric, which has none).
func (p Policy) Agg() PolicyName { return p.first(LayerAgg) }

// first is the policy of the first of layers that has one, or ecmp.
func (p Policy) first(layers ...Layer) PolicyName {
	for _, l := range layers {
		if name, ok := p[l]; ok {
			return name
		}
	}
	return PolicyName(switchd.ECMP)
}

// Uses reports whether some layer runs p.
func (p Policy) Uses(name PolicyName) bool {
	for _, v := range p {
		if v == name {
			return true
		}
	}
	return false
}

// Transport is a host transport scheme: how a host spreads a message's
// packets over paths and recovers losses.
type Transport string

// Transports lists the valid transport schemes: hostagent/scheme's
// registry (scheme.Transports).
var Transports = namesOf[Transport](scheme.Names())

// CCName is a congestion control: how fast a host sends each message, one
// window per message over all its subflows and paths.
type CCName string

// CCs lists the valid congestion controls: hostagent/cc's registry
// (cc.Algorithms).
var CCs = namesOf[CCName](cc.Names())

// FaultKind is what a fault does.
type FaultKind string

const (
	Corrupt    FaultKind = "corrupt"     // drop packets at random (bit errors) on links
	LinkDown   FaultKind = "down"        // take links down (and up again after for)
	Flap       FaultKind = "flap"        // down for `for`, up, repeat every `every`
	Degrade    FaultKind = "degrade"     // lower the rate of links
	SwitchDown FaultKind = "switch-down" // take every link of switches down
)

// FaultKinds lists the valid fault kinds.
var FaultKinds = []FaultKind{Corrupt, LinkDown, Flap, Degrade, SwitchDown}

// Direction selects the directions of a link a fault applies to. Up is
// from the lower tier (towards the core), as in topology.Link.
type Direction string

const (
	Up   Direction = "up"
	Down Direction = "down"
	Both Direction = "both"
)

// Directions lists the valid directions.
var Directions = []Direction{Up, Down, Both}

// Sides returns the link sides sending in direction d.
func (d Direction) Sides() []topology.Side {
	switch d {
	case Up:
		return []topology.Side{topology.SideA}
	case Down:
		return []topology.Side{topology.SideB}
	}
	return []topology.Side{topology.SideA, topology.SideB}
}

// sideDirection names the direction sent from side s.
func sideDirection(s topology.Side) Direction {
	if s == topology.SideA {
		return Up
	}
	return Down
}
