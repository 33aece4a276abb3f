package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/ftlab/ftlab/bpf"
	"github.com/ftlab/ftlab/bpf/xdptool"

	"github.com/ftlab/ftlab/internal/ethtool"
	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/orchestrator/fabric"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/switchd"
)

// The forwarding measurement: one UDP flow from h0-0-0 to h2-0-0 of a
// k=4 fat tree (five switch hops), sent by the in-kernel generator out of
// the sender's veth and counted (and dropped) by XDP on the receiver's.
const (
	fwdSrc, fwdDst = "h0-0-0", "h2-0-0"
	smallFrame     = 64
	mtuFrame       = 1514
	shapedRate     = 200_000_000
	shapedBuffer   = 4 << 20
	shapedHostRate = 1_000_000_000
)

// buildLab builds topo under s and installs cfg's data plane.
func buildLab(ctx context.Context, s *scope, topo *topology.Topology, cfg switchd.Config) (*switchd.Lab, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	l := &switchd.Lab{Topo: topo, Config: cfg, Namespace: s.name}
	if cfg.DataPlane == switchd.DataPlaneBPF {
		dir, err := s.pinRoot()
		if err != nil {
			return nil, err
		}
		l.PinRoot = dir
	}
	if _, _, err := lab.Build(ctx, topo, l, fabric.Options{Namespace: s.name}); err != nil {
		return nil, err
	}
	return l, nil
}

// hostPort returns a host's interface and the edge switch port it faces.
func hostPort(topo *topology.Topology, host string) (self, peer *topology.Endpoint, err error) {
	n, ok := topo.Node(host)
	if !ok || n.Role != topology.RoleHost {
		return nil, nil, fmt.Errorf("%s is not a host", host)
	}
	return topo.Links[n.Ports[0].Link].End(n.Ports[0].Side), topo.Peer(n.Ports[0]), nil
}

// FwdResult is one forwarding measurement.
type FwdResult struct {
	Offered, Delivered uint64
	Bytes              uint64
	Wall, CPU          time.Duration
}

// PPS is delivered packets per second of wall time.
func (r FwdResult) PPS() float64 { return float64(r.Delivered) / r.Wall.Seconds() }

// PPSPerCore is delivered packets per second of CPU time.
func (r FwdResult) PPSPerCore() float64 { return float64(r.Delivered) / r.CPU.Seconds() }

// Bps is delivered bits per second.
func (r FwdResult) Bps() float64 { return float64(r.Bytes) * 8 / r.Wall.Seconds() }

// Forwarding builds a k=4 lab with cfg (shaped: 200 Mbit/s fabric links
// with 4 MiB buffers, 1 Gbit/s host links, 1514-byte frames offered at
// twice the link rate; otherwise 64-byte frames as fast as the kernel
// takes them), sends for warm+window and measures the window. The lab is
// removed before it returns.
func Forwarding(ctx context.Context, cfg switchd.Config, warm, window time.Duration) (res FwdResult, err error) {
	s, err := newScope()
	if err != nil {
		return res, err
	}
	defer func() {
		if cerr := s.close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	topo, err := topology.NewFatTree(4)
	if err != nil {
		return res, err
	}
	frameLen, pace := smallFrame, 0.0
	if cfg.Mode == switchd.ModeShaped && cfg.DataPlane != switchd.DataPlaneKernel {
		for i := range topo.Links {
			l := &topo.Links[i]
			if l.Stage == topology.StageHostEdge {
				l.Up.RateBps, l.Down.RateBps = shapedHostRate, shapedHostRate
			} else {
				l.Up.RateBps, l.Down.RateBps = shapedRate, shapedRate
				l.Up.BufferBytes, l.Down.BufferBytes = shapedBuffer, shapedBuffer
				l.Up.ECNBytes, l.Down.ECNBytes = 0, 0
			}
		}
		frameLen, pace = mtuFrame, 2*shapedRate/float64(mtuFrame*8)
	}
	l, err := buildLab(ctx, s, topo, cfg)
	if err != nil {
		return res, err
	}
	ctr, err := xdptool.NewRxCounter()
	if err != nil {
		return res, err
	}
	defer ctr.Close()
	dself, _, err := hostPort(topo, fwdDst)
	if err != nil {
		return res, err
	}
	if err := ctr.Attach(s.name(fwdDst), dself.Ifname); err != nil {
		return res, fmt.Errorf("attach rx counter: %w", err)
	}
	self, peer, err := hostPort(topo, fwdSrc)
	if err != nil {
		return res, err
	}
	if l.Config.DataPlane == switchd.DataPlaneKernel {
		// Generated frames enter the edge port through veth's XDP receive
		// path, which needs NAPI there: GRO on.
		if err := nsutil.DoNamed(s.name(peer.Node), func() error { return ethtool.SetGRO(peer.Ifname, true) }); err != nil {
			return res, err
		}
	}
	sn, _ := topo.Node(fwdSrc)
	dn, _ := topo.Node(fwdDst)
	gen, err := xdptool.NewXDPGen(s.name(fwdSrc), self.Ifname, xdptool.UDPFrame(peer.MAC, self.MAC, sn.Addr, dn.Addr, 40000, 9, frameLen))
	if err != nil {
		return res, err
	}
	defer gen.Close()
	var sent atomic.Uint64
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- gen.Run(stop, pace, &sent) }()
	stopped := false
	finish := func() error {
		if stopped {
			return nil
		}
		stopped = true
		close(stop)
		return <-done
	}
	defer finish()
	Settle(ctx, warm)
	p0, b0, err := ctr.Read()
	if err != nil {
		return res, err
	}
	s0, c0 := sent.Load(), sampleCPU()
	Settle(ctx, window)
	p1, b1, err := ctr.Read()
	if err != nil {
		return res, err
	}
	s1, c1 := sent.Load(), sampleCPU()
	if err := finish(); err != nil {
		return res, err
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	u := c0.to(c1)
	res = FwdResult{Offered: s1 - s0, Delivered: p1 - p0, Bytes: b1 - b0, Wall: u.wall, CPU: u.cpu}
	if res.Delivered == 0 {
		return res, fmt.Errorf("nothing delivered (offered %d frames)", res.Offered)
	}
	return res, nil
}

// Dataplane measures packets per second per core of the eBPF switch in
// line-rate and shaped mode against kernel IP forwarding through the same
// namespaces.
func Dataplane(ctx context.Context, opt Options) (*Section, error) {
	warm, window := 300*time.Millisecond, 2*time.Second
	if opt.Quick {
		warm, window = 100*time.Millisecond, 500*time.Millisecond
	}
	sec := &Section{Name: "dataplane", Method: fmt.Sprintf(
		"One UDP flow h0-0-0 -> h2-0-0 of a k=4 fat tree (5 switch hops), frames generated in the kernel (BPF_PROG_RUN live frames out of the sender's veth), "+
			"counted and dropped by XDP at the receiver; %v warm-up, %v window. CPU = this process + ksoftirqd threads. "+
			"Kernel and line rate: 64-byte frames unpaced; shaped: 200 Mbit/s fabric links, 1514-byte frames offered at twice that.", warm, window)}
	kern, err := Forwarding(ctx, switchd.Config{DataPlane: switchd.DataPlaneKernel}, warm, window)
	if err != nil {
		return sec, fmt.Errorf("kernel: %w", err)
	}
	opt.logf("bench: dataplane kernel: %.0f pps, %.0f pps/core", kern.PPS(), kern.PPSPerCore())
	lr, err := Forwarding(ctx, switchd.Config{Mode: switchd.ModeLineRate, Seed: 1}, warm, window)
	if err != nil {
		return sec, fmt.Errorf("line rate: %w", err)
	}
	opt.logf("bench: dataplane line rate: %.0f pps, %.0f pps/core", lr.PPS(), lr.PPSPerCore())
	sh, err := Forwarding(ctx, switchd.Config{Mode: switchd.ModeShaped, Seed: 1}, warm, window)
	if err != nil {
		return sec, fmt.Errorf("shaped: %w", err)
	}
	opt.logf("bench: dataplane shaped: %.0f pps, %.1f Mbit/s", sh.PPS(), sh.Bps()/1e6)
	sec.Rows = append(sec.Rows,
		row("line rate pps per core (64 B)", "pps/core", lr.PPSPerCore(), kern.PPSPerCore(), "kernel forwarding"),
		row("line rate pps (64 B)", "pps", lr.PPS(), kern.PPS(), "kernel forwarding"),
		row("shaped pps per core (1514 B)", "pps/core", sh.PPSPerCore(), kern.PPSPerCore(), "kernel forwarding, 64 B"),
		row("shaped delivered rate", "bit/s", sh.Bps(), shapedRate, "configured link rate"),
	)
	// Per program: the kernel's time per packet on each main path
	// (BPF_PROG_TEST_RUN on a reference switch), against xdp_pass, the
	// least an attached program costs.
	repeat, calls := 250, 40
	if opt.Quick {
		calls = 4
	}
	costs, err := bpf.MeasureProgramCosts(repeat, calls)
	if err != nil {
		return sec, fmt.Errorf("program costs: %w", err)
	}
	sec.Method += fmt.Sprintf(" Per program: BPF_PROG_TEST_RUN on a reference switch (4 down, 4 up ports), a 500-byte frame, %d calls of %d runs each; "+
		"the kernel's mean time per run, against xdp_pass (a program that only returns XDP_PASS).", calls, repeat)
	for _, c := range costs[1:] {
		sec.Rows = append(sec.Rows, row(c.Name+" per packet", "ns", c.NsPerPacket, costs[0].NsPerPacket, costs[0].Name))
	}
	return sec, nil
}
