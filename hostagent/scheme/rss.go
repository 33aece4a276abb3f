package scheme

import (
	"math/bits"
	"time"

	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/hostagent/wire"
)

// rssConfig is an RSS configuration ready to run: RSSParams (validated by
// New) with its metric parsed.
type rssConfig struct {
	RSSParams
	metric Metric
}

func newRSSConfig(p RSSParams) rssConfig {
	m, err := ParseMetric(p.Metric)
	if err != nil {
		panic(err) // New validated the enum
	}
	return rssConfig{RSSParams: p, metric: m}
}

type rssScheme struct{ cfg rssConfig }

func (rssScheme) Name() string { return "rss" }

func (s rssScheme) NewSender(env transport.SenderEnv) transport.SenderScheme {
	return newRSSSender(env, s.cfg, nil)
}

func (rssScheme) NewReceiver(transport.ReceiverEnv, *wire.Packet) transport.ReceiverScheme {
	return nopReceiver{}
}

// subflow is the sender's state of one subflow.
type subflow struct {
	ev uint16
	c  counters

	waiting      bool       // sent since the last feedback (no-feedback timer)
	waitingSince clock.Time // when that started

	// PFLD: the current section.
	sectionSent   bool       // a packet went out with ev
	lastPSN       uint32     // latest new PSN sent with ev
	sincePeriodic int        // new packets since the last tail or periodic probe
	lastProbe     clock.Time // when that probe (or the first packet) went
	started       bool       // the subflow has sent a new packet
}

// rssSender is the sending side of rss and, with pfld set, rss+pfld.
type rssSender struct {
	env      transport.SenderEnv
	cfg      rssConfig
	pfld     *PFLDParams
	bits     uint8
	mask     uint32
	subs     []subflow
	deadline clock.Time
	nfTimer  clock.Timer
	h        history
}

func newRSSSender(env transport.SenderEnv, cfg rssConfig, pfld *PFLDParams) *rssSender {
	s := &rssSender{env: env, cfg: cfg, pfld: pfld, subs: make([]subflow, cfg.Sigma)}
	s.bits = uint8(bits.TrailingZeros(uint(cfg.Sigma)))
	s.mask = uint32(cfg.Sigma - 1)
	evs := make([]uint16, cfg.Sigma)
	for i := range s.subs {
		s.subs[i].ev = s.freshEV(i)
		evs[i] = s.subs[i].ev
	}
	now := env.Now()
	s.deadline = now.Add(cfg.Tau)
	s.h = newHistory(evs, now)
	return s
}

// nextPSNOn is the next PSN subflow i will carry for the first time.
func (s *rssSender) nextPSNOn(i int) uint32 {
	n := s.env.NextPSN()
	return n + (uint32(i)-n)&s.mask
}

// freshEV is the EV a reroute of subflow i moves it to: PSN-derived under
// PFLD (the start of the new section), random upper bits otherwise.
func (s *rssSender) freshEV(i int) uint16 {
	if s.pfld != nil {
		return uint16(s.nextPSNOn(i))
	}
	return s.randomEV(i)
}

func (s *rssSender) randomEV(i int) uint16 {
	return uint16(s.env.Rand().Uint32())&^uint16(s.mask) | uint16(i)
}

func (s *rssSender) SubflowBits() uint8       { return s.bits }
func (s *rssSender) DataEV(psn uint32) uint16 { return s.subs[psn&s.mask].ev }

func (s *rssSender) RetransmitEV(psn uint32, cause transport.Cause) uint16 {
	i := int(psn & s.mask)
	if s.pfld != nil && cause == transport.CauseRTO && !s.cfg.KeepPathOnRTO {
		return s.randomEV(i)
	}
	return s.subs[i].ev
}

func (s *rssSender) OnSent(p transport.SentPacket) {
	i := int(p.PSN & s.mask)
	s.h.sent(i)
	if s.cfg.NoFeedback > 0 && !s.subs[i].waiting {
		s.subs[i].waiting, s.subs[i].waitingSince = true, p.At
		if s.nfTimer == nil {
			s.nfTimer = s.env.AfterFunc(s.cfg.NoFeedback, s.checkNoFeedback)
		}
	}
	if s.pfld != nil {
		s.pfldOnSent(p, i)
	}
}

func (s *rssSender) OnFeedback(f transport.Feedback) {
	sf := &s.subs[f.PSN&s.mask]
	if f.EV == sf.ev {
		sf.c.add(f.RTT, f.CE)
		sf.waiting = false
	}
	if f.At >= s.deadline {
		s.rerouteWorst(f.At)
	}
}

// rerouteWorst moves the worst subflow with samples to a new EV and
// starts the next interval.
func (s *rssSender) rerouteWorst(now clock.Time) {
	worst, wv := -1, 0.0
	for i := range s.subs {
		c := &s.subs[i].c
		if c.n == 0 {
			continue
		}
		if v := s.cfg.metric.value(c); worst < 0 || v > wv {
			worst, wv = i, v
		}
	}
	if worst >= 0 {
		s.reroute(worst, "reroute")
	}
	for i := range s.subs {
		s.subs[i].c = counters{}
	}
	jitter := time.Duration(0)
	if s.cfg.Jitter > 0 {
		jitter = time.Duration(s.env.Rand().Int64N(int64(s.cfg.Jitter) + 1))
	}
	s.deadline = now.Add(s.cfg.Tau + jitter)
}

// reroute gives subflow i a new EV, closing its PFLD section.
func (s *rssSender) reroute(i int, reason string) {
	sf := &s.subs[i]
	old, ev := sf.ev, s.freshEV(i)
	if ev == old { // PFLD section that has carried nothing yet: nothing to move
		return
	}
	if s.pfld != nil && sf.sectionSent && !s.pfld.NoSectionProbes {
		s.env.SendProbe(wire.TypeSectionEnd, old, sf.lastPSN)
	}
	sf.ev, sf.sectionSent, sf.waiting = ev, false, false
	s.env.NoteReroute(i, old, ev, reason)
	s.h.change(i, s.env.Now(), ev, reason)
}

func (s *rssSender) OnNACK(transport.NACKInfo) {}

func (s *rssSender) OnRTO(lost []transport.LostPacket) {
	if s.cfg.KeepPathOnRTO {
		return
	}
	done := make(map[int]bool)
	for _, p := range lost {
		i := int(p.PSN & s.mask)
		if !done[i] && p.EV == s.subs[i].ev {
			done[i] = true
			s.reroute(i, "rto")
		}
	}
}

// checkNoFeedback reroutes subflows silent for NoFeedback and re-arms.
func (s *rssSender) checkNoFeedback() {
	s.nfTimer = nil
	now := s.env.Now()
	next := time.Duration(-1)
	for i := range s.subs {
		sf := &s.subs[i]
		if !sf.waiting {
			continue
		}
		if age := now.Sub(sf.waitingSince); age >= s.cfg.NoFeedback {
			s.reroute(i, "nofeedback")
			sf.waiting = false
		} else if left := s.cfg.NoFeedback - age; next < 0 || left < next {
			next = left
		}
	}
	if next >= 0 {
		s.nfTimer = s.env.AfterFunc(next, s.checkNoFeedback)
	}
}

func (s *rssSender) StateBytes() int {
	per := 2 + s.cfg.metric.stateBytes() // EV + accumulators
	if s.pfld != nil {
		per += 4 + 1 // last PSN of the section, periodic-probe counter
		if s.pfld.PeriodicPerRTT {
			per += 4 // time of the last probe
		}
	}
	return len(s.subs)*per + 4 // + next deadline
}

func (s *rssSender) Close() {
	if s.nfTimer != nil {
		s.nfTimer.Stop()
	}
}

func (s *rssSender) Subflows() []transport.SubflowRecord { return s.h.Subflows() }
