package bpf

import (
	"net"
	"net/netip"
	"os"
	"testing"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// The fixture switch: ports 0..3 are downlinks to hosts 10.0.0.2..5,
// ports 4..7 are uplinks 0..3. 10.1/16 goes up via group 1, 10.2/16 via
// group 2 (both all-valid), 10.9.9.9 is a LOCAL route, the identity
// address is 10.0.0.1. Every port is ifindex 1 (lo): BPF_PROG_TEST_RUN
// runs with ingress ifindex 1, and the fixture points if2port[1] at the
// port a test wants as ingress.

const (
	nDown  = 4
	nUp    = 4
	nPorts = nDown + nUp
	loIf   = 1

	xdpAborted  = 0
	xdpDrop     = 1
	xdpPass     = 2
	xdpRedirect = 4

	tcOK       = 0
	tcShot     = 2
	tcRedirect = 7
)

var swAddr = netip.MustParseAddr("10.0.0.1")

func portMAC(p int) [6]byte { return [6]byte{0x02, 0x0a, 0, 0, 0, byte(p)} }
func peerMAC(p int) [6]byte { return [6]byte{0x02, 0x0b, 0, 0, 0, byte(p)} }
func hostAddr(p int) netip.Addr {
	return netip.AddrFrom4([4]byte{10, 0, 0, byte(2 + p)})
}
func uplinkPort(u int) int { return nDown + u }

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

func baseConfig() Config {
	return Config{Mode: ModeLineRate, Policy: PolicyECMP, Seed: 7, Addr: swAddr, AckThreshold: 100}
}

func basePort(p int) PortConfig {
	m, pm := portMAC(p), peerMAC(p)
	pc := PortConfig{Ifindex: loIf, MAC: net.HardwareAddr(m[:]), PeerMAC: net.HardwareAddr(pm[:]), Up: true, Uplink: -1}
	if p >= nDown {
		pc.Uplink = p - nDown
	}
	return pc
}

func newFixture(t testing.TB, cfg Config) *fixture {
	t.Helper()
	requireRoot(t)
	s, err := Load(Options{MaxGroups: 16, MaxPointers: 256, Programs: ProgramsAll})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	f := &fixture{t: t, s: s}
	f.must(s.SetConfig(cfg))
	for p := range nPorts {
		f.must(s.SetPort(p, basePort(p)))
	}
	for p := range nDown {
		f.must(s.AddRoute(netip.PrefixFrom(hostAddr(p), 32), Down(p)))
	}
	f.must(s.AddRoute(netip.MustParsePrefix("10.1.0.0/16"), Up(1)))
	f.must(s.AddRoute(netip.MustParsePrefix("10.2.0.0/16"), Up(2)))
	f.must(s.AddRoute(netip.MustParsePrefix("10.9.9.9/32"), Local()))
	f.must(s.SetGroupValid(1, 0xf))
	f.must(s.SetGroupValid(2, 0xf))
	f.ingress(0)
	return f
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
	f.must(f.s.maps.If2port.Put(uint32(loIf), uint32(p)))
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
			ARFallback: a.ARFallback - b.ARFallback,
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
