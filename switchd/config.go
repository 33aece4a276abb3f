package switchd

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ftlab/ftlab/bpf"
)

// DataPlane says what forwards packets in a lab's switches.
type DataPlane string

const (
	// DataPlaneBPF is ftlab's eBPF switch: XDP and TC programs per switch.
	DataPlaneBPF DataPlane = "bpf"
	// DataPlaneKernel is Linux IP forwarding with multipath routes: the
	// reference the eBPF switch is checked and measured against.
	DataPlaneKernel DataPlane = "kernel"
	// DataPlaneNone leaves the switches without forwarding (links only).
	DataPlaneNone DataPlane = "none"
)

// DataPlanes lists the valid data planes.
var DataPlanes = []DataPlane{DataPlaneBPF, DataPlaneKernel, DataPlaneNone}

// Modes of the eBPF switch.
const (
	ModeLineRate = "linerate" // XDP redirect: no queues, highest packet rate
	ModeShaped   = "shaped"   // TC redirect through HTB at the link rate, link model in BPF
)

// Config is a lab's data plane configuration, recorded in the lab state.
type Config struct {
	DataPlane DataPlane `json:"dataplane"`
	Mode      string    `json:"mode,omitempty"` // bpf: linerate or shaped
	// Policy per layer: Edge applies to edge and leaf switches, Agg to
	// aggregation switches. Core and spine switches only go down.
	EdgePolicy string `json:"edge_policy,omitempty"`
	AggPolicy  string `json:"agg_policy,omitempty"`
	// PipeSize is pofan's pipe: consecutive ingress ports sharing pointers.
	PipeSize int `json:"pipe_size,omitempty"`
	// AckThreshold: IPv4 packets of at most this many bytes are ACK class.
	AckThreshold int `json:"ack_threshold,omitempty"`
	// ARQuantum quantizes backlogs compared by ar, in bytes.
	ARQuantum int `json:"ar_quantum,omitempty"`
	// Trim cuts data packets to their headers instead of dropping them
	// when the buffer is full (shaped mode).
	Trim bool `json:"trim,omitempty"`
	// ProbeHeadroom is the share of every port's buffer that only the
	// transport's header-only probes may use (shaped mode; Ordered Chaos
	// IV-B4); 0 is off.
	ProbeHeadroom float64 `json:"probe_headroom,omitempty"`
	// Seed makes ECMP hash seeds and Ofan pointer starts reproducible.
	Seed uint64 `json:"seed"`
	// ConvergenceDelay is how long switches keep using a failed link's
	// routes before they reconverge, as BGP would take.
	ConvergenceDelay time.Duration `json:"convergence_delay_ns"`
	// AgentPort is the host agents' UDP port: the eBPF switch adds each
	// link's propagation delay to packets to it (default DefaultAgentPort).
	AgentPort uint16 `json:"agent_port,omitempty"`
}

// DefaultAgentPort is the host agents' UDP port unless told otherwise
// (hostagent/agent.DefaultPort; switchd cannot import the agents, and a
// test of the runner checks the two agree).
const DefaultAgentPort = 4791

// DefaultConvergenceDelay is how long switches take to reconverge by
// default: a few BGP update rounds in a datacenter.
const DefaultConvergenceDelay = 50 * time.Millisecond

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	if c.DataPlane == "" {
		c.DataPlane = DataPlaneBPF
	}
	if c.DataPlane == DataPlaneBPF {
		if c.Mode == "" {
			c.Mode = ModeLineRate
		}
		if c.EdgePolicy == "" {
			c.EdgePolicy = ECMP
		}
		if c.AggPolicy == "" {
			c.AggPolicy = c.EdgePolicy
		}
		def := Config{}
		def.SetPolicyParams(DefaultPolicyParams())
		if c.PipeSize == 0 {
			c.PipeSize = def.PipeSize
		}
		if c.AckThreshold == 0 {
			c.AckThreshold = def.AckThreshold
		}
		if c.ARQuantum == 0 {
			c.ARQuantum = def.ARQuantum
		}
		if c.AgentPort == 0 {
			c.AgentPort = DefaultAgentPort
		}
	}
	if c.ConvergenceDelay == 0 {
		c.ConvergenceDelay = DefaultConvergenceDelay
	}
	return c
}

// Validate reports every invalid field at once.
func (c Config) Validate() error {
	var errs []error
	if !slices.Contains(DataPlanes, c.DataPlane) {
		errs = append(errs, fmt.Errorf("dataplane %q is unknown (valid: bpf, kernel, none)", c.DataPlane))
	}
	if c.DataPlane == DataPlaneBPF {
		if c.Mode != ModeLineRate && c.Mode != ModeShaped {
			errs = append(errs, fmt.Errorf("mode %q is unknown (valid: %s, %s)", c.Mode, ModeLineRate, ModeShaped))
		}
		needShaped := map[string]bool{}
		for _, p := range []struct{ layer, name string }{{"edge", c.EdgePolicy}, {"agg", c.AggPolicy}} {
			pol, err := LookupPolicy(p.name)
			switch {
			case err != nil:
				errs = append(errs, fmt.Errorf("%s layer: %w", p.layer, err))
			case pol.Shaped && c.Mode != ModeShaped && !needShaped[p.name]:
				needShaped[p.name] = true
				errs = append(errs, fmt.Errorf("policy %s needs mode shaped: it reads the link model's queues", p.name))
			}
		}
		errs = append(errs, c.checkPolicyParams()...)
		if c.Trim && c.Mode != ModeShaped {
			errs = append(errs, errors.New("trimming needs mode shaped: line-rate mode has no queues"))
		}
		switch {
		case !(c.ProbeHeadroom >= 0 && c.ProbeHeadroom <= bpf.MaxProbeHeadroom):
			errs = append(errs, fmt.Errorf("probe headroom %v is outside 0..%v of the buffer", c.ProbeHeadroom, bpf.MaxProbeHeadroom))
		case c.ProbeHeadroom > 0 && c.Mode != ModeShaped:
			errs = append(errs, errors.New("a probe headroom needs mode shaped: line-rate mode has no queues"))
		}
	}
	if c.ConvergenceDelay < 0 {
		errs = append(errs, fmt.Errorf("convergence delay %v is negative", c.ConvergenceDelay))
	}
	return errors.Join(errs...)
}

// ParsePolicyFlag parses "ofan" (both layers) or "edge=ofan,agg=ecmp".
func ParsePolicyFlag(s string) (edge, agg string, err error) {
	if !strings.Contains(s, "=") {
		return s, s, nil
	}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(part, "=")
		switch {
		case !ok:
			return "", "", fmt.Errorf("policy %q: want NAME or edge=NAME,agg=NAME", s)
		case k == "edge" || k == "leaf":
			edge = v
		case k == "agg":
			agg = v
		default:
			return "", "", fmt.Errorf("policy %q: unknown layer %q (valid: edge, agg)", s, k)
		}
	}
	if edge == "" {
		edge = agg
	}
	if agg == "" {
		agg = edge
	}
	return edge, agg, nil
}
