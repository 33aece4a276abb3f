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
	if !sf.started { // the per-RTT clock runs from the subflow's first packet
		sf.started, sf.lastProbe = true, p.At
	}
	// Last packet of this subflow in the message: nothing will come
	// behind it to reveal its loss, so a tail probe does.
	if wire.SeqLess(p.MsgLastPSN, p.PSN+uint32(s.cfg.Sigma)) {
		if !c.NoTailProbes {
			s.env.SendProbe(wire.TypeTail, p.EV, p.PSN)
			sf.sincePeriodic, sf.lastProbe = 0, p.At
		}
		return
	}
	// Proactive probes (IV-B2), by count and by time (V-F's variants).
	sf.sincePeriodic++
	byCount := c.Periodic > 0 && sf.sincePeriodic >= c.Periodic
	byTime := c.PeriodicPerRTT && p.At.Sub(sf.lastProbe) >= s.env.SRTT()
	if !byCount && !byTime {
		return
	}
	s.env.SendProbe(wire.TypePeriodic, p.EV, p.PSN)
	sf.sincePeriodic, sf.lastProbe = 0, p.At
}
