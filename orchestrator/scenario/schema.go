package scenario

import "github.com/ftlab/ftlab/internal/topology"

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

// PolicyName is a switch load-balancing policy for upward packets.
type PolicyName string

const (
	ECMP   PolicyName = "ecmp"   // hash of the 5-tuple (and entropy) picks the uplink
	Ofan   PolicyName = "ofan"   // per-destination round-robin pointers (Ofan section 4)
	POfan  PolicyName = "pofan"  // Ofan with one pointer set per pipe (Ofan section 5)
	RR     PolicyName = "rr"     // one round-robin pointer for all upward packets
	Random PolicyName = "random" // a uniformly random uplink per packet (RSQ)
	AR     PolicyName = "ar"     // adaptive routing: the least loaded uplink by quantized queue
)

// Policies lists the valid policies.
var Policies = []PolicyName{ECMP, Ofan, POfan, RR, Random, AR}

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

const (
	TransportECMP Transport = "ecmp"     // one path (entropy) per message
	RPS           Transport = "rps"      // random entropy per packet
	RSS           Transport = "rss"      // reactive subflow spraying (Ordered Chaos III)
	RSSPFLD       Transport = "rss+pfld" // RSS with precise fast loss detection (Ordered Chaos IV)
	RSSRACK       Transport = "rss+rack" // RSS with RACK-TLP loss recovery (RFC 8985)
	PSNPath       Transport = "psnpath"  // PSN-PATH: per-path PSN order, DT-Switch path management
	GapNACK       Transport = "gapnack"  // a receiver that NACKs any gap in the global PSN order, the PSN-PATH paper's baseline (multipath IRN)
	REPS          Transport = "reps"     // recycled entropy packet spraying
	PLB           Transport = "plb"      // protective load balancing: repath one flow on ECN
)

// Transports lists the valid transport schemes.
var Transports = []Transport{TransportECMP, RPS, RSS, RSSPFLD, RSSRACK, PSNPath, GapNACK, REPS, PLB}

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
