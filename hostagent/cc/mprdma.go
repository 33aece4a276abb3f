package cc

import (
	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/transport"
)

// mprdma is MP-RDMA's congestion control (Lu et al., NSDI 2018):
// one window for all of a connection's paths, updated on every ACK,
// +increase/cwnd packets without ECE and -decrease packets with it. The
// window is kept in packets, as the paper writes it.
type mprdma struct{ cfg MPRDMAParams }

func (mprdma) Name() string { return "mprdma" }

func (m mprdma) NewFlow(f transport.CCFlow) transport.FlowCC {
	w := windowOf(f)
	fl := &mprdmaFlow{cfg: &m.cfg, mss: w.mss, max: w.max / w.mss, min: m.cfg.MinWindow}
	fl.cwnd = clamp(m.cfg.InitialWindow*w.bdp/w.mss, fl.min, fl.max)
	return fl
}

type mprdmaFlow struct {
	cfg            *MPRDMAParams
	mss            float64
	cwnd, min, max float64 // packets
}

func (f *mprdmaFlow) OnACK(a transport.CCAck) {
	if a.Probe {
		return // header-only: neither data nor a mark
	}
	// An ACK speaks for its own packet; the others it covers for the
	// first time (their own ACKs were lost) count as unmarked.
	n := float64(a.Bytes) / f.mss
	if a.CE {
		f.cwnd -= f.cfg.Decrease
		n = max(n-1, 0)
	}
	f.cwnd = clamp(f.cwnd+f.cfg.Increase*n/f.cwnd, f.min, f.max)
}

// OnLoss counts a lost packet as a marked ACK: MP-RDMA recovers losses
// without cutting the window further (the paper is silent on a cut).
func (f *mprdmaFlow) OnLoss(transport.CCLoss) {
	f.cwnd = clamp(f.cwnd-f.cfg.Decrease, f.min, f.max)
}

func (f *mprdmaFlow) OnRTO(clock.Time, int) {}

func (f *mprdmaFlow) Window() int { return wbytes(f.cwnd * f.mss) }
