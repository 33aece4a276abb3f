package scenario

import (
	"fmt"
	"strings"
	"time"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/internal/yamldoc"
	"gopkg.in/yaml.v3"
)

// RateInfo records how a cell's link rates were set, when not simply by
// its topology.
type RateInfo struct {
	// Auto: the file says rate: auto, the highest rate at which this
	// machine's runs of the scenario get an OK fidelity verdict, found by
	// `ftlab bench calibrate`.
	Auto bool `json:"auto,omitempty"`
	// FullBps is the rate of the fabric's fastest link; every other link
	// keeps its ratio to it. 0 while an auto rate is not calibrated.
	FullBps uint64 `json:"full_bps"`
	// TopologyBps is the fastest link rate the topology itself sets.
	TopologyBps uint64 `json:"topology_bps"`
	// Source says where FullBps came from: "scenario", "--rate", or a
	// calibration.
	Source string `json:"source,omitempty"`
}

const wantRate = "a rate such as 25Mbit, or auto"

// Describe says at what rate the fabric runs and where that came from:
// "6.25Mbit (rate: auto, from calibration of ...; the topology's 25Mbit)".
func (r *RateInfo) Describe() string {
	from := "from " + r.Source
	if r.Auto {
		from = "rate: auto, " + from
	}
	return fmt.Sprintf("%s (%s; the topology's %s)", units.FormatRate(r.FullBps), from, units.FormatRate(r.TopologyBps))
}

// rate decodes the rate field (and Options.Rate, which takes its place)
// and scales the cell's topology to it.
func (l *loader) rate(cfg *Config, t *topology.Topology, nodes map[string]*yaml.Node, w *yamldoc.Walker,
	scalar func(key, want string) (string, bool), pr *yamldoc.Problems) {
	var info *RateInfo
	if s, ok := scalar("rate", wantRate); ok {
		switch v, err := units.ParseRate(s); {
		case strings.EqualFold(strings.TrimSpace(s), "auto"):
			info = &RateInfo{Auto: true}
		case err != nil:
			pr.Add(w.Val("rate"), "rate", "%v; or auto: the highest rate at which this machine's runs get an OK fidelity verdict", err)
		case v == 0:
			pr.Add(w.Val("rate"), "rate", "must be greater than 0")
		default:
			info = &RateInfo{FullBps: v, Source: "scenario"}
		}
	}
	if l.opt.Rate != 0 {
		if info == nil {
			info = &RateInfo{}
		}
		info.FullBps, info.Source = l.opt.Rate, l.opt.RateSource
	}
	cfg.Rate = info
	if info == nil || t == nil {
		return
	}
	info.TopologyBps = t.FullRate()
	if info.FullBps != 0 {
		t.ScaleRates(info.FullBps)
	}
}

// NeedsRate reports whether a cell says rate: auto and no rate has been
// given for it yet (LoadWith with Options.Rate): such a scenario can be
// checked but not run.
func (s *Scenario) NeedsRate() bool {
	for _, c := range s.Cells {
		if r := c.Config.Rate; r != nil && r.Auto && r.FullBps == 0 {
			return true
		}
	}
	return false
}

// Base RTT model.
const (
	// ackFrame is a header-only transport packet on the wire: Ethernet 14,
	// IPv4 20, UDP 8, ftlab's header 40.
	ackFrame = 82
	// perHopProcessing is what a hop adds besides serialization on ftlab's
	// kind of machine: veth, XDP and TC, a softirq hand-off (measured:
	// pingall over 12 hops of an idle k=4 shaped lab, p50 1.9 ms).
	perHopProcessing = 150 * time.Microsecond
	// fallbackRTT stands in when a cell has no topology (it has errors).
	fallbackRTT = time.Millisecond
)

// BaseRTT is the round trip over the fabric's longest path (6 links in a
// fat tree, 4 in a leaf-spine) when it is idle: a full-size frame out and
// a header-only ACK back, each serialized at every hop at the fabric's
// full rate, plus each hop's processing. Durations written as "2rtt" in
// a scenario are multiples of it, so a scenario keeps its timing when its
// rate changes (rate: auto).
func BaseRTT(t *topology.Topology) time.Duration {
	full := t.FullRate()
	if full == 0 || len(t.Links) == 0 {
		return fallbackRTT
	}
	hops := 6
	if t.Kind == topology.LeafSpine {
		hops = 4
	}
	mtu := t.Links[0].MTU
	for _, l := range t.Links {
		mtu = min(mtu, l.MTU)
	}
	bits := float64(hops*(mtu+ethernetHeader+ackFrame)) * 8
	return time.Duration(bits/float64(full)*1e9) + time.Duration(2*hops)*perHopProcessing
}
