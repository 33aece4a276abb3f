package scheme

import (
	"math"
	"time"

	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/hostagent/wire"
)

// rackScheme is rss+rack: RSS load balancing with sender-side RACK-TLP
// loss detection (RFC 8985), the Ordered Chaos evaluation's key baseline
// and its stand-in for Falcon (V-A2). Section numbers below are RFC 8985's.
//
// RACK (6). Each subflow keeps RACK.xmit_ts, RACK.end_seq and RACK.rtt of
// its most recently sent delivered copy, updated by every ACK that newly
// acknowledges a PSN of the subflow (6.2 steps 1-2; RACK.rtt is that ACK's
// sample). After every ACK, an outstanding packet of the subflow sent
// before RACK.xmit_ts is lost once RACK.rtt + reo_wnd has passed since it
// was sent; otherwise the reordering timer is armed for the latest such
// deadline (6.2 step 5). The reordering window (6.2 step 4) is
// reo_wnd_mult x min_RTT / 4, capped at SRTT, where min_RTT is a windowed
// minimum of the flow's RTT samples (step 1, RackParams.MinRTTWindow), and
// reo_wnd_mult grows by one in every round trip whose ACKs carry a DSACK
// (the receiver already had the PSN: a spurious retransmission) and returns
// to 1 after 16 recoveries without one. While no reordering has been seen
// (step 3: a never-retransmitted PSN delivered below the subflow's highest
// delivered one), the window is 0 for a subflow in recovery or with
// DupThresh (3) packets acknowledged above its lowest unacknowledged one.
//
// TLP (7). A subflow's probe timeout, PTO = 2 x SRTT (plus max_ack_delay
// when one packet is outstanding on it), capped so that it fires no later
// than the retransmission timer, is (re)started when the subflow sends new
// data and when an ACK advances its lowest unacknowledged PSN, except in
// recovery or with a probe outstanding. When it fires, the subflow's
// highest unacknowledged PSN is sent again as the probe; its ACK lets RACK
// find the losses before it. One probe per subflow is outstanding at a
// time (until the subflow's PSNs sent before it are acknowledged, or the
// RTO); the RTO stays the last resort.
//
// What RFC 8985 leaves to the implementation, and what is done here:
//
//   - State is per subflow, not per flow: subflows travel different paths,
//     and flow-wide RACK would read every cross-path reordering as loss.
//     Within a subflow, reordering happens only when RSS moves it to a
//     path shorter by more than the subflow's inter-packet gap. min_RTT,
//     reo_wnd_mult, DSACK rounds (SND.UNA is the flow's) and whether
//     reordering has been seen are the flow's; recovery (RFC 6675's, from a
//     loss until the PSNs sent before it are acknowledged) is the
//     subflow's.
//   - Every sample names the copy it measures (echoed timestamps), so the
//     ambiguity checks of 6.2 step 2 hold by construction.
//   - A TLP has to be a retransmission: the engine sends new data whenever
//     the window allows, and a subflow's next new PSN cannot jump the
//     flow's order. The engine records it as a loss with cause "tlp"; one
//     whose original had arrived shows up as a spurious retransmission
//     (DUP) and, being a DSACK, widens the window. 7.4's detection of a
//     loss the probe repaired only feeds congestion control, which the
//     hosts do not run.
//   - Detection runs just after the engine has processed each ACK (a
//     zero-delay timer), so packets the same ACK acknowledges selectively
//     are never declared lost.
type rackScheme struct {
	rss rssConfig
	cfg RACKParams
}

// RFC 8985's constants.
const (
	rackPersist   = 16 // recoveries an adapted window lasts (6.2 step 4)
	rackDupThresh = 3  // DupThresh (3.3.2)
)

func (rackScheme) Name() string { return "rss+rack" }

func (s rackScheme) NewSender(env transport.SenderEnv) transport.SenderScheme {
	r := &rackSender{
		rssSender:      newRSSSender(env, s.rss, nil),
		rcfg:           s.cfg,
		mult:           1,
		armedAt:        -1,
		una:            env.NextPSN(),
		reorderingSeen: s.cfg.AssumeReordering,
		minRTT:         minFilter{window: s.cfg.MinRTTWindow},
	}
	r.rs = make([]rackSub, s.rss.Sigma)
	for i := range r.rs {
		r.rs[i].una = r.nextPSNOn(i)
	}
	return r
}

func (rackScheme) NewReceiver(transport.ReceiverEnv, *wire.Packet) transport.ReceiverScheme {
	return nopReceiver{}
}

// rackSub is one subflow's RACK-TLP state.
type rackSub struct {
	// RACK.segment: the most recently sent delivered copy (6.1).
	have     bool
	xmit     clock.Time    // RACK.xmit_ts
	endSeq   uint32        // RACK.end_seq (the PSN)
	rtt      time.Duration // RACK.rtt
	fack     uint32        // RACK.fack: the highest PSN delivered
	haveFack bool
	una      uint32 // lowest PSN of the subflow not acknowledged

	recovery  bool   // in recovery until una reaches recoverAt
	recoverAt uint32 // the flow's next PSN when recovery began

	pto        clock.Time // probe deadline; 0: none
	ptoDelayed bool       // max_ack_delay already added to pto
	tlp        bool       // a probe is outstanding (TLP.end_seq is set)
	tlpEnd     uint32     // TLP.end_seq: the flow's next PSN when it was sent
}

type rackSender struct {
	*rssSender
	rcfg RACKParams
	rs   []rackSub

	minRTT         minFilter
	mult           int    // reo_wnd_mult
	persist        int    // reo_wnd_persist
	reorderingSeen bool   // RACK.reordering_seen
	una            uint32 // the flow's SND.UNA
	dsackRound     uint32 // RACK.dsack_round, when inRound
	inRound        bool
	dsack          bool // an ACK since the last detection carried a DSACK
	grew           bool // the multiplier grew at this detection

	timer   clock.Timer
	armedAt clock.Time // -1: not armed
	out     []transport.OutstandingPacket
	lost    []uint32
	reo     []time.Duration // per subflow, this detection's window; -1: not computed
	latest  []clock.Time    // per subflow, the latest deadline not yet reached
}

func (s *rackSender) sub(psn uint32) int { return int(psn & s.mask) }
func (s *rackSender) sigma() uint32      { return uint32(len(s.rs)) }

// sentAfter is RACK_sent_after: (t1, s1) was sent after (t2, s2), the PSN
// breaking ties of the clock.
func sentAfter(t1 clock.Time, s1 uint32, t2 clock.Time, s2 uint32) bool {
	return t1 > t2 || (t1 == t2 && wire.SeqLess(s2, s1))
}

// reoWnd is subflow i's reordering window (6.2 step 4).
func (s *rackSender) reoWnd(i int) time.Duration {
	if s.rcfg.ReoWnd > 0 {
		return s.rcfg.ReoWnd
	}
	if !s.reorderingSeen && (s.rs[i].recovery || s.sackedAbove(i) >= rackDupThresh) {
		return 0
	}
	w := time.Duration(float64(s.minRTT.value) * s.rcfg.ReoWndFrac * float64(s.mult))
	if srtt := s.env.SRTT(); srtt > 0 {
		w = min(w, srtt)
	}
	return w
}

// sackedAbove counts subflow i's PSNs acknowledged above its lowest
// unacknowledged one (RACK.segs_sacked), up to DupThresh.
func (s *rackSender) sackedAbove(i int) int {
	r := &s.rs[i]
	n := 0
	for q := r.una + s.sigma(); r.haveFack && wire.SeqLEq(q, r.fack) && n < rackDupThresh; q += s.sigma() {
		if s.env.Acked(q) {
			n++
		}
	}
	return n
}

// ptoAfter is the probe timeout from now (7.2), before the RTO cap.
func (s *rackSender) ptoAfter() time.Duration {
	srtt := s.env.SRTT()
	if srtt == 0 {
		return s.env.RTO() // no RTT sample yet: the initial timeout
	}
	return time.Duration(math.Ceil(float64(srtt) * s.rcfg.PTOSRTTs))
}

// arm makes the timer fire at or before at.
func (s *rackSender) arm(at clock.Time) {
	if s.armedAt >= 0 && s.armedAt <= at {
		return
	}
	s.armedAt = at
	d := at.Sub(s.env.Now())
	if s.timer == nil {
		s.timer = s.env.AfterFunc(d, s.onTimer)
	} else {
		s.timer.Reset(d)
	}
}

// schedulePTO (re)starts subflow i's probe timer (7.2), no later than the
// retransmission timer would declare the subflow's oldest outstanding copy
// lost (the flow's timer watches the flow's oldest copy, which may belong
// to another subflow).
func (s *rackSender) schedulePTO(i int, now clock.Time) {
	r := &s.rs[i]
	if s.rcfg.NoTLP || r.recovery || r.tlp {
		return
	}
	at := now.Add(s.ptoAfter())
	for p := range s.env.Outstanding() { // oldest copy first
		if s.sub(p.PSN) == i {
			at = min(at, p.SentAt.Add(s.env.RTO()))
			break
		}
	}
	r.pto, r.ptoDelayed = max(at, now), false
	s.arm(r.pto)
}

func (s *rackSender) OnSent(p transport.SentPacket) {
	s.rssSender.OnSent(p)
	if p.Cause == transport.CauseNew {
		s.schedulePTO(s.sub(p.PSN), p.At)
	}
}

func (s *rackSender) OnFeedback(f transport.Feedback) {
	s.rssSender.OnFeedback(f)
	s.minRTT.add(f.RTT, f.At) // step 1: every RTT sample
	if f.Dup {
		s.dsack = true
	}
	s.arm(f.At) // detect once the engine has taken in the whole ACK
}

// OnAcked takes in every PSN as it becomes acknowledged (steps 2 and 3).
// A retransmitted PSN acknowledged by another's ACK is ambiguous (which
// copy arrived?) and skipped, as step 2 asks; the ACK that answers a PSN
// names its copy. RACK.rtt is updated with RACK.segment, as Linux does.
func (s *rackSender) OnAcked(a transport.AckedPacket) {
	r := &s.rs[s.sub(a.PSN)]
	if (a.Copies == 1 || a.Echoed) && (!r.have || sentAfter(a.SentAt, a.PSN, r.xmit, r.endSeq)) {
		r.have, r.xmit, r.endSeq, r.rtt = true, a.SentAt, a.PSN, a.At.Sub(a.SentAt)
	}
	// Step 3: a never-retransmitted PSN acknowledged below the subflow's
	// highest acknowledged one was delivered out of order.
	switch {
	case !r.haveFack || wire.SeqLess(r.fack, a.PSN):
		r.fack, r.haveFack = a.PSN, true
	case a.Copies == 1:
		s.reorderingSeen = true
	}
}

func (s *rackSender) OnRTO(lost []transport.LostPacket) {
	s.rssSender.OnRTO(lost)
	for i := range s.rs {
		s.rs[i].tlp, s.rs[i].pto = false, 0
	}
	for _, p := range lost {
		s.enterRecovery(s.sub(p.PSN))
	}
}

func (s *rackSender) enterRecovery(i int) {
	if r := &s.rs[i]; !r.recovery {
		r.recovery, r.recoverAt, r.pto = true, s.env.NextPSN(), 0
	}
}

// acknowledged takes in what the engine has acknowledged: the flow's and
// every subflow's lowest unacknowledged PSN, the DSACK round and window
// multiplier (step 4), the end of recoveries and probe episodes, and the
// probe timers an advance restarts (7.2).
func (s *rackSender) acknowledged(now clock.Time) {
	next := s.env.NextPSN()
	for s.una != next && s.env.Acked(s.una) {
		s.una++
	}
	s.grew = false
	if s.rcfg.Adaptive && s.rcfg.ReoWnd == 0 {
		if s.inRound && !wire.SeqLess(s.una, s.dsackRound) {
			s.inRound = false
		}
		if s.dsack && !s.inRound {
			s.dsackRound, s.inRound = next, true
			s.mult++
			s.persist, s.grew = rackPersist, true
		}
	}
	s.dsack = false
	for i := range s.rs {
		r := &s.rs[i]
		advanced := false
		for wire.SeqLess(r.una, next) && s.env.Acked(r.una) {
			r.una += s.sigma()
			advanced = true
		}
		if r.recovery && !wire.SeqLess(r.una, r.recoverAt) {
			r.recovery = false
			if !s.grew {
				s.persist = max(s.persist-1, 0)
				if s.persist == 0 {
					s.mult = 1
				}
			}
		}
		if r.tlp && !wire.SeqLess(r.una, r.tlpEnd) {
			r.tlp = false
		}
		if advanced {
			s.schedulePTO(i, now)
		}
	}
}

func (s *rackSender) onTimer() {
	s.armedAt = -1
	now := s.env.Now()
	s.acknowledged(now)
	s.out = s.out[:0]
	for p := range s.env.Outstanding() {
		s.out = append(s.out, p)
	}
	if s.reo == nil {
		s.reo, s.latest = make([]time.Duration, len(s.rs)), make([]clock.Time, len(s.rs))
	}
	for i := range s.rs {
		s.reo[i], s.latest[i] = -1, 0
	}
	// Step 5: packets sent before the subflow's most recently sent
	// delivered one are lost once RACK.rtt + reo_wnd have passed.
	s.lost = s.lost[:0]
	for _, p := range s.out {
		i := s.sub(p.PSN)
		r := &s.rs[i]
		if !r.have || !sentAfter(r.xmit, r.endSeq, p.SentAt, p.PSN) {
			continue
		}
		if s.reo[i] < 0 {
			s.reo[i] = s.reoWnd(i)
		}
		if at := p.SentAt.Add(r.rtt + s.reo[i]); at <= now {
			s.lost = append(s.lost, p.PSN)
		} else {
			s.latest[i] = max(s.latest[i], at)
		}
	}
	next := clock.Time(math.MaxInt64)
	for _, at := range s.latest {
		if at > 0 {
			next = min(next, at)
		}
	}
	for _, psn := range s.lost {
		if s.env.DeclareLost(psn, transport.CauseScheme) {
			s.enterRecovery(s.sub(psn))
		}
	}
	// TLP (7.3): a subflow whose probe timer expired sends its highest
	// unacknowledged PSN again.
	for i := range s.rs {
		r := &s.rs[i]
		if r.pto == 0 {
			continue
		}
		if r.pto > now {
			next = min(next, r.pto)
			continue
		}
		last, n := uint32(0), 0
		for _, p := range s.out {
			if s.sub(p.PSN) == i && !s.isLost(p.PSN) {
				if n == 0 || wire.SeqLess(last, p.PSN) {
					last = p.PSN
				}
				n++
			}
		}
		switch {
		case n == 0 || r.recovery || r.tlp:
			r.pto = 0
		case n == 1 && s.rcfg.MaxACKDelay > 0 && !r.ptoDelayed:
			r.pto, r.ptoDelayed = r.pto.Add(s.rcfg.MaxACKDelay), true
			next = min(next, r.pto)
		default:
			r.pto = 0
			if s.env.DeclareLost(last, transport.CauseTLP) {
				r.tlp, r.tlpEnd = true, s.env.NextPSN()
			}
		}
	}
	if next != math.MaxInt64 {
		s.arm(next)
	}
}

func (s *rackSender) isLost(psn uint32) bool {
	for _, q := range s.lost {
		if q == psn {
			return true
		}
	}
	return false
}

// StateBytes adds, per subflow, RACK.xmit_ts, end_seq, rtt and fack, the
// lowest unacknowledged PSN, the recovery point, the PTO deadline and
// TLP.end_seq (4 B each) with a flag byte; per flow the windowed minimum
// RTT (four sub-window minima, 4 B each, and the sub-window), the
// multiplier and persistence (1 B each), SND.UNA and the DSACK round (4 B
// each), the timer (4 B) and a flag byte.
func (s *rackSender) StateBytes() int {
	return s.rssSender.StateBytes() + len(s.rs)*(8*4+1) + (4*4 + 4) + 1 + 1 + 4 + 4 + 4 + 1
}

func (s *rackSender) Close() {
	s.rssSender.Close()
	if s.timer != nil {
		s.timer.Stop()
	}
}

// minFilter is a windowed minimum (RFC 8985 6.2 step 1): the smallest
// sample of roughly the last window, kept as the minima of four
// sub-windows of a quarter window each, so a sample is forgotten between
// three quarters of a window and a window after it was taken. It ages
// with samples, not with time: after a silence the first sample stands
// alone.
type minFilter struct {
	window time.Duration
	slots  [4]struct {
		epoch int64 // sub-window: time / (window/4)
		min   time.Duration
		ok    bool
	}
	value time.Duration // the minimum after the latest sample; 0: none yet
}

func (f *minFilter) add(v time.Duration, now clock.Time) {
	if v < 0 {
		return
	}
	quarter := max(int64(f.window/4), 1)
	epoch := int64(now) / quarter
	sl := &f.slots[epoch%4]
	if !sl.ok || sl.epoch != epoch {
		sl.epoch, sl.min, sl.ok = epoch, v, true
	} else {
		sl.min = min(sl.min, v)
	}
	f.value = v
	for _, s := range f.slots {
		if s.ok && s.epoch > epoch-4 {
			f.value = min(f.value, s.min)
		}
	}
}
