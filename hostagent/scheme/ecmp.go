package scheme

import (
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/hostagent/wire"
)

type wirePacket = wire.Packet

// ECMP sends a whole flow on one random EV.
type ECMP struct{ ECMPParams }

// Name is "ecmp".
func (ECMP) Name() string { return "ecmp" }

// NewSender implements transport.Scheme.
func (c ECMP) NewSender(env transport.SenderEnv) transport.SenderScheme {
	s := &ecmpSender{env: env, cfg: c, ev: uint16(env.Rand().Uint32())}
	s.h = newHistory([]uint16{s.ev}, env.Now())
	return s
}

// NewReceiver implements transport.Scheme.
func (ECMP) NewReceiver(transport.ReceiverEnv, *wire.Packet) transport.ReceiverScheme {
	return nopReceiver{}
}

type ecmpSender struct {
	env transport.SenderEnv
	cfg ECMP
	ev  uint16
	h   history
}

func (s *ecmpSender) SubflowBits() uint8                          { return 0 }
func (s *ecmpSender) DataEV(uint32) uint16                        { return s.ev }
func (s *ecmpSender) RetransmitEV(uint32, transport.Cause) uint16 { return s.ev }
func (s *ecmpSender) OnSent(transport.SentPacket)                 { s.h.sent(0) }
func (s *ecmpSender) OnFeedback(transport.Feedback)               {}
func (s *ecmpSender) OnNACK(transport.NACKInfo)                   {}
func (s *ecmpSender) StateBytes() int                             { return 2 }
func (s *ecmpSender) Close()                                      {}
func (s *ecmpSender) Subflows() []transport.SubflowRecord         { return s.h.Subflows() }

func (s *ecmpSender) OnRTO([]transport.LostPacket) {
	if s.cfg.KeepPathOnRTO {
		return
	}
	old := s.ev
	for s.ev == old {
		s.ev = uint16(s.env.Rand().Uint32())
	}
	s.env.NoteReroute(0, old, s.ev, "rto")
	s.h.change(0, s.env.Now(), s.ev, "rto")
}

// RPS sprays packets: every copy of every packet gets a random EV.
type RPS struct{}

// Name is "rps".
func (RPS) Name() string { return "rps" }

// NewSender implements transport.Scheme.
func (RPS) NewSender(env transport.SenderEnv) transport.SenderScheme {
	return &rpsSender{env: env, h: history{{ID: 0}}}
}

// NewReceiver implements transport.Scheme.
func (RPS) NewReceiver(transport.ReceiverEnv, *wire.Packet) transport.ReceiverScheme {
	return nopReceiver{}
}

type rpsSender struct {
	env transport.SenderEnv
	h   history
}

func (s *rpsSender) SubflowBits() uint8   { return 0 }
func (s *rpsSender) DataEV(uint32) uint16 { return uint16(s.env.Rand().Uint32()) }
func (s *rpsSender) RetransmitEV(uint32, transport.Cause) uint16 {
	return uint16(s.env.Rand().Uint32())
}
func (s *rpsSender) OnSent(transport.SentPacket)         { s.h.sent(0) }
func (s *rpsSender) OnFeedback(transport.Feedback)       {}
func (s *rpsSender) OnNACK(transport.NACKInfo)           {}
func (s *rpsSender) OnRTO([]transport.LostPacket)        {}
func (s *rpsSender) StateBytes() int                     { return 0 }
func (s *rpsSender) Close()                              {}
func (s *rpsSender) Subflows() []transport.SubflowRecord { return s.h.Subflows() }
