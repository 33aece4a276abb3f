package transport

import "github.com/ftlab/ftlab/hostagent/clock"

// armRTO points the retransmission timer at the oldest outstanding copy:
// it fires RTO after that copy was sent (RFC 6298's timer, restarted from
// the head's send time rather than the last ACK, so one stuck packet is
// not kept alive by ACKs of later ones).
func (s *sender) armRTO() {
	h := s.list.head
	if h == nil || s.closed {
		if s.rtoTimer != nil {
			s.rtoTimer.Stop()
		}
		return
	}
	deadline := h.last.Add(s.rtt.rto())
	if g := clock.Time(s.ep.cfg.RTOGranularity); g > 1 {
		deadline = (deadline + g - 1) / g * g
	}
	d := deadline.Sub(s.ep.clk.Now())
	if s.rtoTimer == nil {
		s.rtoTimer = s.ep.clk.AfterFunc(d, s.onRTO)
	} else {
		s.rtoTimer.Reset(d)
	}
}

// onRTO declares lost every outstanding copy older than the RTO, backs
// off, lets the scheme react (a reroute, typically), then retransmits.
func (s *sender) onRTO() {
	if s.closed {
		return
	}
	now := s.ep.clk.Now()
	rto := s.rtt.rto()
	var lost []LostPacket
	s.rtoCount++
	for p := s.list.head; p != nil && p.last.Add(rto) <= now; p = s.list.head {
		lost = append(lost, LostPacket{PSN: p.psn, EV: p.lastEV, SentAt: p.last})
		if m := p.msg; m.rtoSeen != s.rtoCount {
			m.rtoSeen = s.rtoCount
			m.rec.RTOs++
		}
		s.declareLost(p, CauseRTO, now)
	}
	if len(lost) == 0 { // nothing overdue (the head changed): just re-arm
		s.rtoCount--
		s.armRTO()
		return
	}
	s.rtt.backoff++
	if s.cc != nil {
		s.cc.ctl.OnRTO(now, len(lost))
		s.applyCC()
	}
	s.scheme.OnRTO(lost)
	s.armRTO()
	s.pump()
}
