package scheme

import (
	"fmt"

	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/hostagent/wire"
)

// PFLD is RSS with Precise Fast Loss Detection. Zero fields take the
// defaults; the No* switches exist for ablations (paper, Fig. 15).
type PFLD struct {
	RSS RSS
	// BitmapBits is the receiver's per-flow window in PSNs, a multiple of
	// 64 (default 512). It must cover the largest unresolved PSN span:
	// keep the window in packets below it.
	BitmapBits int
	// Periodic sends a proactive probe after every Periodic new packets
	// of a subflow (default 8; negative: never).
	Periodic int
	// PeriodicAnyRate lifts the limit of one periodic probe per subflow
	// per smoothed RTT.
	PeriodicAnyRate bool
	// Ablation switches.
	NoTailProbes, NoSectionProbes, NoRTXProbes bool
}

// Defaults.
const (
	DefaultBitmapBits = 512
	DefaultPeriodic   = 8
)

func (c PFLD) withDefaults() (PFLD, error) {
	r, err := c.RSS.withDefaults()
	if err != nil {
		return c, err
	}
	c.RSS = r
	if c.BitmapBits == 0 {
		c.BitmapBits = DefaultBitmapBits
	}
	if c.Periodic == 0 {
		c.Periodic = DefaultPeriodic
	}
	if c.BitmapBits < 64 || c.BitmapBits%64 != 0 || c.BitmapBits > 1<<20 {
		return c, fmt.Errorf("scheme: rss+pfld: bitmap of %d bits: want a multiple of 64 in 64..%d", c.BitmapBits, 1<<20)
	}
	return c, nil
}

// NewPFLD returns the rss+pfld scheme, validated, defaults filled in.
func NewPFLD(c PFLD) (transport.Scheme, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	return pfldScheme{cfg: c}, nil
}

type pfldScheme struct{ cfg PFLD }

func (pfldScheme) Name() string { return "rss+pfld" }

func (s pfldScheme) NewSender(env transport.SenderEnv) transport.SenderScheme {
	cfg := s.cfg
	return newRSSSender(env, cfg.RSS, &cfg)
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
	if c.Periodic < 0 {
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
