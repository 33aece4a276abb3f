package switchd

import (
	"fmt"
	"slices"

	"github.com/ftlab/ftlab/bpf"
	"github.com/ftlab/ftlab/internal/params"
)

// The switch policies' parameter blocks, declared once (tags: package
// internal/params). The scenario decoder, `ftlab up` and
// docs/scenarios.md read them.

// OfanParams configure the ofan and pofan policies.
type OfanParams struct {
	AckThreshold uint64 `yaml:"ack_threshold" json:"ack_threshold_bytes" default:"128B" unit:"size" min:"28B" max:"9216B" doc:"IP packets of at most this size (ACKs, NACKs, probes, trimmed headers) use their own pointers, started half a rotation from the data pointers (Ofan 4.1); also used by pofan"`
}

// POfanParams configure the pofan policy.
type POfanParams struct {
	Pipe int `yaml:"pipe" json:"pipe" default:"4" min:"1" max:"64" doc:"ports per pipe; each pipe keeps its own pointers (4 in current ASICs, Ofan 5.1; 1 is one pointer set per input port)"`
}

// ARParams configure the ar policy.
type ARParams struct {
	Quantum uint64 `yaml:"quantum" json:"quantum_bytes" default:"1500B" unit:"size" min:"1B" max:"1MiB" doc:"queue backlogs are compared in steps of this size: uplinks whose backlogs fall in the same step are equally good, one is picked at random (Ofan Table 1 uses 5-20% of the buffer)"`
}

// PolicyParams are the policies' parameter blocks; blocks no policy in use
// reads are nil.
type PolicyParams struct {
	Ofan  *OfanParams  `json:"ofan,omitempty" what:"the ofan and pofan policies"`
	POfan *POfanParams `json:"pofan,omitempty" what:"the pofan policy"`
	AR    *ARParams    `json:"ar,omitempty" what:"the ar policy"`
}

// PolicyBlocks lists the policies' parameter blocks in file order.
var PolicyBlocks = params.BlocksOf[PolicyParams]()

// Policy is one registry entry: an uplink choice policy of the eBPF
// switch. Adding a policy is adding an entry here and its code in
// bpf/c/policy.h.
type Policy struct {
	Name string
	Doc  string // what a switch does for each upward packet
	// Blocks are the keys of the parameter blocks it reads.
	Blocks []string
	// Shaped: the policy reads the link model's queues, so it needs mode
	// shaped.
	Shaped bool
	// PerFlow: every packet of a flow and entropy takes one path, so a
	// path is a FIFO the fidelity check can verify.
	PerFlow bool
	// BPF is the policy's id in the data plane.
	BPF bpf.Policy
}

// ECMP is the name of the hashing policy: the default, and the one whose
// path choices bpf.FlowHash mirrors in Go.
const ECMP = "ecmp"

// Policies is the registry, in the order docs list them.
var Policies = []Policy{
	{Name: ECMP, BPF: bpf.PolicyECMP, PerFlow: true,
		Doc: "hashes the packet's 5-tuple (including the transport's entropy in the UDP source port); every packet of a flow and entropy takes one path"},
	{Name: "ofan", BPF: bpf.PolicyOfan, Blocks: []string{"ofan"},
		Doc: "Ofan: one round-robin pointer per destination edge switch (edge switches) or destination pod (aggregation switches) and packet size class, each cycling through the uplinks in its own order (Ofan section 4)"},
	{Name: "pofan", BPF: bpf.PolicyPofan, Blocks: []string{"ofan", "pofan"},
		Doc: "pOfan: like ofan, but every pipe of pofan.pipe ports keeps its own pointers (Ofan section 5)"},
	{Name: "rr", BPF: bpf.PolicyRR,
		Doc: "one round-robin pointer over the uplinks for all packets"},
	{Name: "random", BPF: bpf.PolicyRandom,
		Doc: "a uniformly random uplink (RSQ)"},
	{Name: "ar", BPF: bpf.PolicyAR, Blocks: []string{"ar"}, Shaped: true,
		Doc: "adaptive routing: the uplink with the shortest queue, queues compared in quanta of ar.quantum, ties broken at random"},
}

// PolicyNames lists the policies' names.
func PolicyNames() []string {
	out := make([]string, len(Policies))
	for i, p := range Policies {
		out[i] = p.Name
	}
	return out
}

// LookupPolicy returns the registry entry of a policy.
func LookupPolicy(name string) (Policy, error) {
	i := slices.IndexFunc(Policies, func(p Policy) bool { return p.Name == name })
	if i < 0 {
		return Policy{}, params.OneOf("policy", name, PolicyNames())
	}
	return Policies[i], nil
}

// DefaultPolicyParams returns every policy block with its defaults.
func DefaultPolicyParams() PolicyParams {
	var p PolicyParams
	for _, b := range PolicyBlocks {
		params.Put(&p, b.Key, b.Defaults(params.Env{}).Interface())
	}
	return p
}

// SetPolicyParams takes the values of the blocks p holds into c's data
// plane settings; absent blocks leave them as they are.
func (c *Config) SetPolicyParams(p PolicyParams) {
	if p.Ofan != nil {
		c.AckThreshold = int(p.Ofan.AckThreshold)
	}
	if p.POfan != nil {
		c.PipeSize = p.POfan.Pipe
	}
	if p.AR != nil {
		c.ARQuantum = int(p.AR.Quantum)
	}
}

// policyParams are c's data plane settings as parameter blocks.
func (c Config) policyParams() PolicyParams {
	return PolicyParams{
		Ofan:  &OfanParams{AckThreshold: uint64(c.AckThreshold)},
		POfan: &POfanParams{Pipe: c.PipeSize},
		AR:    &ARParams{Quantum: uint64(c.ARQuantum)},
	}
}

// checkPolicyParams validates c's settings against the blocks' bounds.
func (c Config) checkPolicyParams() []error {
	var errs []error
	p := c.policyParams()
	for _, b := range PolicyBlocks {
		if err := b.Validate(params.Get(&p, b.Key)); err != nil {
			errs = append(errs, fmt.Errorf("policy parameter %w", err))
		}
	}
	return errs
}
