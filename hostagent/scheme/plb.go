package scheme

import (
	"time"

	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/hostagent/wire"
)

// plbScheme is Protective Load Balancing (Qureshi et al., SIGCOMM '22) with the
// FlowBender parameters Ordered Chaos evaluates it with: the flow travels
// one EV, as under ecmp; at the end of every round the sender computes the
// fraction of CE-marked ACKs of the round, and once that fraction has
// exceeded ECNThreshold (default 0.05) for Rounds consecutive rounds
// (default 1: "rerouted every congestion period") the flow moves to a new
// random EV. Loss recovery is by RTO.
//
// Choices the sources leave open, and what is done here:
//
//   - A round is a round trip counted in PSNs, as TCP counts them: it ends
//     with the first ACK of a PSN sent after the round began.
//   - ACKs of copies sent on an earlier EV do not count: they describe the
//     path the flow has left. A move starts a new round.
//   - PLB's own repath rules are there as options: IdleRounds moves the
//     flow as soon as nothing is in flight after that many congested rounds
//     (checked at every ACK), and SuspendAfterRTO pauses moves on
//     congestion for a random time in [S, 2S) after a move on RTO.
//   - On RTO the flow moves to a new EV (PLB repaths on RTO, as Linux does);
//     KeepPathOnRTO keeps it.
type plbScheme struct{ cfg PLBParams }

func (plbScheme) Name() string { return "plb" }

func (s plbScheme) NewSender(env transport.SenderEnv) transport.SenderScheme {
	p := &plbSender{env: env, cfg: s.cfg, ev: uint16(env.Rand().Uint32()), roundEnd: env.NextPSN()}
	p.h = newHistory([]uint16{p.ev}, env.Now())
	return p
}

func (plbScheme) NewReceiver(transport.ReceiverEnv, *wire.Packet) transport.ReceiverScheme {
	return nopReceiver{}
}

type plbSender struct {
	env       transport.SenderEnv
	cfg       PLBParams
	ev        uint16
	roundEnd  uint32 // the round ends with an ACK of this PSN or later
	acks, ce  int
	congested int
	suspended clock.Time // no move on congestion before this
	h         history
}

func (s *plbSender) SubflowBits() uint8                          { return 0 }
func (s *plbSender) DataEV(uint32) uint16                        { return s.ev }
func (s *plbSender) RetransmitEV(uint32, transport.Cause) uint16 { return s.ev }
func (s *plbSender) OnSent(transport.SentPacket)                 { s.h.sent(0) }
func (s *plbSender) OnNACK(transport.NACKInfo)                   {}

func (s *plbSender) OnFeedback(f transport.Feedback) {
	if f.EV != s.ev {
		return
	}
	s.acks++
	if f.CE {
		s.ce++
	}
	if !wire.SeqLess(f.PSN, s.roundEnd) {
		if float64(s.ce) > s.cfg.ECNThreshold*float64(s.acks) {
			s.congested++
		} else {
			s.congested = 0
		}
		s.newRound()
	}
	switch {
	case f.At < s.suspended:
	case s.congested >= s.cfg.Rounds:
		s.repath("plb")
	case s.cfg.IdleRounds > 0 && s.congested >= s.cfg.IdleRounds && s.idle():
		s.repath("plb-idle")
	}
}

// idle reports whether nothing of the flow is in flight.
func (s *plbSender) idle() bool {
	for range s.env.Outstanding() {
		return false
	}
	return true
}

func (s *plbSender) newRound() {
	s.acks, s.ce, s.roundEnd = 0, 0, s.env.NextPSN()
}

func (s *plbSender) repath(reason string) {
	old := s.ev
	for s.ev == old {
		s.ev = uint16(s.env.Rand().Uint32())
	}
	s.congested = 0
	s.newRound()
	s.env.NoteReroute(0, old, s.ev, reason)
	s.h.change(0, s.env.Now(), s.ev, reason)
}

func (s *plbSender) OnRTO([]transport.LostPacket) {
	if s.cfg.KeepPathOnRTO {
		return
	}
	s.repath("rto")
	if d := s.cfg.SuspendAfterRTO; d > 0 {
		s.suspended = s.env.Now().Add(d + time.Duration(s.env.Rand().Int64N(int64(d))))
	}
}

// StateBytes: EV 2, round-end PSN 4, ACK and CE counts 2 each, congested
// rounds 1, the end of a suspension 4.
func (s *plbSender) StateBytes() int                     { return 2 + 4 + 2 + 2 + 1 + 4 }
func (s *plbSender) Close()                              {}
func (s *plbSender) Subflows() []transport.SubflowRecord { return s.h.Subflows() }
