package scenario

import (
	"fmt"
	"math"
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
	// IPv4 20, UDP 8, ftlab's ACK 48 (wire.AckLen).
	ackFrame = 90
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
// full rate, plus each hop's processing, plus the links' propagation
// delays both ways (per stage, the longest of each direction; jitter is
// not counted: it only ever adds). Durations written as "2rtt" in a
// scenario are multiples of it, so a scenario keeps its timing when its
// rate changes (rate: auto).
func BaseRTT(t *topology.Topology) time.Duration {
	p := rttParts(t)
	if p.hops == 0 {
		return fallbackRTT
	}
	return p.serialization + p.processing + p.propagation
}

// rttPartsOf is the base RTT taken apart.
type rttPartsOf struct {
	hops          int           // links on the longest path
	frame         int           // bytes of a full-size frame, Ethernet header included
	serialization time.Duration // of a full frame out and an ACK back, at every hop
	processing    time.Duration // the machine's per-hop cost, both ways
	propagation   time.Duration // the links' delays, both ways
}

func rttParts(t *topology.Topology) rttPartsOf {
	full := t.FullRate()
	if full == 0 || len(t.Links) == 0 {
		return rttPartsOf{}
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
	return rttPartsOf{
		hops:          hops,
		frame:         mtu + ethernetHeader,
		serialization: time.Duration(math.Round(bits / float64(full) * 1e9)),
		processing:    time.Duration(2*hops) * perHopProcessing,
		propagation:   2 * pathDelay(t),
	}
}

// pathDelay is the one-way propagation delay of the fabric's longest
// path: a packet climbs every stage and comes down every stage, so it is
// the sum over the stages of the longest upward and the longest downward
// delay (exact when each stage's links are alike). The way back crosses
// the same stages in the other directions, so it is the same.
func pathDelay(t *topology.Topology) time.Duration {
	type updown struct{ up, down time.Duration }
	stages := map[topology.Stage]*updown{}
	for i := range t.Links {
		l := &t.Links[i]
		s := stages[l.Stage]
		if s == nil {
			s = &updown{}
			stages[l.Stage] = s
		}
		s.up, s.down = max(s.up, l.Up.Delay), max(s.down, l.Down.Delay)
	}
	var d time.Duration
	for _, s := range stages {
		d += s.up + s.down
	}
	return d
}

// Regime is a fabric in the ratios a transport sees it through, at the
// rates its topology gives (what a paper's setup says, when the topology
// is written in the paper's units) and as ftlab emulates it. When the
// scenario runs the fabric slower (rate, rate: auto, --rate), time is
// dilated by the ratio of the rates: every duration that belongs to the
// network (transport timing written in absolute time, fault times)
// stretches by Dilation, so the BDP in packets, buffers and ECN
// thresholds in packets and message sizes in BDPs stay the topology's.
// What does not stretch is the machine's own per-hop processing, which
// ftlab cannot make faster: ProcessingShare says how much of the
// emulated base RTT it is.
type Regime struct {
	// Dilation is the topology's full rate over the emulated one (1 when
	// the topology's rates hold).
	Dilation        float64 `json:"dilation"`
	TopologyRateBps uint64  `json:"topology_rate_bps"`
	EmulatedRateBps uint64  `json:"emulated_rate_bps"`
	// FrameBytes is a full-size frame.
	FrameBytes int `json:"frame_bytes"`
	// TopologyRTT is the base RTT of the topology at its own rates without
	// the machine's processing: serialization (and propagation).
	TopologyRTT time.Duration `json:"topology_rtt_ns"`
	// EmulatedRTT is the emulated base RTT (BaseRTT), processing
	// included, in emulated time.
	EmulatedRTT time.Duration `json:"emulated_rtt_ns"`
	// BDPs in full-size packets: what one flow has in flight at its line
	// rate over one base RTT.
	TopologyBDP float64 `json:"topology_bdp_packets"`
	EmulatedBDP float64 `json:"emulated_bdp_packets"`
	// ProcessingShare is the share of EmulatedRTT that is per-hop
	// processing, which time dilation cannot stretch.
	ProcessingShare float64 `json:"processing_share"`
}

// regimeOf computes the regime of a resolved topology whose rates rate
// set (nil: the topology's own).
func regimeOf(t *topology.Topology, rate *RateInfo) Regime {
	p := rttParts(t)
	r := Regime{Dilation: 1, EmulatedRateBps: t.FullRate(), TopologyRateBps: t.FullRate(), FrameBytes: p.frame}
	if rate != nil && rate.FullBps != 0 && rate.TopologyBps != 0 {
		r.TopologyRateBps = rate.TopologyBps
		r.Dilation = float64(rate.TopologyBps) / float64(rate.FullBps)
	}
	if p.hops == 0 {
		return r
	}
	r.EmulatedRTT = p.serialization + p.processing + p.propagation
	r.TopologyRTT = time.Duration(float64(p.serialization+p.propagation) / r.Dilation)
	bdp := func(rtt time.Duration, bps uint64) float64 {
		return rtt.Seconds() * float64(bps) / float64(8*p.frame)
	}
	r.TopologyBDP = bdp(r.TopologyRTT, r.TopologyRateBps)
	r.EmulatedBDP = bdp(r.EmulatedRTT, r.EmulatedRateBps)
	r.ProcessingShare = float64(p.processing) / float64(r.EmulatedRTT)
	return r
}

// Describe says the regime in one line for report.md and ftlab check:
// "dilation 2.5x (25Mbit topology at 10Mbit); base RTT 2.9 ms emulated
// (1.0 ms in the topology's time); BDP 2.4 packets (topology 1.0), 0.15
// per subflow of 16; processing 81% of the emulated RTT".
func (r Regime) Describe(sigma int) string {
	var b strings.Builder
	if r.Dilation != 1 {
		fmt.Fprintf(&b, "time dilated %.3gx (the topology's %s run at %s); ", r.Dilation, units.FormatRate(r.TopologyRateBps), units.FormatRate(r.EmulatedRateBps))
	}
	fmt.Fprintf(&b, "base RTT %s emulated (%s in the topology's time, without the machine's processing); BDP %.3g packets emulated (topology %.3g)",
		r.EmulatedRTT.Round(time.Microsecond), r.TopologyRTT.Round(100*time.Nanosecond), r.EmulatedBDP, r.TopologyBDP)
	if sigma > 1 {
		fmt.Fprintf(&b, ", %.2g per subflow of %d (topology %.2g)", r.EmulatedBDP/float64(sigma), sigma, r.TopologyBDP/float64(sigma))
	}
	fmt.Fprintf(&b, "; per-hop processing is %.0f%% of the emulated RTT", 100*r.ProcessingShare)
	return b.String()
}

// MaxRTT is the fabric's maximum unloaded round trip: BaseRTT's full-size
// frame out and header-only ACK back with each hop serialized at its own
// link's rate, over the slowest path for each (an ACK need not come back
// the data's way). It is what a transport with rto: paper sets its timeout
// from (Ordered Chaos V-A: "the topology's maximum unloaded RTT"); on a
// fabric whose links all run at one rate it equals BaseRTT, and a slow
// switch makes it longer. Link delays count as in BaseRTT.
func MaxRTT(t *topology.Topology) time.Duration {
	p := rttParts(t)
	if p.hops == 0 {
		return fallbackRTT
	}
	return max(slowestPath(t, p.frame)+slowestPath(t, ackFrame)+p.processing, p.serialization+p.processing) + p.propagation
}

// slowestPath is the longest serialization time of a frame of the given
// size over the fabric's longest paths: up from a host to a top-tier switch
// (core or spine) and down another of its links to a host, each hop at the
// rate of its direction.
func slowestPath(t *topology.Topology, frame int) time.Duration {
	cost := func(p topology.LinkParams) float64 { return float64(frame) * 8e9 / float64(max(p.RateBps, 1)) }
	up := make(map[string]float64)   // node: slowest way up to it from a host
	down := make(map[string]float64) // node: slowest way from it down to a host
	tiers := make(map[string]int, len(t.Nodes))
	top := 0
	for _, n := range t.Nodes {
		tiers[n.Name] = n.Role.Tier()
		top = max(top, n.Role.Tier())
	}
	for tier := 1; tier <= top; tier++ { // links go from tier-1 (A) to tier (B)
		for _, l := range t.Links {
			if tiers[l.B.Node] != tier {
				continue
			}
			up[l.B.Node] = max(up[l.B.Node], up[l.A.Node]+cost(l.Up))
			down[l.B.Node] = max(down[l.B.Node], down[l.A.Node]+cost(l.Down))
		}
	}
	worst := 0.0
	for _, n := range t.Nodes {
		if n.Role.Tier() != top {
			continue
		}
		for _, in := range n.Ports {
			for _, out := range n.Ports {
				a, b := &t.Links[in.Link], &t.Links[out.Link]
				if in.Link == out.Link || in.Side != topology.SideB || out.Side != topology.SideB {
					continue
				}
				worst = max(worst, up[a.A.Node]+cost(a.Up)+cost(b.Down)+down[b.A.Node])
			}
		}
	}
	return time.Duration(worst)
}
