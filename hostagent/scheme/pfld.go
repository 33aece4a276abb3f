package scheme

import (
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/hostagent/wire"
)

// pfldScheme is rss+pfld: RSS with Precise Fast Loss Detection.
type pfldScheme struct {
	rss rssConfig
	cfg PFLDParams
}

func (pfldScheme) Name() string { return "rss+pfld" }

func (s pfldScheme) NewSender(env transport.SenderEnv) transport.SenderScheme {
	cfg := s.cfg
	return newRSSSender(env, s.rss, &cfg)
}

func (s pfldScheme) NewReceiver(env transport.ReceiverEnv, first *wire.Packet) transport.ReceiverScheme {
	return &pfldReceiver{env: env, bm: newBitmap(s.cfg.BitmapBits, wire.InitialPSN(first.Flow))}
}

// pfldOnSent emits the probes that follow a DATA packet of subflow i.
func (s *rssSender) pfldOnSent(p transport.SentPacket, i int) {
	sf := &s.subs[i]
	c := s.pfld
	if p.Cause != transport.CauseNew {
		// A retransmission's PSN is out of sequence: only a probe right
		// behind it on the same EV can show whether it arrived.
		if !c.NoRTXProbes {
			s.env.SendProbe(wire.TypeRTX, p.EV, p.PSN)
		}
		return
	}
	sf.sectionSent, sf.lastPSN = true, p.PSN
	// Last packet of this subflow in the message: nothing will come
	// behind it to reveal its loss, so a tail probe does.
	if wire.SeqLess(p.MsgLastPSN, p.PSN+uint32(s.cfg.Sigma)) {
		if !c.NoTailProbes {
			s.env.SendProbe(wire.TypeTail, p.EV, p.PSN)
			sf.sincePeriodic = 0
		}
		return
	}
	if c.Periodic == 0 { // off
		return
	}
	sf.sincePeriodic++
	if sf.sincePeriodic < c.Periodic {
		return
	}
	if !c.PeriodicAnyRate && sf.everPeriodic && p.At.Sub(sf.lastPeriodic) < s.env.SRTT() {
		return
	}
	s.env.SendProbe(wire.TypePeriodic, p.EV, p.PSN)
	sf.sincePeriodic, sf.lastPeriodic, sf.everPeriodic = 0, p.At, true
}
