package scheme

import (
	"fmt"
	"time"

	"github.com/ftlab/ftlab/internal/params"
)

// The transports' parameter blocks. Each is declared once, here: its
// keys, defaults, bounds and one-line documentation are the struct tags
// (package internal/params), and the scenario decoder, the agent protocol
// (Params, as typed JSON) and docs/scenarios.md all read them. Durations
// tagged rtt:"ok" default to multiples of the fabric's base RTT, so a
// scheme keeps its behaviour when the fabric runs slower.

// ECMPParams configure the ecmp transport.
type ECMPParams struct {
	KeepPathOnRTO bool `yaml:"keep_path_on_rto" json:"keep_path_on_rto" default:"false" doc:"keep the message on its entropy when the retransmission timer expires (by default it moves to a new random one)"`
}

// RSSParams configure reactive subflow spraying (Ordered Chaos III), for
// rss, rss+pfld and rss+rack.
type RSSParams struct {
	Sigma         int           `yaml:"sigma" json:"sigma" default:"16" min:"1" max:"256" pow2:"true" doc:"subflows per message; PSN p is sent on subflow p mod sigma (the low log2(sigma) entropy bits carry the subflow)"`
	Tau           time.Duration `yaml:"tau" json:"tau_ns" default:"1rtt" rtt:"ok" min:"1us" doc:"rerouting interval: at the first feedback after each deadline the worst subflow moves to a new path; a multiple of the RTT, as the paper asks (its 15 us is about one RTT of its fabric, V-A2)"`
	Jitter        time.Duration `yaml:"jitter" json:"jitter_ns" default:"0.1rtt" rtt:"ok" doc:"most random time added to each deadline, so flows do not reroute in step; shorter than tau"`
	Metric        string        `yaml:"metric" json:"metric" default:"mean-rtt" enum:"mean-rtt,max-rtt,ecn-fraction" doc:"what ranks subflows: mean RTT, maximum RTT or fraction of ECN marks over the interval"`
	NoFeedback    time.Duration `yaml:"no_feedback" json:"no_feedback_ns" default:"off" zero:"off" rtt:"ok" min:"1us" doc:"reroute a subflow that sent but heard nothing on its path for this long (the optional no-feedback timer of Ordered Chaos III-B)"`
	KeepPathOnRTO bool          `yaml:"keep_path_on_rto" json:"keep_path_on_rto" default:"false" doc:"keep subflows on their entropies when the retransmission timer expires (by default the timed-out subflows are rerouted)"`
}

// Check enforces what no single RSS parameter can: the jitter must leave
// the interval positive.
func (p *RSSParams) Check() (string, string) {
	if p.Jitter >= p.Tau {
		return "jitter", fmt.Sprintf("jitter %s must be shorter than tau %s, or deadlines could pass before they are set", p.Jitter, p.Tau)
	}
	return "", ""
}

// PFLDParams configure precise fast loss detection (Ordered Chaos IV);
// the no_* switches exist for ablations (the paper's Fig. 15).
type PFLDParams struct {
	BitmapBits      int  `yaml:"bitmap_bits" json:"bitmap_bits" default:"512" min:"64" max:"1048576" multiple:"64" doc:"receiver's per-flow tracking window, in packets; a host.window of more packets than this is an error"`
	Periodic        int  `yaml:"periodic" json:"periodic" default:"8" zero:"off" min:"1" max:"65536" doc:"proactive probes by count: a periodic probe after every P new packets of a subflow, however fast it sends (the P of Ordered Chaos V-F, which compares 16, 8, 4 and 1); off sends none by count"`
	PeriodicPerRTT  bool `yaml:"periodic_per_rtt" json:"periodic_per_rtt" default:"false" doc:"proactive probes by time, the 'at most once per RTT' variant of Ordered Chaos V-F: a periodic probe behind a subflow's new packet once a smoothed RTT has passed since its last probe (or its first packet); independent of periodic (with both on, either sends one); V-F's variant alone is periodic: off with this on"`
	NoTailProbes    bool `yaml:"no_tail_probes" json:"no_tail_probes" default:"false" doc:"send no tail probes (ablation)"`
	NoSectionProbes bool `yaml:"no_section_probes" json:"no_section_probes" default:"false" doc:"send no probes when a subflow moves to a new path (ablation)"`
	NoRTXProbes     bool `yaml:"no_rtx_probes" json:"no_rtx_probes" default:"false" doc:"send no probe behind a retransmission (ablation)"`
}

// RACKParams configure RACK-TLP loss detection (RFC 8985), kept per
// subflow.
type RACKParams struct {
	ReoWnd           time.Duration `yaml:"reo_wnd" json:"reo_wnd_ns" default:"auto" zero:"auto" doc:"reordering window: a packet is lost once one of its subflow sent later was delivered and RACK.rtt plus this has passed since it was sent; a fixed value turns off the rules of auto; auto is RFC 8985's: reo_wnd_frac of the windowed minimum RTT, times the DSACK multiplier, capped at the smoothed RTT, and 0 while no reordering has been seen and the subflow is in recovery or has 3 packets acknowledged above a hole"`
	ReoWndFrac       float64       `yaml:"reo_wnd_frac" json:"reo_wnd_frac" default:"0.25" gt:"0" max:"16" doc:"the automatic reordering window as a fraction of the minimum RTT (RFC 8985: 1/4)"`
	Adaptive         bool          `yaml:"adaptive_reo_wnd" json:"adaptive_reo_wnd" default:"true" doc:"adapt the automatic window to duplicate deliveries (DSACKs), RFC 8985 6.2 step 4: the multiplier grows by one in each round trip that sees one, and returns to 1 after 16 recoveries without"`
	AssumeReordering bool          `yaml:"assume_reordering" json:"assume_reordering" default:"false" doc:"start each flow as if reordering had been seen, so the automatic window never falls to 0 (RFC 8985 zeroes it until a packet is delivered out of order within its subflow)"`
	MinRTTWindow     time.Duration `yaml:"min_rtt_window" json:"min_rtt_window_ns" default:"1000rtt" rtt:"ok" min:"1us" doc:"span of the windowed minimum RTT the window is a fraction of (RFC 8985 6.2 asks for one that follows a move to longer paths; Linux keeps 5 minutes, a flow's whole life at datacenter RTTs)"`
	PTOSRTTs         float64       `yaml:"pto_srtts" json:"pto_srtts" default:"2" gt:"0" max:"1000" doc:"tail loss probe timeout, in smoothed RTTs (RFC 8985: 2), never later than the retransmission timer"`
	MaxACKDelay      time.Duration `yaml:"max_ack_delay" json:"max_ack_delay_ns" default:"0s" doc:"added to the probe timeout when a subflow has one packet outstanding (RFC 8985's WCDelAckT; receivers here acknowledge every packet at once)"`
	NoTLP            bool          `yaml:"no_tlp" json:"no_tlp" default:"false" doc:"disable tail loss probes (RACK alone; ablation)"`
}

// PSNPathParams configure PSN-PATH, and the gapnack baseline, which runs
// PSN-PATH's sender and path manager with a global-gap NACK receiver
// (max_walk and no_fpsn do not apply to it).
//
// DT-Switch judges a path by its score (PathScore): (acks - beta x
// losses) / (acks + losses) over at least min_samples of them, which is
// 1 - (1 + beta) x the path's loss rate, so a threshold t catches loss
// rates above (1 - t) / (1 + beta) (LossRateAt). The defaults explore a
// path losing more than 5% and remove one losing more than 10% (or
// silent); min_samples 16 puts one loss between the two thresholds and two
// beyond the second, and a path collects 16 samples within a few intervals
// at the rates ftlab runs (a k=4 fat tree's base RTT holds 7 to 21
// full-size packets, 2 to 5 per path of a lone flow). A path is judged as
// soon as its losses decide it, so a lossy path is caught when its losses
// come, not when its samples add up.
type PSNPathParams struct {
	Paths         int           `yaml:"k" json:"k" default:"4" min:"1" max:"31" doc:"logical paths; PSN p goes on path p mod k (the paper recommends 4)"`
	Beta          float64       `yaml:"beta" json:"beta" default:"4" min:"0" doc:"loss penalty of a path's score, (acks - beta x losses) / (acks + losses) over its samples: 1 - (1 + beta) x its loss rate, from -beta to 1"`
	Explore       float64       `yaml:"explore_threshold" json:"explore_threshold" default:"0.75" min:"-1000" max:"2" doc:"a path scoring below this has its entropy replaced by a candidate on trial (DT-Switch's first threshold): loss rates above (1 - this) / (1 + beta); above 1 explores at every evaluation (a stress setting)"`
	Remove        float64       `yaml:"remove_threshold" json:"remove_threshold" default:"0.5" min:"-1000" max:"2" doc:"a path scoring below this, or silent, leaves the active set at once (DT-Switch's second threshold): loss rates above (1 - this) / (1 + beta); below explore_threshold"`
	Interval      time.Duration `yaml:"interval" json:"interval_ns" default:"2rtt" rtt:"ok" min:"1us" doc:"how often the path manager evaluates scores; a path is judged at the first evaluation once it has min_samples, and silent when it heard nothing for an interval and two smoothed RTTs with packets outstanding"`
	MinSamples    int           `yaml:"min_samples" json:"min_samples" default:"16" min:"1" max:"1000000" doc:"ACKs and losses a path needs before it is judged, unless its losses already put it below explore_threshold however the rest turn out; with fewer than 1 / (the loss rate remove_threshold catches), one loss removes a path"`
	BitmapBits    int           `yaml:"bitmap_bits" json:"bitmap_bits" default:"512" min:"64" max:"1048576" multiple:"64" doc:"receiver's per-flow tracking window, in packets"`
	MaxWalk       int           `yaml:"max_walk" json:"max_walk" default:"1" min:"-1" max:"1000000" doc:"same-path predecessors the receiver examines per packet (1 is the paper's check; -1 walks back to the epoch's start)"`
	BaseEV        int           `yaml:"base_ev" json:"base_ev" default:"-1" min:"-1" max:"65535" doc:"entropy of path 0 (path i uses base_ev + i); -1 draws a random base per flow"`
	NoPathManager bool          `yaml:"no_path_manager" json:"no_path_manager" default:"false" doc:"keep the k initial paths, except on RTO (ablation: no path switching)"`
	NoFPSN        bool          `yaml:"no_fpsn" json:"no_fpsn" default:"false" doc:"the receiver ignores epoch boundaries (ablation: shows why FPSN is needed)"`
	NoFastRetx    bool          `yaml:"no_fast_retx" json:"no_fast_retx" default:"false" doc:"the receiver sends no NACKs, so losses are recovered by the retransmission timer and paths scored by ACKs and timeouts only (ablation: no fast retransmission, PSN-PATH 7.4)"`
	KeepPathOnRTO bool          `yaml:"keep_path_on_rto" json:"keep_path_on_rto" default:"false" doc:"keep paths on their entropies when the retransmission timer expires"`
}

// PathScore is DT-Switch's score of a path with acks ACKs and losses
// losses: (acks - beta x losses) / (acks + losses), 1 for a clean path and
// 1 - (1 + beta) x its loss rate otherwise. The scheme judges paths by it
// and the thresholds are documented in its terms.
func PathScore(acks, losses int, beta float64) float64 {
	return (float64(acks) - beta*float64(losses)) / float64(acks+losses)
}

// LossRateAt is the loss rate at which a path scores q: (1 - q) / (1 +
// beta), the inverse of PathScore.
func LossRateAt(q, beta float64) float64 { return (1 - q) / (1 + beta) }

// Check enforces that PSN-PATH's thresholds are ordered: a path is first
// explored, then removed.
func (p *PSNPathParams) Check() (string, string) {
	if p.Remove >= p.Explore {
		return "remove_threshold", fmt.Sprintf("remove_threshold %g (loss rates above %.3g%%) must be below explore_threshold %g (%.3g%%): a degrading path is first explored, then removed",
			p.Remove, 100*LossRateAt(p.Remove, p.Beta), p.Explore, 100*LossRateAt(p.Explore, p.Beta))
	}
	return "", ""
}

// PLBParams configure protective load balancing. The defaults are the
// ones Ordered Chaos ran PLB with (V-A2, after FlowBender: ECN threshold
// 0.05, rerouted every congestion period); PLB's own (Qureshi et al.,
// SIGCOMM '22, as Linux ships it: tcp_plb_*) are threshold 0.5, rounds 12,
// idle_rounds 3 and suspend_after_rto 60s.
type PLBParams struct {
	ECNThreshold    float64       `yaml:"threshold" json:"threshold" default:"0.05" gt:"0" max:"1" doc:"fraction of ECN-marked packets in a round trip above which the round counts as congested (FlowBender's and Ordered Chaos's 0.05; PLB's own 0.5)"`
	Rounds          int           `yaml:"rounds" json:"rounds" default:"1" min:"1" max:"255" doc:"consecutive congested rounds after which the message moves to a new path, in flight or not (1: every congestion period, as Ordered Chaos runs it; PLB's own 12)"`
	IdleRounds      int           `yaml:"idle_rounds" json:"idle_rounds" default:"off" zero:"off" min:"1" max:"255" doc:"consecutive congested rounds after which the message moves as soon as nothing is in flight, so the move reorders nothing (PLB's preferred repath; its own 3); at most rounds to matter"`
	SuspendAfterRTO time.Duration `yaml:"suspend_after_rto" json:"suspend_after_rto_ns" default:"off" zero:"off" min:"1us" doc:"after a move on RTO, moves on congestion wait a random time between this and twice this, so flows do not pile onto a path that is failing (PLB's own 60s)"`
	KeepPathOnRTO   bool          `yaml:"keep_path_on_rto" json:"keep_path_on_rto" default:"false" doc:"keep the entropy when the retransmission timer expires"`
}

// REPSParams configure recycled entropy packet spraying.
type REPSParams struct {
	Buffer   int           `yaml:"cache" json:"cache" default:"16" min:"1" max:"4096" doc:"entropies whose packets came back unmarked kept for reuse"`
	Freeze   time.Duration `yaml:"freeze" json:"freeze_ns" default:"rto" zero:"rto" doc:"how long the sender stops exploring after a timeout; rto is the retransmission timeout in force when it starts"`
	NoFreeze bool          `yaml:"no_freeze" json:"no_freeze" default:"false" doc:"never freeze (ablation)"`
}

// Params are a transport's parameter blocks, as scenario files write them
// and the agent protocol carries them (typed JSON); the blocks a
// transport does not take are nil. Each field is one block: its key is
// the json name, its what tag says who reads it.
type Params struct {
	ECMP    *ECMPParams    `json:"ecmp,omitempty" what:"the ecmp transport"`
	RSS     *RSSParams     `json:"rss,omitempty" what:"the rss, rss+pfld and rss+rack transports"`
	PFLD    *PFLDParams    `json:"pfld,omitempty" what:"the rss+pfld transport"`
	RACK    *RACKParams    `json:"rack,omitempty" what:"the rss+rack transport"`
	PSNPath *PSNPathParams `json:"psnpath,omitempty" what:"the psnpath and gapnack transports"`
	PLB     *PLBParams     `json:"plb,omitempty" what:"the plb transport"`
	REPS    *REPSParams    `json:"reps,omitempty" what:"the reps transport"`
}

// Blocks lists the transports' parameter blocks in file order.
var Blocks = params.BlocksOf[Params]()
