package transport

import (
	"time"

	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/wire"
)

// liftStamp turns a 32-bit echoed timestamp back into a clock time, taking
// the candidate nearest now (timestamps are echoed within ~2 s).
func liftStamp(now clock.Time, ts uint32) clock.Time {
	return now - clock.Time(int32(uint32(now)-ts))
}

// onACK handles an ACK for this flow.
func (s *sender) onACK(pk *wire.Packet) {
	now := s.ep.clk.Now()
	newly := 0
	s.ackedBytes = 0
	// The echo names the copy the ACK answers, so the sample is exact
	// even for retransmissions.
	rtt := now.Sub(liftStamp(now, pk.TSEcr))
	sampled := true // the ACK answers a copy this flow sent
	if pk.Flags&wire.FlagProbeACK == 0 {
		if p := s.ring.get(pk.PSN); p != nil {
			s.rtt.sample(rtt)
			dup := pk.Flags&wire.FlagDup != 0
			if dup && p.copies > 1 && !p.acked {
				p.msg.rec.RetxSpurious++
			}
			s.scheme.OnFeedback(Feedback{PSN: pk.PSN, EV: pk.EV, RTT: rtt, CE: pk.Flags&wire.FlagECE != 0, Dup: dup, At: now})
			newly += s.ackEchoed(p, now, now.Add(-rtt))
		} else {
			s.ep.stats.StaleACKs++
			if d := s.ring.base - pk.PSN; d > 0 && d <= 1<<30 {
				// Acknowledged and released already (a later ACK on a
				// faster path covered it): still this copy's delivery on
				// its EV, which path-scoring schemes must hear about.
				s.scheme.OnFeedback(Feedback{PSN: pk.PSN, EV: pk.EV, RTT: rtt, CE: pk.Flags&wire.FlagECE != 0, Dup: pk.Flags&wire.FlagDup != 0, At: now})
			} else {
				sampled = false
			}
		}
	} else {
		s.rtt.sample(rtt)
	}
	// Cumulative part: everything before CumAck. The ring's base only
	// moves forward, so each PSN is visited here at most once.
	for psn := s.ring.base; wire.SeqLess(psn, pk.CumAck) && wire.SeqLess(psn, s.nextPSN); psn++ {
		newly += s.ack(s.ring.get(psn), now)
	}
	// Selective part: bit i is PSN psn-1-i.
	for bits, i := pk.SACK, uint32(0); bits != 0; bits, i = bits>>1, i+1 {
		if bits&1 != 0 {
			newly += s.ack(s.ring.get(pk.PSN-1-i), now)
		}
	}
	s.ring.popAcked()
	if newly > 0 {
		s.rtt.backoff = 0
	}
	if s.cc != nil {
		if !sampled || rtt < 0 {
			rtt = 0
		}
		s.ccACK(pk, now, rtt, newly)
	}
	s.armRTO()
	s.pump()
}

// ccACK tells the flow's congestion controller about an ACK.
func (s *sender) ccACK(pk *wire.Packet, now clock.Time, rtt time.Duration, newly int) {
	s.cc.ctl.OnACK(CCAck{
		At: now, Bytes: s.ackedBytes, Packets: newly,
		CE: pk.Flags&wire.FlagECE != 0, Probe: pk.Flags&wire.FlagProbeACK != 0,
		RTT: rtt, SRTT: s.rtt.srtt, MinRTT: s.rtt.minRTT,
		Inflight: s.inflight, CumAck: s.ring.base, NextPSN: s.nextPSN,
	})
	s.applyCC()
}

// ack marks p acknowledged, as an ACK's cumulative or selective part
// does, and reports 1 if that is news.
func (s *sender) ack(p *txPacket, now clock.Time) int {
	if p == nil || p.acked || p.copies == 0 {
		return 0
	}
	return s.acked(p, now, AckedPacket{PSN: p.psn, SentAt: p.last, Copies: p.copies, At: now})
}

// ackEchoed marks p acknowledged by the ACK that answers it, whose echo
// says its copy of sentAt was delivered, and reports 1 if that is news.
func (s *sender) ackEchoed(p *txPacket, now, sentAt clock.Time) int {
	if p == nil || p.acked || p.copies == 0 {
		return 0
	}
	return s.acked(p, now, AckedPacket{PSN: p.psn, SentAt: sentAt, Copies: p.copies, Echoed: true, At: now})
}

// acked records that p, unacknowledged until now, is acknowledged.
func (s *sender) acked(p *txPacket, now clock.Time, a AckedPacket) int {
	p.acked = true
	s.ackedBytes += p.n
	s.list.remove(p)
	if p.inflight {
		p.inflight = false
		s.inflight -= p.n
	}
	if s.acks != nil {
		s.acks.OnAcked(a)
	}
	m := p.msg
	m.acked++
	if m.acked == m.npkts {
		s.complete(m, now)
	}
	return 1
}

// complete emits the record of a fully acknowledged message.
func (s *sender) complete(m *outMsg, now clock.Time) {
	for i, q := range s.msgs {
		if q == m {
			s.msgs = append(s.msgs[:i], s.msgs[i+1:]...)
			break
		}
	}
	r := &m.rec
	r.EndNs = ns(now)
	r.FCTNs = r.EndNs - r.StartNs
	r.RetxNeeded = r.Retransmissions - r.RetxSpurious
	r.Reroutes = s.reroutes - m.reroutesAtStart
	if f := s.ep.cfg.OnMessageSent; f != nil {
		f(*r)
	}
}

// onNACK handles a NACK for this flow. A PSN is declared lost only if the
// NACK is evidence about its latest copy: that copy went out on the
// trigger's EV (the same FIFO path) before the trigger did, or it is the
// trigger itself (a trimmed copy, NACKed by its own header). Anything
// else is stale evidence about a copy that was already replaced.
func (s *sender) onNACK(pk *wire.Packet) {
	now := s.ep.clk.Now()
	trigger := liftStamp(now, pk.TSEcr)
	for _, psn := range pk.NACKs {
		p := s.ring.get(psn)
		ok := p != nil && !p.acked && !p.lost && p.copies > 0 && p.lastEV == pk.EV &&
			(p.last < trigger || (psn == pk.PSN && p.last == trigger))
		if p != nil {
			p.msg.rec.NACKs++
			if ok {
				p.msg.rec.NACKsAccepted++
				s.declareLost(p, CauseNACK, now)
			}
		}
		s.scheme.OnNACK(NACKInfo{PSN: psn, TriggerEV: pk.EV, Accepted: ok})
	}
	s.armRTO()
	s.pump()
}
