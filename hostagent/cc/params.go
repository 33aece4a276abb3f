package cc

import (
	"fmt"
	"time"

	"github.com/ftlab/ftlab/internal/params"
)

// The algorithms' parameter blocks, declared once here (tags: package
// internal/params): the scenario decoder, the agent protocol and
// docs/scenarios.md read them. Windows are written in packets of the
// flow's full payload (the MSS) or in BDPs (the host's line rate times the
// fabric's base RTT), and durations may be multiples of the base RTT, so
// an algorithm keeps its behaviour when the fabric runs slower.

// DCTCPParams configure DCTCP (RFC 8257) over TCP's window growth (RFC
// 5681 slow start and congestion avoidance, RFC 6928's initial window).
type DCTCPParams struct {
	G             float64 `yaml:"g" json:"g" default:"0.0625" gt:"0" max:"1" doc:"weight of the newest window's marked fraction in alpha, the estimate of the fraction of marked bytes (RFC 8257: 1/16)"`
	AlphaInit     float64 `yaml:"alpha_init" json:"alpha_init" default:"1" min:"0" max:"1" doc:"alpha before the first window of data ends (RFC 8257: 1, the cautious choice)"`
	InitialWindow int     `yaml:"initial_window" json:"initial_window" default:"10" min:"1" max:"1048576" doc:"window of a new flow, in packets (RFC 6928: 10); it grows in slow start until the first mark or loss"`
	MinWindow     int     `yaml:"min_window" json:"min_window" default:"2" min:"1" max:"1048576" doc:"smallest window a mark or a loss leaves, in packets (as Linux's DCTCP); a timeout restarts from one packet (RFC 5681's loss window)"`
}

// MPRDMAParams configure MP-RDMA's congestion control (Lu et al., NSDI
// 2018): one window over all paths, changed on every ACK.
type MPRDMAParams struct {
	InitialWindow float64 `yaml:"initial_window" json:"initial_window_bdp" default:"1" gt:"0" max:"64" doc:"window of a new flow, in BDPs: an RDMA NIC starts at line rate"`
	Increase      float64 `yaml:"increase" json:"increase" default:"1" gt:"0" max:"64" doc:"an ACK without ECE grows the window by increase/cwnd packets, so the flow as a whole gains increase packets per round trip however many paths it uses"`
	Decrease      float64 `yaml:"decrease" json:"decrease" default:"0.5" gt:"0" max:"64" doc:"an ACK with ECE shrinks the window by this many packets (MP-RDMA's 1/2: a round trip with a fraction F marked loses F x cwnd/2, DCTCP's cut with alpha = F); a packet declared lost counts as a mark"`
	MinWindow     float64 `yaml:"min_window" json:"min_window" default:"1" gt:"0" max:"1048576" doc:"smallest window, in packets; below one packet the flow sends one packet every MSS/window round trips"`
}

// NSCCParams configure the Ultra Ethernet Transport's network-signal
// congestion control (UE specification 1.0, congestion management; the reference
// model is htsim's). Its constants are given for the reference network
// (100 Gbit/s, 12 us) and scaled to this one: a = BDP / reference BDP,
// b = target / 12 us.
type NSCCParams struct {
	Target        time.Duration `yaml:"target" json:"target_ns" default:"1rtt" rtt:"ok" min:"1ns" doc:"target queueing delay: the RTT sample less the flow's smallest RTT (the spec: the base RTT, 0.75 of it with trimming)"`
	MaxWindow     float64       `yaml:"max_window" json:"max_window_bdp" default:"1.5" gt:"0" max:"64" doc:"largest window, in BDPs (the spec: 1.5)"`
	InitialWindow float64       `yaml:"initial_window" json:"initial_window_bdp" default:"1.5" gt:"0" max:"64" doc:"window of a new flow, in BDPs (the spec: the maximum window); at most max_window"`
	Alpha         float64       `yaml:"alpha" json:"alpha" default:"4" min:"0" max:"1000" doc:"proportional increase when the delay is below target and unmarked: alpha x MSS x a x b per round trip with an empty queue, less as the delay nears the target"`
	FairIncrease  float64       `yaml:"fair_increase" json:"fair_increase" default:"5" min:"0" max:"1000" doc:"fair increase when the delay is above target but unmarked: this many MSS x a per round trip, the same for every flow"`
	Eta           float64       `yaml:"eta" json:"eta" default:"0.15" min:"0" max:"1000" doc:"extra increase of eta x MSS x a every adjust_period"`
	FastIncrease  float64       `yaml:"fast_increase" json:"fast_increase" default:"0.25" min:"0" max:"1000" doc:"fast increase: after a window of ACKs with delay under fast_delay the window grows by this x a per acknowledged byte"`
	FastDelay     time.Duration `yaml:"fast_delay" json:"fast_delay_ns" default:"0.083rtt" rtt:"ok" doc:"delay under which ACKs count towards fast increase (the reference model: 1 us of 12 us)"`
	Gamma         float64       `yaml:"gamma" json:"gamma" default:"0.8" gt:"0" max:"1" doc:"multiplicative decrease when marked and the delay is above target: cwnd x (1 - gamma x (avg_delay - target)/avg_delay), at most once per base RTT"`
	MaxDecrease   float64       `yaml:"max_decrease" json:"max_decrease" default:"0.5" gt:"0" lt:"1" doc:"the largest fraction one multiplicative decrease may take"`
	DelayEWMA     float64       `yaml:"delay_ewma" json:"delay_ewma" default:"0.0125" gt:"0" max:"1" doc:"weight of a new sample in the average queueing delay"`
	QuickAdapt    float64       `yaml:"qa_threshold" json:"qa_threshold" default:"4" gt:"0" max:"1000" doc:"quick adapt: a loss, or a delay above qa_threshold x target, sets the window to what was delivered in the last base RTT + target"`
	QAGate        int           `yaml:"qa_gate" json:"qa_gate" default:"3" min:"0" max:"30" doc:"quick adapt acts only when that delivery was below max_window / 2^qa_gate"`
	NoQuickAdapt  bool          `yaml:"no_quick_adapt" json:"no_quick_adapt" default:"false" doc:"disable quick adapt (ablation)"`
	AdjustPackets int           `yaml:"adjust_packets" json:"adjust_packets" default:"8" min:"1" max:"1048576" doc:"the increases collected are applied after this many packets are acknowledged, or adjust_period"`
	AdjustPeriod  time.Duration `yaml:"adjust_period" json:"adjust_period_ns" default:"1rtt" rtt:"ok" min:"1ns" doc:"longest wait before the increases collected are applied"`
}

// Check enforces what no single NSCC parameter can.
func (p *NSCCParams) Check() (string, string) {
	if p.InitialWindow > p.MaxWindow {
		return "initial_window", fmt.Sprintf("initial_window %g is above max_window %g", p.InitialWindow, p.MaxWindow)
	}
	return "", ""
}

// SwiftParams configure Swift (Kumar et al., SIGCOMM 2020): a delay target
// scaled by path length and by the flow's window, additive increase below
// it, multiplicative decrease above it at most once per round trip.
type SwiftParams struct {
	BaseTarget    time.Duration `yaml:"base_target" json:"base_target_ns" default:"1.2rtt" rtt:"ok" min:"1ns" doc:"the delay target before scaling: the fabric's round trip plus the queueing allowed (ACKs here are not delayed, so the RTT sample is Swift's fabric delay)"`
	Hops          int           `yaml:"hops" json:"hops" default:"0" min:"0" max:"64" doc:"switch hops of the path, for the per-hop term (ftlab's ACKs carry no hop count: 0 leaves the term out, the fabric's longest path applies it to every flow)"`
	PerHop        time.Duration `yaml:"per_hop" json:"per_hop_ns" default:"0.05rtt" rtt:"ok" doc:"target added per switch hop"`
	FSRange       time.Duration `yaml:"fs_range" json:"fs_range_ns" default:"1rtt" rtt:"ok" doc:"flow scaling: most target added for a small window, so many small flows can share a queue (0 turns it off)"`
	FSMinWindow   float64       `yaml:"fs_min_window" json:"fs_min_window" default:"0.1" gt:"0" max:"1048576" doc:"window, in packets, at and below which flow scaling adds all of fs_range"`
	FSMaxWindow   float64       `yaml:"fs_max_window" json:"fs_max_window" default:"100" gt:"0" max:"1048576" doc:"window, in packets, at and above which flow scaling adds nothing; above fs_min_window"`
	AI            float64       `yaml:"ai" json:"ai" default:"1" gt:"0" max:"1000" doc:"additive increase, in packets per round trip, while the delay is below target"`
	Beta          float64       `yaml:"beta" json:"beta" default:"0.8" gt:"0" max:"1" doc:"multiplicative decrease: cwnd x (1 - beta x (delay - target)/delay), at most once per round trip"`
	MaxMDF        float64       `yaml:"max_mdf" json:"max_mdf" default:"0.5" gt:"0" lt:"1" doc:"the largest fraction one decrease may take; also the cut on a loss"`
	RetxReset     int           `yaml:"retx_reset" json:"retx_reset" default:"5" min:"1" max:"1000" doc:"consecutive retransmission timeouts after which the window drops to min_window"`
	InitialWindow float64       `yaml:"initial_window" json:"initial_window_bdp" default:"1" gt:"0" max:"64" doc:"window of a new flow, in BDPs"`
	MinWindow     float64       `yaml:"min_window" json:"min_window" default:"0.01" gt:"0" max:"1048576" doc:"smallest window, in packets; below one packet the flow sends one packet every MSS/window round trips (Swift's pacing mode)"`
}

// Check enforces what no single Swift parameter can.
func (p *SwiftParams) Check() (string, string) {
	if p.FSMaxWindow <= p.FSMinWindow {
		return "fs_max_window", fmt.Sprintf("fs_max_window %g must be above fs_min_window %g", p.FSMaxWindow, p.FSMinWindow)
	}
	return "", ""
}

// Params are an algorithm's parameter blocks, as scenario files write them
// and the agent protocol carries them (typed JSON); the blocks an
// algorithm does not take are nil. Each field is one block: its key is the
// json name, its what tag says who reads it.
type Params struct {
	DCTCP  *DCTCPParams  `json:"dctcp,omitempty" what:"the dctcp congestion control"`
	MPRDMA *MPRDMAParams `json:"mprdma,omitempty" what:"the mprdma congestion control"`
	NSCC   *NSCCParams   `json:"nscc,omitempty" what:"the nscc congestion control"`
	Swift  *SwiftParams  `json:"swift,omitempty" what:"the swift congestion control"`
}

// Blocks lists the algorithms' parameter blocks in file order.
var Blocks = params.BlocksOf[Params]()
