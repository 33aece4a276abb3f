package cc

import (
	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/hostagent/wire"
)

// dctcp is RFC 8257's DCTCP on RFC 5681's window growth.
type dctcp struct{ cfg DCTCPParams }

func (dctcp) Name() string { return "dctcp" }

func (d dctcp) NewFlow(f transport.CCFlow) transport.FlowCC {
	w := windowOf(f)
	return &dctcpFlow{
		cfg: &d.cfg, w: w, alpha: d.cfg.AlphaInit,
		cwnd:     min(float64(d.cfg.InitialWindow)*w.mss, w.max),
		ssthresh: w.max, minWnd: float64(d.cfg.MinWindow) * w.mss,
	}
}

type dctcpFlow struct {
	cfg            *DCTCPParams
	w              window
	cwnd, ssthresh float64 // bytes
	minWnd         float64
	alpha          float64
	// The observation window (RFC 8257 3.3): bytes acknowledged and
	// marked since it began; it ends when the cumulative ACK reaches
	// windowEnd, the next PSN when it began.
	acked, marked float64
	windowEnd     uint32
	// A reduction (ECN or loss) lasts until the cumulative ACK passes
	// reduceEnd, the next PSN when it was made: at most one per window of
	// data, and no growth meanwhile.
	reduceEnd uint32
	started   bool
	cumAck    uint32
	rtoFlight float64 // data in flight when the pending timeout began
}

func (f *dctcpFlow) start(cumAck, next uint32) {
	if !f.started {
		f.started, f.windowEnd, f.reduceEnd = true, next, cumAck
	}
	f.cumAck = cumAck
}

// reducing reports whether a reduction made in the current window of data
// is still in force.
func (f *dctcpFlow) reducing() bool { return wire.SeqLess(f.cumAck, f.reduceEnd) }

func (f *dctcpFlow) OnACK(a transport.CCAck) {
	f.start(a.CumAck, a.NextPSN)
	n := float64(a.Bytes)
	f.acked += n
	if a.CE {
		f.marked += n
	}
	if !wire.SeqLess(a.CumAck, f.windowEnd) {
		// A window of data ended: fold its marked fraction into alpha.
		if f.acked > 0 {
			f.alpha = (1-f.cfg.G)*f.alpha + f.cfg.G*f.marked/f.acked
		}
		f.acked, f.marked, f.windowEnd = 0, 0, a.NextPSN
	}
	switch {
	case a.CE && !f.reducing():
		f.cwnd = max(f.cwnd*(1-f.alpha/2), f.minWnd)
		f.ssthresh = f.cwnd
		f.reduceEnd = a.NextPSN
	case n == 0 || f.reducing():
	case f.cwnd < f.ssthresh: // slow start, at most 2 MSS per ACK (RFC 3465)
		f.cwnd += min(n, 2*f.w.mss)
	default: // congestion avoidance: one MSS per window
		f.cwnd += f.w.mss * n / f.cwnd
	}
	f.cwnd = min(f.cwnd, f.w.max)
}

func (f *dctcpFlow) OnLoss(l transport.CCLoss) {
	f.start(l.CumAck, l.NextPSN)
	flight := float64(l.Inflight + l.Bytes)
	if l.Cause == transport.CauseRTO {
		if f.rtoFlight == 0 {
			f.rtoFlight = flight
		}
		return
	}
	if f.reducing() {
		return // one reduction per window of data
	}
	// RFC 5681 fast recovery: ssthresh = max(FlightSize/2, 2 MSS).
	f.ssthresh = max(min(flight, f.cwnd)/2, f.minWnd)
	f.cwnd = f.ssthresh
	f.reduceEnd = l.NextPSN
}

func (f *dctcpFlow) OnRTO(clock.Time, int) {
	// RFC 5681: ssthresh from the flight before the timeout, and the loss
	// window of one packet; slow start follows.
	f.ssthresh = max(f.rtoFlight/2, f.minWnd)
	f.cwnd = f.w.mss
	f.rtoFlight = 0
	f.reduceEnd = f.cumAck
}

func (f *dctcpFlow) Window() int { return wbytes(f.cwnd) }
