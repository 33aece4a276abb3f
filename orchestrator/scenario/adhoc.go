package scenario

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ftlab/ftlab/hostagent/cc"
	"github.com/ftlab/ftlab/hostagent/scheme"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/internal/params"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/orchestrator/workload"
	"github.com/ftlab/ftlab/switchd"
)

// AdHoc is a transfer made on a lab by hand (ftlab send), not from a
// file: what a scenario's cell would say about its transport.
type AdHoc struct {
	Transport Transport
	// CC is the congestion control ("" is DefaultCC).
	CC CCName
	// Params set parameters of the transport's blocks, the congestion
	// control's or the host block, as [block.]key=value ("sigma=8",
	// "rss.tau=2rtt", "swift.ai=2", "host.window=64KiB"); the others keep
	// their defaults at the fabric's base RTT.
	Params  []string
	Timeout time.Duration // default DefaultTimeout
}

// ForLab is the configuration of ad-hoc transfers on a lab that is up:
// the lab's topology and data plane as they are, and the transport of a,
// with every default a scenario file would get. Every parameter is
// checked as the agents will check it; the error names each bad one.
func ForLab(t *topology.Topology, dp switchd.Config, a AdHoc) (*Config, error) {
	if a.CC == "" {
		a.CC = DefaultCC
	}
	if err := errors.Join(oneOf("transport", a.Transport, Transports), oneOf("congestion control", a.CC, CCs)); err != nil {
		return nil, err
	}
	cfg := &Config{
		Topology: TopologyInfo{Name: t.Name, Source: t.Source, Kind: t.Kind, K: t.K, Leaves: t.Leaves, Spines: t.Spines,
			HostsPerLeaf: t.HostsPerLeaf, Hosts: len(t.Hosts()), Switches: len(t.Switches()), Links: len(t.Links)},
		DataPlane: LineRate, Transport: a.Transport, CC: a.CC, Trimming: dp.Trim, Timeout: a.Timeout,
		BaseRTT: BaseRTT(t), topo: t, fabric: workload.FabricOf(t), Policy: Policy{},
	}
	if dp.Mode == switchd.ModeShaped {
		cfg.DataPlane = Shaped
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	for _, ly := range Layers(t.Kind) {
		cfg.Policy[ly] = PolicyName(dp.EdgePolicy)
		if ly == LayerAgg {
			cfg.Policy[ly] = PolicyName(dp.AggPolicy)
		}
	}
	env := params.Env{RTT: cfg.BaseRTT}
	def, err := scheme.Defaults(string(a.Transport), env)
	if err != nil {
		return nil, err
	}
	cfg.Params = *def
	ccDef, err := cc.Defaults(string(a.CC), env)
	if err != nil {
		return nil, err
	}
	cfg.CCBlocks = *ccDef
	cfg.Host = transport.DefaultHost(env)
	var errs []error
	for _, kv := range a.Params {
		key, text, ok := strings.Cut(kv, "=")
		switch block, field, _ := strings.Cut(key, "."); {
		case !ok || key == "":
			err = errors.New("want [block.]key=value, e.g. sigma=8 or host.window=64KiB")
		case block == transport.HostBlock.Key:
			err = transport.HostBlock.Set(&cfg.Host, field, text, env)
		case (field != "" && blockKind(block) == kindCC) || (field == "" && ccTakes(a.CC, key)):
			err = cc.SetParam(&cfg.CCBlocks, string(a.CC), key, text, env)
		default:
			err = scheme.SetParam(&cfg.Params, string(a.Transport), key, text, env)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("param %q: %w", kv, err))
		}
	}
	if len(errs) == 0 {
		if msg := windowProblem(cfg); msg != "" {
			errs = append(errs, errors.New(msg))
		}
	}
	return cfg, errors.Join(errs...)
}

// ccTakes reports whether a bare parameter name is one of the congestion
// control's (then it is set there, not in the transport's blocks).
func ccTakes(name CCName, key string) bool {
	a, err := cc.Lookup(string(name))
	if err != nil {
		return false
	}
	for _, k := range a.Blocks {
		if b, ok := params.Find(cc.Blocks, k); ok && slices.Contains(b.Names(), key) {
			return true
		}
	}
	return false
}
