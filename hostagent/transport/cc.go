package transport

import (
	"time"

	"github.com/ftlab/ftlab/hostagent/clock"
)

// CongestionControl is a congestion control algorithm (the registry is
// package hostagent/cc): it makes the controller of every flow an endpoint
// opens. A controller owns one window for the whole flow, shared by all its
// subflows and paths, as Ordered Chaos runs MPRDMA under RSS ("RSS controls
// where packets go while MPRDMA controls how fast they are sent", V-A): the
// scheme picks each packet's entropy, the controller how many may be in
// flight and how fast they leave.
//
// Config.CC nil is "cc: none": every flow paces at Config.Rate with the
// fixed Config.Window, as before congestion control existed.
type CongestionControl interface {
	// Name is the algorithm's name as scenarios spell it.
	Name() string
	// NewFlow returns the controller of a new flow.
	NewFlow(f CCFlow) FlowCC
}

// CCFlow is what a controller knows of its flow when it starts.
type CCFlow struct {
	// MSS is the payload of a full DATA packet, in bytes.
	MSS int
	// PacketBytes is what a full DATA packet costs on the link: payload,
	// DATA header, IPv4, UDP and Config.Overhead.
	PacketBytes int
	// LineRate is the host's link rate in bit/s (Config.Rate); 0 when the
	// endpoint does not pace (then BDP falls back to MaxWindow).
	LineRate float64
	// BaseRTT is the fabric's idle round trip (Config.BaseRTT).
	BaseRTT time.Duration
	// MaxWindow caps the window (Config.Window, host.window).
	MaxWindow int
	// Hops is the number of switches on the flow's paths when the
	// endpoint knows it (Config.Hops), 0 when not.
	Hops int
}

// BDP is the flow's bandwidth-delay product in payload bytes at the base
// RTT: BDPAt(BaseRTT).
func (f CCFlow) BDP() int { return f.BDPAt(f.BaseRTT) }

// BDPAt is the payload the line rate carries in rtt, at least one MSS and
// at most MaxWindow (MaxWindow when the line rate is unknown).
func (f CCFlow) BDPAt(rtt time.Duration) int {
	if f.LineRate <= 0 {
		return f.MaxWindow
	}
	wire := f.LineRate / 8 * rtt.Seconds()
	return min(f.MaxWindow, max(f.MSS, int(wire*float64(f.MSS)/float64(f.PacketBytes))))
}

// CCAck is one ACK as a controller sees it: what it newly acknowledged and
// what it says about the path its copy took.
type CCAck struct {
	At clock.Time
	// Bytes and Packets are the payload newly acknowledged by this ACK: its
	// own packet and what its cumulative and selective parts cover for the
	// first time (ACKs that were lost). 0 for an ACK of nothing new (a
	// duplicate, a stale ACK, most probe ACKs).
	Bytes, Packets int
	// CE: the acknowledged copy arrived CE-marked (the ACK's ECE flag).
	// Probe ACKs never carry it.
	CE bool
	// Probe: the ACK answers a header-only probe.
	Probe bool
	// RTT is this ACK's sample, from the echoed timestamp of the very
	// copy it answers (exact for retransmissions too); 0 when the echo is
	// unusable.
	RTT time.Duration
	// SRTT and MinRTT are the flow's estimates after this sample.
	SRTT, MinRTT time.Duration
	// Inflight is the payload in flight after this ACK.
	Inflight int
	// CumAck: every PSN before it is acknowledged. NextPSN is the PSN the
	// next new packet will carry, so [CumAck, NextPSN) is the data in
	// flight or lost: a window of data ends when CumAck passes the
	// NextPSN it started at (RFC 8257's DCTCP.WindowEnd).
	CumAck, NextPSN uint32
}

// CCLoss is one DATA packet declared lost.
type CCLoss struct {
	At    clock.Time
	PSN   uint32
	Bytes int
	// Cause is CauseNACK (the receiver proved it missing), CauseScheme
	// (sender-side detection, RACK) or CauseRTO (the timer; OnRTO follows
	// the losses of one expiry).
	Cause Cause
	// Inflight is the payload still in flight; CumAck and NextPSN as in
	// CCAck.
	Inflight        int
	CumAck, NextPSN uint32
}

// FlowCC is one flow's congestion controller. The engine calls it on the
// event loop, on the per-packet path: it must not allocate.
//
// Retransmissions count against the window like new data: a lost packet
// leaves the window when it is declared lost and enters it again when its
// copy is sent. Probes are header-only and never counted (Ordered Chaos
// IV-B); they take their own bytes' time at the pacing rate.
type FlowCC interface {
	// OnACK is called for every ACK of the flow, probe ACKs included.
	OnACK(a CCAck)
	// OnLoss is called for every packet declared lost, whatever the cause.
	OnLoss(l CCLoss)
	// OnRTO is called once per retransmission timer expiry that declared
	// packets lost, after their OnLoss calls; lost counts them.
	OnRTO(at clock.Time, lost int)
	// Window is the congestion window in payload bytes. The engine lets a
	// flow with nothing in flight send one packet whatever the window, and
	// paces at Window/SRTT, so a window below one packet (Swift) sends one
	// packet every MSS/Window round trips.
	Window() int
}

// CCRecord is a flow's congestion control in its record.
type CCRecord struct {
	Name string `json:"name"`
	// WindowBytes is the window when the record was taken; Min and Max
	// are its extremes over the flow's life.
	WindowBytes    int `json:"window_bytes"`
	MinWindowBytes int `json:"min_window_bytes"`
	MaxWindowBytes int `json:"max_window_bytes"`
	// RateBps is the pacing rate when the record was taken.
	RateBps float64 `json:"rate_bps"`
}

// ccState is a sender's congestion control: the controller, the window
// and pacing rate it sets, and their extremes.
type ccState struct {
	ctl             FlowCC
	minWnd, maxWnd  int
	wireBitsPerByte float64 // link bits per payload byte of a full packet
	lineRate        float64
	baseRTT         time.Duration
}

func newCCState(cc CongestionControl, f CCFlow) *ccState {
	st := &ccState{
		ctl: cc.NewFlow(f), lineRate: f.LineRate, baseRTT: f.BaseRTT,
		wireBitsPerByte: 8 * float64(f.PacketBytes) / float64(f.MSS),
	}
	w := st.ctl.Window()
	st.minWnd, st.maxWnd = w, w
	return st
}

// applyCC reads the controller's window into the sender: the in-flight
// limit (never above Config.Window) and the pacing rate, window over the
// smoothed RTT (the base RTT before the first sample) at most the line
// rate.
func (s *sender) applyCC() {
	c := s.cc
	w := c.ctl.Window()
	c.minWnd, c.maxWnd = min(c.minWnd, w), max(c.maxWnd, w)
	s.window = min(max(w, 0), s.ep.cfg.Window)
	rtt := s.rtt.srtt
	if rtt <= 0 {
		rtt = c.baseRTT
	}
	rate := float64(s.window) * c.wireBitsPerByte / rtt.Seconds()
	if c.lineRate > 0 {
		rate = min(rate, c.lineRate)
	}
	s.pacer.rate = max(rate, 1)
}

func (c *ccState) record(s *sender) *CCRecord {
	return &CCRecord{
		Name: s.ep.cfg.CC.Name(), WindowBytes: c.ctl.Window(), MinWindowBytes: c.minWnd, MaxWindowBytes: c.maxWnd,
		RateBps: s.pacer.rate,
	}
}
