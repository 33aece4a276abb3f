package cc

import (
	"math"
	"time"

	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/transport"
)

// swift is Swift (Kumar et al., SIGCOMM 2020), its window in packets as
// the paper writes it.
type swift struct{ cfg SwiftParams }

func (swift) Name() string { return "swift" }

func (s swift) NewFlow(f transport.CCFlow) transport.FlowCC {
	w := windowOf(f)
	c := &s.cfg
	hops := c.Hops
	if f.Hops > 0 {
		hops = f.Hops
	}
	fl := &swiftFlow{
		cfg: c, mss: w.mss, min: c.MinWindow, max: w.max / w.mss, baseRTT: f.BaseRTT,
		target:  float64(c.BaseTarget + time.Duration(hops)*c.PerHop),
		fsRange: float64(c.FSRange),
	}
	// Flow scaling adds alpha/sqrt(cwnd) + beta, clamped to [0, fs_range]:
	// all of fs_range at fs_min_window, nothing at fs_max_window.
	fl.fsAlpha = fl.fsRange / (1/math.Sqrt(c.FSMinWindow) - 1/math.Sqrt(c.FSMaxWindow))
	fl.fsBeta = -fl.fsAlpha / math.Sqrt(c.FSMaxWindow)
	fl.cwnd = clamp(c.InitialWindow*w.bdp/w.mss, fl.min, fl.max)
	return fl
}

type swiftFlow struct {
	cfg            *SwiftParams
	mss            float64
	cwnd, min, max float64 // packets
	baseRTT        time.Duration
	target         float64 // ns: base target and the hop term
	fsRange        float64
	fsAlpha        float64
	fsBeta         float64
	lastDecrease   clock.Time
	decreased      bool
	srtt           time.Duration
	retxCount      int // consecutive timeouts
}

// targetDelay is the flow's delay target at its current window.
func (f *swiftFlow) targetDelay() time.Duration {
	fs := 0.0
	if f.fsRange > 0 {
		fs = clamp(f.fsAlpha/math.Sqrt(f.cwnd)+f.fsBeta, 0, f.fsRange)
	}
	return time.Duration(f.target + fs)
}

// canDecrease: Swift decreases at most once per round trip.
func (f *swiftFlow) canDecrease(now clock.Time) bool {
	rtt := f.srtt
	if rtt <= 0 {
		rtt = f.baseRTT
	}
	return !f.decreased || now.Sub(f.lastDecrease) >= rtt
}

func (f *swiftFlow) decrease(now clock.Time, factor float64) {
	f.cwnd = clamp(f.cwnd*factor, f.min, f.max)
	f.lastDecrease, f.decreased = now, true
}

func (f *swiftFlow) OnACK(a transport.CCAck) {
	f.srtt = a.SRTT
	if a.Bytes > 0 {
		f.retxCount = 0
	}
	if a.RTT <= 0 || a.Probe {
		// Swift's delay is a DATA packet's: a header-only probe crosses
		// the fabric faster and would understate it.
		return
	}
	delay := a.RTT
	if target := f.targetDelay(); delay < target {
		n := float64(a.Bytes) / f.mss
		if f.cwnd >= 1 {
			f.cwnd += f.cfg.AI * n / f.cwnd
		} else {
			f.cwnd += f.cfg.AI * n
		}
		f.cwnd = clamp(f.cwnd, f.min, f.max)
	} else if f.canDecrease(a.At) {
		excess := float64(delay-target) / float64(delay)
		f.decrease(a.At, max(1-f.cfg.Beta*excess, 1-f.cfg.MaxMDF))
	}
}

// OnLoss is Swift's fast recovery for a NACK or a sender-side detection:
// a cut of max_mdf, once per round trip. Timeouts are OnRTO's.
func (f *swiftFlow) OnLoss(l transport.CCLoss) {
	if l.Cause == transport.CauseRTO {
		return
	}
	f.retxCount = 0
	if f.canDecrease(l.At) {
		f.decrease(l.At, 1-f.cfg.MaxMDF)
	}
}

func (f *swiftFlow) OnRTO(at clock.Time, _ int) {
	f.retxCount++
	if f.retxCount >= f.cfg.RetxReset {
		f.cwnd = f.min
		f.lastDecrease, f.decreased = at, true
	} else if f.canDecrease(at) {
		f.decrease(at, 1-f.cfg.MaxMDF)
	}
}

func (f *swiftFlow) Window() int { return wbytes(f.cwnd * f.mss) }
