package fidelity

import (
	"fmt"
	"slices"
)

// Verdict says whether a run's numbers reflect the emulated network.
type Verdict string

// Verdicts, from best to worst.
const (
	OK   Verdict = "OK"   // nothing suggests the machine distorted the run
	WARN Verdict = "WARN" // the machine may have distorted timing figures
	FAIL Verdict = "FAIL" // the emulation broke an invariant: the numbers are wrong
)

func (v Verdict) rank() int {
	switch v {
	case WARN:
		return 1
	case FAIL:
		return 2
	}
	return 0
}

// Worst returns the worse of two verdicts.
func Worst(a, b Verdict) Verdict {
	if b.rank() > a.rank() {
		return b
	}
	if a == "" {
		return OK
	}
	return a
}

// Thresholds of the verdict.
const (
	// MaxCPUSaturated: the machine saturated (SaturatedBusy of all cores
	// busy) for more than this share of the run's samples gives WARN.
	MaxCPUSaturated = 0.10
	// MaxPacingLoss: senders that lost more than this share of their
	// paced time for good to late departures (PacingInput.Loss) give WARN:
	// their flows may have finished up to that much later than on an
	// ideal machine.
	MaxPacingLoss = 0.10
	// MaxPacingLateSlots: held departures leaving after their slots by
	// more than this many of their own gaps on average (PacingInput.Late)
	// give WARN. Within its slot a departure keeps its place among its
	// flow's packets and moves no later slot (the pacer catches up); the
	// RTT samples are unaffected (packets are stamped when they leave).
	MaxPacingLateSlots = 1.0
	// MinLinkRate: a saturated link whose real queue served packets at
	// less than this share of its configured rate while it had packets
	// queued gives WARN.
	MinLinkRate = 0.95
	// SaturatedMinGaps and SaturatedBusyShare define a saturated link
	// direction: at least this many of its dequeues, and this share of
	// them, left packets queued behind them.
	SaturatedMinGaps   = 100
	SaturatedBusyShare = 0.5
	// MaxDelayLatePackets and MaxDelayLateRTT: the delay lines (link
	// delays emulated at the receivers) handing packets on later than
	// their ideal arrival, on average, by more than this many full-size
	// packet times or more than this share of the round trip the delays
	// make (twice the mean one-way delay applied), whichever is less,
	// give WARN (DelayInput.LateLimitNs). The line sits after every
	// queue, so its lateness changes nothing a switch sees; it changes
	// when the receiver (and, for ACKs, the sender) sees a packet. Under
	// a packet time a path's arrivals keep their order and slots, and a
	// delay-based congestion control sees less than one packet of
	// phantom queueing; under 1% of the RTT the RTT samples that RTO,
	// tau and RSS's metric rest on move by under 2%.
	MaxDelayLatePackets = 1.0
	MaxDelayLateRTT     = 0.01
	// Same-EV reordering (when checked) and unexplained drops: any gives
	// FAIL.
)

// LinkInput is one saturated link direction (a switch egress port).
type LinkInput struct {
	Switch      string  `json:"switch"`
	Port        int     `json:"port"`
	Link        string  `json:"link"`
	Direction   string  `json:"direction"`
	RateBps     uint64  `json:"rate_bps"`           // configured
	AchievedBps float64 `json:"achieved_bps"`       // served while packets were queued
	MeanBacklog float64 `json:"mean_backlog_bytes"` // the link model's time average
	BusyGaps    uint64  `json:"busy_gaps"`          // dequeues that left packets queued
	// MeanGapNs is the mean time from a dequeue that left packets queued
	// to the next; IdealGapNs the serialization time of the packets
	// served in those gaps at RateBps.
	MeanGapNs  float64 `json:"mean_gap_ns"`
	IdealGapNs float64 `json:"ideal_gap_ns"`
	// LagDecided counts the arrivals dropped, trimmed or CE-marked for
	// the real queue (the qdisc) holding more than the link model's: a
	// link served below its rate behaves as a slower link with the
	// configured buffer (bpf/c/realq.h). Reported, not judged: the rate
	// is (MinLinkRate).
	LagDecided uint64 `json:"lag_decided"`
}

// DropInput is one switch-to-switch link direction that lost packets no
// configured cause explains.
type DropInput struct {
	Link      string `json:"link"`
	From      string `json:"from"` // sending switch
	To        string `json:"to"`   // receiving switch
	Sent      uint64 `json:"sent"`
	Arrived   uint64 `json:"arrived"`
	QdiscDrop uint64 `json:"qdisc_drops"`
	Missing   uint64 `json:"unexplained"` // Sent - Arrived (if positive) + QdiscDrop
}

// PacingInput sums the senders' pacing over a run.
type PacingInput struct {
	Flows      int     `json:"flows"`       // flows with paced gaps
	Gaps       int     `json:"gaps"`        // paced gaps
	IntendedNs float64 `json:"intended_ns"` // sum of the gaps the rates ask for
	ActualNs   float64 `json:"actual_ns"`   // sum of the gaps achieved
	LateNs     float64 `json:"late_ns"`     // sum of the held departures' lateness against their slots
	LostNs     float64 `json:"lost_ns"`     // time the senders lost for good to late departures
	SpanNs     float64 `json:"span_ns"`     // the senders' paced time: first to last departure, summed
	MaxLateNs  int64   `json:"max_late_ns"` // worst departure after its slot
	WorstError float64 `json:"worst_flow_error"`
	WorstLoss  float64 `json:"worst_flow_loss"`
}

// Error is the gaps' error: 1 - intended/actual over all paced gaps (0 is
// perfect, 0.1 means gaps were 11% longer than asked). It is reported, not
// judged: a pacer woken late makes the time up on the next gaps, and the
// first held gap of every short train (a window-limited flow's ACK
// releasing two packets) pays the loop's full wake-up latency, so the
// figure counts jitter that costs the flow nothing as if it were lost
// rate. Loss and Late are what the verdict judges.
func (p PacingInput) Error() float64 {
	if p.ActualNs <= 0 {
		return 0
	}
	return 1 - p.IntendedNs/p.ActualNs
}

// Loss is the share of the senders' paced time lost for good to late
// departures: an upper bound on how much later their flows finished than
// on an ideal machine.
func (p PacingInput) Loss() float64 {
	if p.SpanNs <= 0 {
		return 0
	}
	return p.LostNs / p.SpanNs
}

// Late is how late the held departures left against their slots, on
// average, in their own gaps (1: a full gap late).
func (p PacingInput) Late() float64 {
	if p.IntendedNs <= 0 {
		return 0
	}
	return p.LateNs / p.IntendedNs
}

// DelayInput sums the delay lines' accounts over a run (zero Packets: the
// fabric has no link delays).
type DelayInput struct {
	Packets     uint64  `json:"packets"`
	MeanDelayNs float64 `json:"mean_delay_ns"` // the one-way delay applied, on average
	MeanLateNs  float64 `json:"mean_late_ns"`  // how late against the ideal arrival
	MaxLateNs   int64   `json:"max_late_ns"`
	// P99LateBelowNs bounds the lateness of 99% of the packets (a bucket
	// bound of transport.DelayLateBounds; -1: beyond the last).
	P99LateBelowNs int64 `json:"p99_late_below_ns"`
	// PacketNs is a full-size packet's time on the fabric's fastest link.
	PacketNs float64 `json:"packet_ns"`
}

// LateLimitNs is the mean lateness above which the verdict WARNs: the
// smaller of MaxDelayLatePackets packet times and MaxDelayLateRTT of the
// delays' round trip (0: no limit, the line held nothing).
func (d DelayInput) LateLimitNs() float64 {
	if d.Packets == 0 || d.PacketNs <= 0 {
		return 0
	}
	return min(MaxDelayLatePackets*d.PacketNs, MaxDelayLateRTT*2*d.MeanDelayNs)
}

// Late reports whether the delay lines were later than LateLimitNs.
func (d DelayInput) Late() bool {
	lim := d.LateLimitNs()
	return lim > 0 && d.MeanLateNs > lim
}

// Inputs are everything the verdict looks at, as recorded for one run.
type Inputs struct {
	CPU    *CPUStats   `json:"cpu,omitempty"` // nil: not sampled
	Links  []LinkInput `json:"saturated_links,omitempty"`
	Pacing PacingInput `json:"pacing"`
	// OrderChecked is true when an EV is one FIFO path (every layer runs
	// ECMP and no link failed during the run); ReorderedSameEV then counts
	// first copies that arrived after a higher PSN of their flow on the
	// same EV.
	OrderChecked bool `json:"order_checked"`
	// LinksUnmeasured says why the links' real queues were not measured
	// (shaped mode only; empty when they were or in line-rate mode).
	LinksUnmeasured string `json:"links_unmeasured,omitempty"`
	ReorderedSameEV int    `json:"reordered_same_ev"`
	// ReorderExample says where the first such packet arrived:
	// "h2-0-1 from 10.0.0.2, flow 7 PSN 120 after PSN 121 on EV 4242".
	ReorderExample string      `json:"reorder_example,omitempty"`
	Drops          []DropInput `json:"unexplained_drops,omitempty"`
	Delay          DelayInput  `json:"delay_line,omitzero"`
}

// Report is a run's fidelity: the verdict, why, and what it was based on.
type Report struct {
	Verdict Verdict  `json:"verdict"`
	Reasons []string `json:"reasons,omitempty"`
	// Over is how far the run was past the WARN limit it exceeded most:
	// the figure over its limit (2: twice the pacing loss, the saturated
	// share or the delay lines' lateness allowed; for a link, the rate it
	// should serve over the rate it served). 0 when no measured limit was
	// passed. Calibration aims its next trial with it.
	Over float64 `json:"over,omitempty"`
	Inputs
}

// Judge gives the verdict on a run's inputs.
func Judge(in Inputs) Report {
	r := Report{Verdict: OK, Inputs: in}
	flag := func(v Verdict, format string, args ...any) {
		r.Verdict = Worst(r.Verdict, v)
		r.Reasons = append(r.Reasons, string(v)+": "+fmt.Sprintf(format, args...))
	}
	over := func(measured, limit float64) {
		if limit > 0 {
			r.Over = max(r.Over, measured/limit)
		}
	}
	var drops uint64
	for _, d := range in.Drops {
		drops += d.Missing
	}
	if drops > 0 {
		flag(FAIL, "%d packets lost on %d switch-to-switch link directions with no configured cause", drops, len(in.Drops))
	}
	if in.OrderChecked && in.ReorderedSameEV > 0 {
		example := ""
		if in.ReorderExample != "" {
			example = " (first: " + in.ReorderExample + ")"
		}
		flag(FAIL, "%d packets reordered within one path (same EV): FIFO links must not reorder%s", in.ReorderedSameEV, example)
	}
	if c := in.CPU; c != nil && c.SaturatedFraction > MaxCPUSaturated {
		over(c.SaturatedFraction, MaxCPUSaturated)
		flag(WARN, "CPU saturated %.0f%% of the run (limit %.0f%%; mean busy %.0f%%, softirq %.0f%%, ftlab %.0f%% of %d cores%s)",
			100*c.SaturatedFraction, 100*MaxCPUSaturated, 100*c.MeanBusy, 100*c.MeanSoftirq, 100*c.ProcessShare, c.Cores, c.stealNote())
	}
	if p := in.Pacing; p.Loss() > MaxPacingLoss {
		over(p.Loss(), MaxPacingLoss)
		flag(WARN, "senders lost %.1f%% of their paced time to late departures (limit %.0f%%; worst flow %.1f%%, latest departure %.2fms late%s)",
			100*p.Loss(), 100*MaxPacingLoss, 100*p.WorstLoss, float64(p.MaxLateNs)/1e6, in.CPU.stealNote())
	}
	if p := in.Pacing; p.Late() > MaxPacingLateSlots {
		over(p.Late(), MaxPacingLateSlots)
		flag(WARN, "senders' held departures left %.2f of their gaps after their slots on average (limit %.0f; mean gap %.0fµs, latest departure %.2fms late)",
			p.Late(), MaxPacingLateSlots, p.IntendedNs/float64(max(p.Gaps, 1))/1e3, float64(p.MaxLateNs)/1e6)
	}
	if d := in.Delay; d.Late() {
		over(d.MeanLateNs, d.LateLimitNs())
		p99 := "over 1ms"
		if d.P99LateBelowNs >= 0 {
			p99 = fmt.Sprintf("within %.0fµs", float64(d.P99LateBelowNs)/1e3)
		}
		flag(WARN, "link delays emulated late: packets left the delay lines %.0fµs after their ideal arrival on average (limit %.0fµs: the less of %.0f packet time of %.0fµs and %.0f%% of the delays' %.2fms round trip; 99%% %s, worst %.2fms)",
			d.MeanLateNs/1e3, d.LateLimitNs()/1e3, MaxDelayLatePackets, d.PacketNs/1e3, 100*MaxDelayLateRTT, 2*d.MeanDelayNs/1e6, p99, float64(d.MaxLateNs)/1e6)
	}
	if in.LinksUnmeasured != "" {
		flag(WARN, "link rates not measured: %s", in.LinksUnmeasured)
	}
	var slow []LinkInput
	for _, l := range in.Links {
		if l.RateBps > 0 && l.AchievedBps < MinLinkRate*float64(l.RateBps) {
			slow = append(slow, l)
		}
	}
	if len(slow) > 0 {
		slices.SortFunc(slow, func(a, b LinkInput) int {
			return compareFloat(a.AchievedBps/float64(a.RateBps), b.AchievedBps/float64(b.RateBps))
		})
		w := slow[0]
		over(MinLinkRate*float64(w.RateBps), w.AchievedBps)
		flag(WARN, "%d of %d saturated link directions served below %.0f%% of their rate while backlogged (worst %s %s port %d: %.1f%%, gap %.0fµs vs ideal %.0fµs; %d arrivals there dropped or marked for its real queue)",
			len(slow), len(in.Links), 100*MinLinkRate, w.Direction, w.Switch, w.Port, 100*w.AchievedBps/float64(w.RateBps),
			w.MeanGapNs/1e3, w.IdealGapNs/1e3, w.LagDecided)
	}
	return r
}

func compareFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
