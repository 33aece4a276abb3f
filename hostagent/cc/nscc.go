package cc

import (
	"math"
	"time"

	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/transport"
)

// NSCC's reference network, for which the specification gives its
// constants: 100 Gbit/s and a 12 us round trip.
const (
	nsccRefRTT = 12 * time.Microsecond
	nsccRefBDP = 100e9 / 8 * 12e-6 // bytes
)

// nscc is the Ultra Ethernet Transport's NSCC (UE specification 1.0, after
// htsim's reference model): a window in bytes driven by ECN and queueing
// delay together.
type nscc struct{ cfg NSCCParams }

func (nscc) Name() string { return "nscc" }

func (n nscc) NewFlow(f transport.CCFlow) transport.FlowCC {
	c := &n.cfg
	w := windowOf(f)
	target := float64(c.Target)
	fl := &nsccFlow{
		cfg: c, flow: f, mss: w.mss, cap: w.max, netRTT: f.BaseRTT, baseRTT: f.BaseRTT,
		target: target, minWnd: w.mss,
		qaThreshold:  c.QuickAdapt * target,
		adjustBytes:  float64(c.AdjustPackets) * w.mss,
		fastDelay:    float64(c.FastDelay),
		adjustPeriod: c.AdjustPeriod,
	}
	fl.setBDP(w.bdp)
	// The constants scale with the network: a = BDP / reference BDP,
	// b = target / reference RTT.
	a := w.bdp / nsccRefBDP
	b := target / float64(nsccRefRTT)
	fl.alpha = c.Alpha * w.mss * a * b / target // bytes per ns of headroom per acknowledged byte
	fl.fairInc = c.FairIncrease * w.mss * a
	fl.eta = c.Eta * w.mss * a
	fl.fastScale = c.FastIncrease * a
	fl.cwnd = clamp(c.InitialWindow*w.bdp, fl.minWnd, fl.maxWnd)
	return fl
}

type nsccFlow struct {
	cfg      *NSCCParams
	flow     transport.CCFlow
	mss, cap float64
	netRTT   time.Duration // the fabric's base RTT (Config.BaseRTT)

	cwnd, minWnd, maxWnd float64 // bytes
	target               float64 // ns
	qaThreshold          float64 // ns
	fastDelay            float64 // ns
	adjustBytes          float64
	adjustPeriod         time.Duration
	alpha, fairInc, eta  float64
	fastScale            float64

	baseRTT  time.Duration // the flow's unloaded round trip
	avgDelay float64       // ns, smoothed queueing delay

	inc          float64 // increases gathered since the last adjustment (bytes x bytes)
	received     float64 // bytes acknowledged since the last adjustment
	lastAdjust   clock.Time
	lastDecrease clock.Time
	decreased    bool
	fastCount    float64 // bytes acknowledged in a row with delay under fast_delay
	fastIncrease bool
	achieved     float64 // bytes delivered since qaEnd was set
	ignored      float64 // bytes delivered since the last quick adapt
	toIgnore     float64 // in flight at the last quick adapt: marks they bring are old news
	qaEnd        clock.Time
	qaStarted    bool
	triggerQA    bool
}

// setBDP sets the maximum window from the bandwidth-delay product.
func (f *nsccFlow) setBDP(bdp float64) {
	f.maxWnd = clamp(f.cfg.MaxWindow*bdp, f.minWnd, f.cap)
}

// sample takes an RTT sample and returns its queueing delay: what is
// above the base RTT. The base RTT starts as the fabric's and follows the
// smallest DATA sample below it (a shorter path), shrinking the maximum
// window with it, as the reference model does. Starting from the fabric's
// and not from the first sample matters: a flow that starts behind a queue
// would take the queue for its base and never see a delay. Probes are
// header-only and cross the fabric faster than DATA: their samples give a
// delay but do not move the base.
func (f *nsccFlow) sample(rtt time.Duration, ce, probe bool) float64 {
	if rtt < f.baseRTT {
		if probe {
			rtt = f.baseRTT
		} else {
			f.baseRTT = rtt
			f.setBDP(float64(f.flow.BDPAt(rtt)))
		}
	}
	delay := float64(rtt - f.baseRTT)
	f.updateDelay(delay, ce)
	return delay
}

// updateDelay folds a queueing-delay sample into the average. An unmarked
// sample above target counts as a quarter of the base RTT: delay without
// marks is a slow path's, not a congested queue's (the reference model's
// rule), and must not drive multiplicative decreases.
func (f *nsccFlow) updateDelay(delay float64, ce bool) {
	g := f.cfg.DelayEWMA
	if !ce && delay > f.target {
		delay = float64(f.baseRTT) / 4
	}
	f.avgDelay = g*delay + (1-g)*f.avgDelay
}

func (f *nsccFlow) OnACK(a transport.CCAck) {
	delay := f.avgDelay
	if a.RTT > 0 {
		delay = f.sample(a.RTT, a.CE, a.Probe)
	}
	n := float64(a.Bytes)
	f.achieved += n
	f.received += n
	f.ignored += n
	if f.quickAdapt(a.At, false, a.CE, delay, a.Inflight) {
		return
	}
	switch {
	case !a.CE && delay >= f.target:
		f.inc += f.fairInc * n // fair increase: the same for every flow
	case !a.CE:
		f.proportionalIncrease(n, delay)
	case delay >= f.target:
		f.multiplicativeDecrease(a.At)
	default:
		// Marked but the queue is short: a path's congestion, for the
		// load balancer, not the window.
	}
	f.cwnd = clamp(f.cwnd, f.minWnd, f.maxWnd)
	if f.received > f.adjustBytes || a.At.Sub(f.lastAdjust) > f.adjustPeriod {
		f.adjust(a.At)
	}
}

// proportionalIncrease grows the window in proportion to the headroom
// under the target, or fast when the queue has stayed empty for a window.
func (f *nsccFlow) proportionalIncrease(n, delay float64) {
	if delay < f.fastDelay {
		f.fastCount += n
		if f.fastCount > f.cwnd || f.fastIncrease {
			f.cwnd += n * f.fastScale
			f.fastIncrease = true
			return
		}
	} else {
		f.fastCount = 0
	}
	f.fastIncrease = false
	f.inc += f.alpha * n * (f.target - delay)
}

// multiplicativeDecrease cuts the window in proportion to how far the
// average delay exceeds the target, at most once per base RTT.
func (f *nsccFlow) multiplicativeDecrease(now clock.Time) {
	f.fastIncrease, f.fastCount = false, 0
	if f.avgDelay <= f.target || (f.decreased && now.Sub(f.lastDecrease) <= f.baseRTT) {
		return
	}
	f.cwnd *= max(1-f.cfg.Gamma*(f.avgDelay-f.target)/f.avgDelay, 1-f.cfg.MaxDecrease)
	f.lastDecrease, f.decreased = now, true
}

// adjust applies the increases gathered: inc/cwnd bytes, and eta once per
// adjust_period.
func (f *nsccFlow) adjust(now clock.Time) {
	f.cwnd += f.inc / f.cwnd
	if now.Sub(f.lastAdjust) >= f.adjustPeriod {
		f.cwnd += f.eta
		f.lastAdjust = now
	}
	f.inc, f.received = 0, 0
	f.cwnd = clamp(f.cwnd, f.minWnd, f.maxWnd)
}

// quickAdapt, once per base RTT + target: after a loss, or when the delay
// exceeds qa_threshold x target, the window becomes what was delivered in
// the last interval, if that was small. Marks on the data that was in
// flight then are old news and ignored. It reports whether the ACK's
// signal was consumed.
func (f *nsccFlow) quickAdapt(now clock.Time, loss, ce bool, delay float64, inflight int) bool {
	if f.cfg.NoQuickAdapt {
		return false
	}
	done := false
	if ce && f.ignored < f.toIgnore {
		done = true
	} else if !f.qaStarted || now > f.qaEnd {
		gate := f.maxWnd / math.Exp2(float64(f.cfg.QAGate))
		if f.qaStarted && (f.triggerQA || loss || delay > f.qaThreshold) && f.achieved < gate {
			f.cwnd = max(f.achieved, f.minWnd)
			f.toIgnore, f.ignored = float64(inflight), 0
			f.triggerQA = false
			done = true
		}
		f.achieved = 0
		f.qaEnd = now.Add(f.baseRTT + time.Duration(f.target))
		f.qaStarted = true
	}
	if done {
		f.inc, f.received = 0, 0
	}
	return done
}

// OnLoss: a lost packet is a congestion signal of the largest delay (the
// reference model treats a NACK as a sample of base RTT + the fabric's
// RTT), triggers quick adapt and, if that does not act, takes the packet's
// bytes off the window.
func (f *nsccFlow) OnLoss(l transport.CCLoss) {
	n := float64(l.Bytes)
	f.ignored += n
	f.updateDelay(float64(f.netRTT), true)
	f.triggerQA = true
	if !f.quickAdapt(l.At, true, true, 0, l.Inflight) {
		f.cwnd = clamp(f.cwnd-n, f.minWnd, f.maxWnd)
	}
}

func (f *nsccFlow) OnRTO(clock.Time, int) {}

func (f *nsccFlow) Window() int { return wbytes(f.cwnd) }
