package scheme

import (
	"math"
	"time"

	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/hostagent/wire"
)

// rackScheme is rss+rack: RSS load balancing with sender-side RACK-TLP loss detection
// (RFC 8985), kept per subflow: the Ordered Chaos evaluation's stand-in
// for Falcon.
//
// Each subflow keeps RACK.xmit_ts, RACK.end_seq and RACK.rtt of its most
// recently sent copy that was delivered (acknowledged, duplicates
// included). After every ACK, an outstanding packet of the subflow sent
// before RACK.xmit_ts is declared lost once RACK.rtt + reo_wnd has passed
// since it was sent (at the ACK that is "sent before RACK.xmit_ts -
// reo_wnd"); packets not yet that old arm a reordering timer. The
// reordering window is min_RTT/4 (ReoWndFrac), capped at SRTT. A tail loss
// probe timer per subflow, 2*SRTT (plus MaxACKDelay with a single packet
// outstanding on the subflow, capped at the RTO) after the subflow's last
// send or ACK, retransmits the subflow's most recently sent outstanding
// packet; its ACK then lets RACK find the losses before it. One TLP per
// subflow is outstanding at a time; the RTO stays the last resort.
//
// What RFC 8985 leaves to the implementation, and what is done here:
//
//   - State is per subflow, not per flow: subflows travel different paths,
//     and flow-wide RACK would read every cross-path reordering as loss.
//     Reordering within a subflow happens only when RSS moves it to a path
//     shorter by more than the subflow's inter-packet gap plus reo_wnd.
//   - The window applies whether or not reordering has been seen (the RFC
//     allows reo_wnd = 0 until it has): on a multipath fabric it always
//     will be. min_RTT is the flow's, over all paths.
//   - Adaptation (RFC 8985 section 6.2, step 4) is off by default, as the
//     Ordered Chaos setup fixes the window at min_RTT/4. With Adaptive,
//     a DUP ACK (the receiver already had the copy: a DSACK) raises
//     reo_wnd_mult at most once per SRTT; after 16 loss detections without
//     one the multiplier returns to 1.
//   - A TLP has to be a retransmission: the engine sends new data whenever
//     the window allows, so when the PTO fires there is none to send. The
//     engine records it as a loss with cause "scheme", like RACK's own
//     detections; a TLP whose original had arrived shows up as a spurious
//     retransmission (DUP).
//   - Detection runs just after the engine has processed each ACK (a
//     zero-delay timer), so packets the same ACK acknowledges selectively
//     are never declared lost.
type rackScheme struct {
	rss rssConfig
	cfg RACKParams
}

// rackPersist is the number of recoveries until an adapted window resets.
const rackPersist = 16

func (rackScheme) Name() string { return "rss+rack" }

func (s rackScheme) NewSender(env transport.SenderEnv) transport.SenderScheme {
	r := &rackSender{
		rssSender: newRSSSender(env, s.rss, nil),
		rcfg:      s.cfg,
		mult:      1,
		armedAt:   -1,
	}
	r.rs = make([]rackSub, s.rss.Sigma)
	return r
}

func (rackScheme) NewReceiver(transport.ReceiverEnv, *wire.Packet) transport.ReceiverScheme {
	return nopReceiver{}
}

// rackSub is one subflow's RACK-TLP state.
type rackSub struct {
	have   bool          // a copy has been delivered
	xmit   clock.Time    // RACK.xmit_ts
	endSeq uint32        // RACK.end_seq (the PSN)
	rtt    time.Duration // RACK.rtt

	pto         clock.Time // probe deadline; 0: none
	ptoDelayed  bool       // MaxACKDelay already added to pto
	tlpPending  bool       // a TLP was declared, its copy has not left yet
	tlpPSN      uint32
	tlpDeclared clock.Time // when it was declared
	tlpAt       clock.Time // when the outstanding TLP left; 0: none
}

type rackSender struct {
	*rssSender
	rcfg RACKParams
	rs   []rackSub

	minRTT     time.Duration
	mult       int        // reo_wnd_mult
	persist    int        // reo_wnd_persist
	dsackUntil clock.Time // no further mult increase before this

	timer   clock.Timer
	armedAt clock.Time // -1: not armed
	out     []transport.OutstandingPacket
	lost    []uint32
}

func (s *rackSender) sub(psn uint32) int { return int(psn & s.mask) }

// reoWnd is the current reordering window.
func (s *rackSender) reoWnd() time.Duration {
	if s.rcfg.ReoWnd > 0 {
		return s.rcfg.ReoWnd
	}
	w := time.Duration(float64(s.minRTT) * s.rcfg.ReoWndFrac * float64(s.mult))
	if srtt := s.env.SRTT(); srtt > 0 {
		w = min(w, srtt)
	}
	return w
}

// ptoAfter is the probe timeout from now.
func (s *rackSender) ptoAfter() time.Duration {
	srtt := s.env.SRTT()
	if srtt == 0 {
		return s.env.RTO() // RFC 8985: no RTT sample yet, use the initial timeout
	}
	return min(time.Duration(math.Ceil(float64(srtt)*s.rcfg.PTOSRTTs)), s.env.RTO())
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

func (s *rackSender) setPTO(i int, now clock.Time) {
	if s.rcfg.NoTLP {
		return
	}
	r := &s.rs[i]
	r.pto, r.ptoDelayed = now.Add(s.ptoAfter()), false
	s.arm(r.pto)
}

func (s *rackSender) OnSent(p transport.SentPacket) {
	s.rssSender.OnSent(p)
	i := s.sub(p.PSN)
	r := &s.rs[i]
	if r.tlpPending && p.PSN == r.tlpPSN {
		r.tlpPending, r.tlpAt = false, p.At
	}
	s.setPTO(i, p.At)
}

func (s *rackSender) OnFeedback(f transport.Feedback) {
	s.rssSender.OnFeedback(f)
	if s.minRTT == 0 || f.RTT < s.minRTT {
		s.minRTT = f.RTT
	}
	i := s.sub(f.PSN)
	r := &s.rs[i]
	xmit := f.At.Add(-f.RTT) // the echo names the copy: exact send time
	if !r.have || xmit > r.xmit || (xmit == r.xmit && wire.SeqLess(r.endSeq, f.PSN)) {
		r.have, r.xmit, r.endSeq, r.rtt = true, xmit, f.PSN, f.RTT
	}
	if r.tlpAt != 0 && xmit >= r.tlpAt {
		r.tlpAt = 0 // the probe (or something after it) got through
	}
	if r.tlpPending && xmit > r.tlpDeclared {
		// Sent after the TLP was queued, yet the TLP never left: the
		// engine dropped it because its packet was acknowledged meanwhile.
		r.tlpPending = false
	}
	if f.Dup && s.rcfg.Adaptive && s.rcfg.ReoWnd == 0 && f.At >= s.dsackUntil {
		s.mult++
		s.persist = rackPersist
		s.dsackUntil = f.At.Add(s.env.SRTT())
	}
	s.setPTO(i, f.At)
	s.arm(f.At) // detect once the engine has taken in the whole ACK
}

func (s *rackSender) OnRTO(lost []transport.LostPacket) {
	s.rssSender.OnRTO(lost)
	for i := range s.rs {
		s.rs[i].tlpPending, s.rs[i].tlpAt = false, 0
	}
}

func (s *rackSender) onTimer() {
	s.armedAt = -1
	now := s.env.Now()
	s.out = s.out[:0]
	for p := range s.env.Outstanding() {
		s.out = append(s.out, p)
	}
	next := clock.Time(math.MaxInt64)
	// RACK: per subflow, packets sent before the most recently sent
	// delivered one are lost once RACK.rtt + reo_wnd have passed.
	reo := s.reoWnd()
	s.lost = s.lost[:0]
	for _, p := range s.out {
		r := &s.rs[s.sub(p.PSN)]
		if !r.have || !(p.SentAt < r.xmit || (p.SentAt == r.xmit && wire.SeqLess(p.PSN, r.endSeq))) {
			continue
		}
		if at := p.SentAt.Add(r.rtt + reo); at <= now {
			s.lost = append(s.lost, p.PSN)
		} else {
			next = min(next, at)
		}
	}
	for _, psn := range s.lost {
		if s.env.DeclareLost(psn, transport.CauseScheme) && s.persist > 0 {
			if s.persist--; s.persist == 0 {
				s.mult = 1
			}
		}
	}
	// TLP: a subflow whose probe timer expired retransmits its most
	// recently sent outstanding packet, unless a probe is out already.
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
				last = p.PSN
				n++
			}
		}
		switch {
		case n == 0 || r.tlpPending || r.tlpAt != 0:
			r.pto = 0
		case n == 1 && s.rcfg.MaxACKDelay > 0 && !r.ptoDelayed:
			r.pto, r.ptoDelayed = r.pto.Add(s.rcfg.MaxACKDelay), true
			next = min(next, r.pto)
		default:
			r.pto = 0
			r.tlpPending, r.tlpPSN, r.tlpDeclared = true, last, now
			if !s.env.DeclareLost(last, transport.CauseScheme) {
				r.tlpPending = false
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

// StateBytes adds, per subflow, RACK.xmit_ts, end_seq and rtt (4 B each),
// the PTO deadline (4 B) and the TLP's send time (4 B) with a flag byte;
// per flow min_RTT (4 B), mult and persist (1 B each) and the timer (4 B).
func (s *rackSender) StateBytes() int {
	return s.rssSender.StateBytes() + len(s.rs)*(4+4+4+4+4+1) + 4 + 1 + 1 + 4
}

func (s *rackSender) Close() {
	s.rssSender.Close()
	if s.timer != nil {
		s.timer.Stop()
	}
}
