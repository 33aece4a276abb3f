package bpf

import (
	"os"
	"testing"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

func requireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: needs root (loads eBPF programs and runs them with BPF_PROG_TEST_RUN)")
	}
}

type fixture struct {
	t testing.TB
	s *Switch
}

func newFixture(t testing.TB, cfg Config) *fixture {
	t.Helper()
	requireRoot(t)
	s, err := loadReference(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &fixture{t: t, s: s}
}

func (f *fixture) must(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

// ingress makes the test runs arrive on port p.
func (f *fixture) ingress(p int) {
	f.t.Helper()
	f.must(f.s.setIngress(p))
}

// xdpMd mirrors struct xdp_md (the BPF_PROG_TEST_RUN context).
type xdpMd struct {
	Data, DataEnd, DataMeta, IngressIfindex, RxQueueIndex, EgressIfindex uint32
}

// skbCtx mirrors struct __sk_buff (192 bytes); only priority is read.
type skbCtx struct {
	Words [48]uint32
}

func (c skbCtx) priority() uint32 { return c.Words[32/4] }

func (f *fixture) runXDP(in []byte) (uint32, []byte) {
	f.t.Helper()
	out := make([]byte, len(in)+512)
	opts := &ebpf.RunOptions{
		Data:    in,
		DataOut: out,
		Context: xdpMd{DataEnd: uint32(len(in)), IngressIfindex: loIf},
	}
	ret, err := f.s.xdp.Run(opts)
	if err != nil {
		f.t.Fatalf("xdp run: %v", err)
	}
	return ret, opts.DataOut
}

func (f *fixture) runTC(in []byte) (uint32, []byte, skbCtx) {
	f.t.Helper()
	var ctx skbCtx
	out := make([]byte, len(in)+512)
	opts := &ebpf.RunOptions{Data: in, DataOut: out, ContextOut: &ctx}
	ret, err := f.s.tc.Run(opts)
	if err != nil {
		f.t.Fatalf("tc run: %v", err)
	}
	return ret, opts.DataOut, ctx
}

// counters reads all fixture ports.
func (f *fixture) counters() [nPorts]PortCounters {
	f.t.Helper()
	var c [nPorts]PortCounters
	for p := range nPorts {
		v, err := f.s.PortCounters(p)
		if err != nil {
			f.t.Fatal(err)
		}
		c[p] = v
	}
	return c
}

// delta returns the per-port counter changes, only for ports that changed.
func delta(before, after [nPorts]PortCounters) map[int]PortCounters {
	d := map[int]PortCounters{}
	for p := range nPorts {
		a, b := after[p], before[p]
		x := PortCounters{
			RxPackets: a.RxPackets - b.RxPackets, RxBytes: a.RxBytes - b.RxBytes,
			TxPackets: a.TxPackets - b.TxPackets, TxBytes: a.TxBytes - b.TxBytes,
			DropCorrupt: a.DropCorrupt - b.DropCorrupt, DropBuffer: a.DropBuffer - b.DropBuffer,
			DropLinkDown: a.DropLinkDown - b.DropLinkDown, DropNoRoute: a.DropNoRoute - b.DropNoRoute,
			DropTTL: a.DropTTL - b.DropTTL, DropMalformed: a.DropMalformed - b.DropMalformed,
			DropNonIPv4: a.DropNonIPv4 - b.DropNonIPv4, Trimmed: a.Trimmed - b.Trimmed,
			CEMarked: a.CEMarked - b.CEMarked, ToLocal: a.ToLocal - b.ToLocal,
			ARFallback: a.ARFallback - b.ARFallback, DelayUnstamped: a.DelayUnstamped - b.DelayUnstamped,
		}
		if x != (PortCounters{}) {
			d[p] = x
		}
	}
	return d
}

// egressOf is the port a forwarded frame left on (its source MAC).
func egressOf(out []byte) int { return int(out[11]) }

// monoNow is bpf_ktime_get_ns's clock.
func monoNow(t testing.TB) uint64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		t.Fatal(err)
	}
	return uint64(ts.Nano())
}

// setBacklog gives port p a slow link model (1000 bytes/s) whose virtual
// FIFO holds `bytes` bytes right now; it drains 1 byte per millisecond.
func (f *fixture) setBacklog(p int, bytes uint64) {
	f.t.Helper()
	pc := basePort(p)
	pc.RateBps, pc.BufferBytes = 8000, 1<<20
	f.must(f.s.SetPort(p, pc))
	st := xdpIngressFifo{T_next: monoNow(f.t) + bytes*1_000_000}
	f.must(f.s.maps.Fifos.Update(uint32(p), &st, ebpf.UpdateLock))
}
