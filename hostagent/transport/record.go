package transport

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/wire"
)

// ProbeCounts counts probes by type.
type ProbeCounts struct {
	Tail       int `json:"tail"`
	SectionEnd int `json:"section_end"`
	Periodic   int `json:"periodic"`
	RTX        int `json:"rtx"`
}

func (c *ProbeCounts) add(t wire.Type) {
	switch t {
	case wire.TypeTail:
		c.Tail++
	case wire.TypeSectionEnd:
		c.SectionEnd++
	case wire.TypePeriodic:
		c.Periodic++
	case wire.TypeRTX:
		c.RTX++
	}
}

// Total is the number of probes of all types.
func (c ProbeCounts) Total() int { return c.Tail + c.SectionEnd + c.Periodic + c.RTX }

// LossRecord is one detected loss.
type LossRecord struct {
	PSN   uint32 `json:"psn"`
	Cause Cause  `json:"cause"`
	// DelayNs runs from the send of the lost copy to its detection.
	DelayNs int64 `json:"delay_ns"`
	// Retx is true when the lost copy was itself a retransmission.
	Retx bool `json:"retx"`
}

// MessageRecord is the sender's account of one message, emitted when its
// last packet is acknowledged.
type MessageRecord struct {
	Kind    string `json:"kind"` // "message"
	Host    string `json:"host"`
	Peer    string `json:"peer"`
	Scheme  string `json:"scheme"`
	Flow    uint32 `json:"flow"`
	Msg     uint32 `json:"msg"`
	Bytes   int    `json:"bytes"`
	Packets int    `json:"packets"`
	StartNs int64  `json:"start_ns"` // queued on the flow
	EndNs   int64  `json:"end_ns"`   // last packet acknowledged
	FCTNs   int64  `json:"fct_ns"`
	// Retransmissions = RetxNeeded + RetxSpurious. A retransmission is
	// spurious when the receiver already had the PSN, which it says with
	// DUP on the ACK (an ACK lost on the way hides it from this count; the
	// receiver's ReceiveRecord is authoritative).
	Retransmissions int          `json:"retransmissions"`
	RetxNeeded      int          `json:"retx_needed"`
	RetxSpurious    int          `json:"retx_spurious"`
	NACKs           int          `json:"nacks"`          // NACKed PSNs received
	NACKsAccepted   int          `json:"nacks_accepted"` // of which declared lost
	Probes          ProbeCounts  `json:"probes"`
	RTOs            int          `json:"rtos"`     // timer expiries that declared a packet of this message lost
	Reroutes        int          `json:"reroutes"` // flow reroutes while the message was active
	Losses          []LossRecord `json:"losses"`
}

// ReceiveRecord is the receiver's account of one message, emitted when
// it is delivered.
type ReceiveRecord struct {
	Kind    string `json:"kind"` // "delivery"
	Host    string `json:"host"`
	Peer    string `json:"peer"`
	Flow    uint32 `json:"flow"`
	Msg     uint32 `json:"msg"`
	Bytes   int    `json:"bytes"`
	Packets int    `json:"packets"`
	FirstNs int64  `json:"first_ns"` // first packet arrived
	EndNs   int64  `json:"end_ns"`   // delivered
	// Verified is true: every byte was checked against the pattern (a
	// packet that fails is dropped and counted, never delivered).
	Verified bool `json:"verified"`
	// RetxUseful are retransmitted copies that filled a hole; RetxSpurious
	// are retransmitted copies of PSNs already here (while the message
	// was incomplete; later ones count in Stats.SpuriousRetxLate).
	RetxUseful   int `json:"retx_useful"`
	RetxSpurious int `json:"retx_spurious"`
	Duplicates   int `json:"duplicates"` // all duplicate copies, network duplicates included
	NACKsSent    int `json:"nacks_sent"` // PSNs NACKed
	// ReorderedSameEV are first copies (not retransmissions) that arrived
	// after a higher PSN of the flow on the same EV. Under ECMP an EV is
	// one FIFO path, so anything but 0 means the emulation reordered.
	ReorderedSameEV int `json:"reordered_same_ev"`
	// FirstReorder is the first of them, so a fidelity FAIL can say
	// where it happened.
	FirstReorder *ReorderSample `json:"first_reorder,omitempty"`
	// Delay is how the receiving agent's delay line held the message's
	// packets, when the fabric has link delays.
	Delay *DelayRecord `json:"delay,omitempty"`
}

// DelayRecord measures a delay line (the agent that emulates link delays
// at the receiver, docs/delay.md) over some packets: how late each was
// handed on against its ideal arrival, the kernel's arrival time plus the
// propagation delay and jitter of its path.
type DelayRecord struct {
	Packets   uint64 `json:"packets"`
	DelaySum  int64  `json:"delay_sum_ns"` // the delays applied, summed
	LateSumNs int64  `json:"late_sum_ns"`
	LateMaxNs int64  `json:"late_max_ns"`
	// Late counts packets by lateness: Late[i] those late by less than
	// DelayLateBounds[i], the last those later than every bound.
	Late [len(DelayLateBounds) + 1]uint64 `json:"late"`
}

// DelayLateBounds are the upper bounds of DelayRecord.Late's buckets.
var DelayLateBounds = [...]int64{10e3, 20e3, 50e3, 100e3, 200e3, 500e3, 1e6}

// Add counts one packet held for delay and handed on late after its
// ideal arrival.
func (r *DelayRecord) Add(delay, late int64) {
	r.Packets++
	r.DelaySum += delay
	r.LateSumNs += late
	r.LateMaxNs = max(r.LateMaxNs, late)
	i := 0
	for i < len(DelayLateBounds) && late >= DelayLateBounds[i] {
		i++
	}
	r.Late[i]++
}

// Merge adds o's packets to r.
func (r *DelayRecord) Merge(o *DelayRecord) {
	if o == nil {
		return
	}
	r.Packets += o.Packets
	r.DelaySum += o.DelaySum
	r.LateSumNs += o.LateSumNs
	r.LateMaxNs = max(r.LateMaxNs, o.LateMaxNs)
	for i := range r.Late {
		r.Late[i] += o.Late[i]
	}
}

// MeanLateNs is the mean lateness (0 without packets).
func (r *DelayRecord) MeanLateNs() float64 {
	if r.Packets == 0 {
		return 0
	}
	return float64(r.LateSumNs) / float64(r.Packets)
}

// LateBelowNs is the smallest bucket bound below which at least share of
// the packets were handed on (-1: beyond the last bound).
func (r *DelayRecord) LateBelowNs(share float64) int64 {
	need := share * float64(r.Packets)
	var n uint64
	for i, c := range r.Late {
		n += c
		if float64(n) >= need {
			if i == len(DelayLateBounds) {
				return -1
			}
			return DelayLateBounds[i]
		}
	}
	return -1
}

// ReorderSample is a first copy that arrived after a higher PSN of its
// flow on the same EV.
type ReorderSample struct {
	PSN   uint32 `json:"psn"`
	After uint32 `json:"after_psn"` // the highest PSN seen on the EV before it
	EV    uint16 `json:"ev"`
	AtNs  int64  `json:"at_ns"`
}

// EVChange is one entry of a subflow's EV history.
type EVChange struct {
	AtNs   int64  `json:"at_ns"`
	EV     uint16 `json:"ev"`
	Reason string `json:"reason"` // "initial", "reroute", "rto", "nofeedback"
}

// SubflowRecord is one subflow's (or path's) history.
type SubflowRecord struct {
	ID      int        `json:"id"`
	Packets int        `json:"packets"` // DATA copies sent
	EVs     []EVChange `json:"evs"`
}

// FlowRecord is a flow's account: totals, pacing and per-subflow history.
type FlowRecord struct {
	Kind       string          `json:"kind"` // "flow"
	Host       string          `json:"host"`
	Peer       string          `json:"peer"`
	Scheme     string          `json:"scheme"`
	Flow       uint32          `json:"flow"`
	Messages   int             `json:"messages"`
	Packets    int             `json:"packets"`     // DATA copies sent
	Retx       int             `json:"retx"`        // of which retransmissions
	Reroutes   int             `json:"reroutes"`    // EV changes made by the scheme
	RTOs       int             `json:"rtos"`        // timer expiries
	StateBytes int             `json:"state_bytes"` // scheme's per-flow sender state
	SRTTNs     int64           `json:"srtt_ns"`
	MinRTTNs   int64           `json:"min_rtt_ns"`
	RTONs      int64           `json:"rto_ns"` // current, backoff included
	Pacing     PacingStats     `json:"pacing"`
	CC         *CCRecord       `json:"cc,omitempty"` // nil under cc: none
	Subflows   []SubflowRecord `json:"subflows,omitempty"`
	// Delay is how the sender's delay line held the flow's ACKs and
	// NACKs, when the fabric has link delays.
	Delay *DelayRecord `json:"delay,omitempty"`
}

// PacingStats measures how closely the pacer kept its rate. Only gaps in
// which the flow was held back by the pacer count (not ones where it had
// nothing to send or its window was full). LateNs and LostNs are what
// fidelity judges (see pacer): how late the held departures left against
// their slots, and the time the flow lost for good to late departures,
// over SpanNs, its first to last paced departure.
type PacingStats struct {
	TargetBps   float64 `json:"target_bps"`
	Gaps        int     `json:"gaps"`
	IntendedNs  float64 `json:"intended_ns"`  // sum of the gaps the rate asks for
	ActualNs    float64 `json:"actual_ns"`    // sum of the gaps achieved
	LateNs      float64 `json:"late_ns"`      // sum of the held departures' lateness against their slots
	LostNs      float64 `json:"lost_ns"`      // time lost for good: trains ending late, lateness forgiven
	SpanNs      float64 `json:"span_ns"`      // first to last departure
	MaxLateNs   int64   `json:"max_late_ns"`  // worst departure after its slot
	AchievedBps float64 `json:"achieved_bps"` // TargetBps * Intended/Actual
	Accuracy    float64 `json:"accuracy"`     // Intended/Actual: 1 is perfect
}

// JSONLines writes records, one JSON object per line.
type JSONLines struct{ enc *json.Encoder }

// NewJSONLines returns a writer of JSON lines to w.
func NewJSONLines(w io.Writer) *JSONLines { return &JSONLines{enc: json.NewEncoder(w)} }

// Write writes one record.
func (j *JSONLines) Write(rec any) error {
	if err := j.enc.Encode(rec); err != nil {
		return fmt.Errorf("transport: write record: %w", err)
	}
	return nil
}

func ns(t clock.Time) int64 { return int64(t) }
