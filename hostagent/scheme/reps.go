package scheme

import (
	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/hostagent/wire"
)

// repsScheme is Recycled Entropy Packet Spraying (Bonato et al., EuroSys '26),
// an Ordered Chaos baseline: every packet gets its own EV, as in rps, but
// EVs whose ACK came back without a CE mark are kept in a small ring and
// reused, one packet each, so traffic concentrates on paths that delivered
// without congestion; with the ring empty the sender explores a random EV.
// A CE-marked ACK drops its EV. When the retransmission timer expires
// REPS freezes: for a while it stops exploring (a random EV may hit the
// failure that caused the timeout) and cycles through the EVs in the ring
// without consuming them. Loss recovery is
// by RTO, as for rps.
//
// Choices the sources leave open, and what is done here:
//
//   - The ring holds Buffer EVs (default 8); when full, a newly recycled EV
//     replaces the oldest. The oldest is reused first.
//   - Feedback on duplicates (DUP) recycles its EV like any other: the
//     copy was delivered, unmarked, on that path.
//   - Freezing lasts Freeze, by default the RTO in force when it starts
//     (backoff included); another timeout during it restarts it. With the
//     ring empty while frozen, the sender still has to explore.
//   - Retransmissions choose their EV like new packets.
type repsScheme struct{ cfg REPSParams }

func (repsScheme) Name() string { return "reps" }

func (s repsScheme) NewSender(env transport.SenderEnv) transport.SenderScheme {
	return &repsSender{env: env, cfg: s.cfg, ring: make([]uint16, s.cfg.Buffer), h: history{{ID: 0}}}
}

func (repsScheme) NewReceiver(transport.ReceiverEnv, *wire.Packet) transport.ReceiverScheme {
	return nopReceiver{}
}

type repsSender struct {
	env         transport.SenderEnv
	cfg         REPSParams
	ring        []uint16
	start, n    int // oldest entry, entries held
	cursor      int // frozen: next entry to reuse, counted from start
	frozenUntil clock.Time
	frozen      bool
	h           history

	explored, recycled int // EV choices, for tests
}

func (s *repsSender) SubflowBits() uint8 { return 0 }

// next picks an EV: a recycled one if any (not consumed while frozen),
// else a random one.
func (s *repsSender) next() uint16 {
	if s.frozen && s.env.Now() >= s.frozenUntil {
		s.frozen = false
	}
	if s.n == 0 {
		s.explored++
		return uint16(s.env.Rand().Uint32())
	}
	s.recycled++
	if s.frozen {
		ev := s.ring[(s.start+s.cursor%s.n)%len(s.ring)]
		s.cursor = (s.cursor + 1) % s.n
		return ev
	}
	ev := s.ring[s.start]
	s.start = (s.start + 1) % len(s.ring)
	s.n--
	return ev
}

func (s *repsSender) DataEV(uint32) uint16                        { return s.next() }
func (s *repsSender) RetransmitEV(uint32, transport.Cause) uint16 { return s.next() }
func (s *repsSender) OnSent(transport.SentPacket)                 { s.h.sent(0) }
func (s *repsSender) OnNACK(transport.NACKInfo)                   {}

func (s *repsSender) OnFeedback(f transport.Feedback) {
	if f.CE {
		return // congested path: let its EV go
	}
	if s.n == len(s.ring) { // full: the newest replaces the oldest
		s.start = (s.start + 1) % len(s.ring)
		s.n--
	}
	s.ring[(s.start+s.n)%len(s.ring)] = f.EV
	s.n++
}

func (s *repsSender) OnRTO([]transport.LostPacket) {
	if s.cfg.NoFreeze {
		return
	}
	d := s.cfg.Freeze
	if d == 0 {
		d = s.env.RTO()
	}
	s.frozen, s.frozenUntil, s.cursor = true, s.env.Now().Add(d), 0
}

// StateBytes: the ring (2 B per EV), start and count (1 B each for the
// default 8; 2 B each above 256), the freeze deadline (4 B).
func (s *repsSender) StateBytes() int {
	idx := 1
	if len(s.ring) > 256 {
		idx = 2
	}
	return 2*len(s.ring) + 2*idx + 4
}

func (s *repsSender) Close()                              {}
func (s *repsSender) Subflows() []transport.SubflowRecord { return s.h.Subflows() }
