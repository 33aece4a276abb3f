package switchd_test

// Helpers shared by the data plane benchmark and the shaped-mode and
// balance tests: labs of any data plane from an edited topology, a
// receive counter (an XDP program on a host's veth that counts and drops
// whatever arrives), an in-kernel traffic generator (BPF_PROG_RUN with
// BPF_F_TEST_XDP_LIVE_FRAMES) and a sendmmsg UDP blaster, and CPU time
// accounting for work that runs in softirq.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/ftlab/ftlab/bpf"
	"github.com/ftlab/ftlab/internal/bpffs"
	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/testlab"
	"github.com/ftlab/ftlab/orchestrator/fabric"
	"github.com/ftlab/ftlab/orchestrator/topology"
	"github.com/ftlab/ftlab/switchd"
	"github.com/ftlab/ftlab/switchd/shaping"
)

// buildLab builds topo (possibly edited by the caller) and installs the
// configured data plane, kernel or eBPF. Namespaces and the bpffs mount
// are removed when tb ends, also on failure.
func buildLab(tb testing.TB, topo *topology.Topology, cfg switchd.Config) *lab {
	tb.Helper()
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		tb.Fatal(err)
	}
	l := &lab{topo: topo, name: testlab.Namer(testlab.Prefix(tb)), cfg: cfg}
	if cfg.DataPlane == switchd.DataPlaneBPF {
		l.pinRoot = filepath.Join(tb.TempDir(), "bpf")
		if err := bpffs.Mount(l.pinRoot); err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = bpffs.Unmount(l.pinRoot) })
	}
	ctx := context.Background()
	if _, err := fabric.Build(ctx, topo, fabric.Options{Namespace: l.name}); err != nil {
		tb.Fatal(err)
	}
	if err := l.control().Install(ctx); err != nil {
		tb.Fatal(err)
	}
	return l
}

// setRates sets both directions of every link of the given stages.
func setRates(topo *topology.Topology, rate uint64, stages ...topology.Stage) {
	for i := range topo.Links {
		l := &topo.Links[i]
		for _, s := range stages {
			if l.Stage == s {
				l.Up.RateBps, l.Down.RateBps = rate, rate
			}
		}
	}
}

// hostPort returns a host's only interface and its peer (the edge switch
// port) endpoint.
func (l *lab) hostPort(tb testing.TB, host string) (self, peer *topology.Endpoint) {
	tb.Helper()
	n, ok := l.topo.Node(host)
	if !ok || n.Role != topology.RoleHost {
		tb.Fatalf("%s is not a host", host)
	}
	return l.topo.Links[n.Ports[0].Link].End(n.Ports[0].Side), l.topo.Peer(n.Ports[0])
}

// ifindex resolves an interface name inside a node's namespace.
func (l *lab) ifindex(tb testing.TB, node, ifname string) int {
	tb.Helper()
	var idx int
	err := nsutil.DoNamed(l.name(node), func() error {
		nl, err := netlink.LinkByName(ifname)
		if err != nil {
			return err
		}
		idx = nl.Attrs().Index
		return nil
	})
	if err != nil {
		tb.Fatalf("%s/%s: %v", node, ifname, err)
	}
	return idx
}

// ---- receive counter ----

// rxCounter counts packets and frame bytes arriving on host veths and
// drops them: no socket is needed (a socket reader would be the
// bottleneck) and nothing is answered (no ICMP goes back into the fabric).
type rxCounter struct {
	m    *ebpf.Map
	prog *ebpf.Program
}

type rxCount struct{ Packets, Bytes uint64 }

func newRxCounter(tb testing.TB) *rxCounter {
	tb.Helper()
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 16, MaxEntries: 1})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { m.Close() })
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type:    ebpf.XDP,
		License: "GPL",
		Instructions: asm.Instructions{
			asm.FnXdpGetBuffLen.Call(), // r0 = frame length
			asm.Mov.Reg(asm.R7, asm.R0),
			asm.StoreImm(asm.RFP, -4, 0, asm.Word),
			asm.Mov.Reg(asm.R2, asm.RFP),
			asm.Add.Imm(asm.R2, -4),
			asm.LoadMapPtr(asm.R1, m.FD()),
			asm.FnMapLookupElem.Call(),
			asm.JEq.Imm(asm.R0, 0, "out"),
			asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
			asm.Add.Imm(asm.R1, 1),
			asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord),
			asm.LoadMem(asm.R1, asm.R0, 8, asm.DWord),
			asm.Add.Reg(asm.R1, asm.R7),
			asm.StoreMem(asm.R0, 8, asm.R1, asm.DWord),
			asm.Mov.Imm(asm.R0, 1).WithSymbol("out"), // XDP_DROP
			asm.Return(),
		},
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { prog.Close() })
	return &rxCounter{m: m, prog: prog}
}

// attach puts the counter on a host's interface (native XDP, which also
// gives the veth the NAPI that XDP redirects into it need).
func (c *rxCounter) attach(tb testing.TB, l *lab, host string) {
	tb.Helper()
	self, _ := l.hostPort(tb, host)
	idx := l.ifindex(tb, host, self.Ifname)
	var lk link.Link
	err := nsutil.DoNamed(l.name(host), func() error {
		var err error
		lk, err = link.AttachXDP(link.XDPOptions{Program: c.prog, Interface: idx, Flags: link.XDPDriverMode})
		return err
	})
	if err != nil {
		tb.Fatalf("attach rx counter to %s: %v", host, err)
	}
	tb.Cleanup(func() { _ = lk.Close() })
}

func (c *rxCounter) read(tb testing.TB) rxCount {
	tb.Helper()
	var per []rxCount
	if err := c.m.Lookup(uint32(0), &per); err != nil {
		tb.Fatal(err)
	}
	var s rxCount
	for _, v := range per {
		s.Packets += v.Packets
		s.Bytes += v.Bytes
	}
	return s
}

// ---- frames ----

// udpFrame builds an Ethernet/IPv4/UDP frame of frameLen bytes (>= 42).
func udpFrame(dstMAC, srcMAC net.HardwareAddr, src, dst netip.Addr, sport, dport uint16, frameLen int) []byte {
	b := make([]byte, frameLen)
	copy(b[0:6], dstMAC)
	copy(b[6:12], srcMAC)
	binary.BigEndian.PutUint16(b[12:], 0x0800)
	ip := b[14:34]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(frameLen-14))
	binary.BigEndian.PutUint16(ip[6:], 0x4000) // DF
	ip[8] = 64
	ip[9] = unix.IPPROTO_UDP
	s4, d4 := src.As4(), dst.As4()
	copy(ip[12:16], s4[:])
	copy(ip[16:20], d4[:])
	binary.BigEndian.PutUint16(ip[10:], ^csumFold(csumAdd(0, ip)))
	udp := b[34:]
	binary.BigEndian.PutUint16(udp[0:], sport)
	binary.BigEndian.PutUint16(udp[2:], dport)
	binary.BigEndian.PutUint16(udp[4:], uint16(len(udp)))
	for i := 8; i < len(udp); i++ {
		udp[i] = byte(i)
	}
	var pseudo [12]byte
	copy(pseudo[0:4], s4[:])
	copy(pseudo[4:8], d4[:])
	pseudo[9] = unix.IPPROTO_UDP
	binary.BigEndian.PutUint16(pseudo[10:], uint16(len(udp)))
	sum := ^csumFold(csumAdd(csumAdd(0, pseudo[:]), udp))
	if sum == 0 {
		sum = 0xffff
	}
	binary.BigEndian.PutUint16(udp[6:], sum)
	return b
}

func csumAdd(s uint32, b []byte) uint32 {
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	return s
}

func csumFold(s uint32) uint16 {
	for s > 0xffff {
		s = s>>16 + s&0xffff
	}
	return uint16(s)
}

// ---- in-kernel generator ----

// xdpMd is struct xdp_md, the context of an XDP test run.
type xdpMd struct {
	Data, DataEnd, DataMeta, IngressIfindex, RxQueueIndex, EgressIfindex uint32
}

// xdpGen transmits a fixed frame out of a host's veth from inside the
// kernel: BPF_PROG_RUN in live-frame mode runs a program that returns
// XDP_TX with the host's interface as the ingress device, which the kernel
// turns into a redirect out of that interface (veth ndo_xdp_xmit: the
// frame lands in the edge switch port's receive ring, as if the host's NIC
// had sent it). The program rewrites the 42 header bytes on every run:
// live mode recycles pages without restoring them, and the switches
// rewrite MACs and TTL in place on the way.
type xdpGen struct {
	prog    *ebpf.Program
	frame   []byte
	ns      string
	ifindex int
}

func newXDPGen(tb testing.TB, l *lab, src, dst string, sport, dport uint16, frameLen int) *xdpGen {
	tb.Helper()
	self, peer := l.hostPort(tb, src)
	s, _ := l.topo.Node(src)
	d, _ := l.topo.Node(dst)
	frame := udpFrame(peer.MAC, self.MAC, s.Addr, d.Addr, sport, dport, frameLen)
	insns := asm.Instructions{
		asm.LoadMem(asm.R2, asm.R1, 0, asm.Word), // data
		asm.LoadMem(asm.R3, asm.R1, 4, asm.Word), // data_end
		asm.Mov.Reg(asm.R4, asm.R2),
		asm.Add.Imm(asm.R4, 42),
		asm.JGT.Reg(asm.R4, asm.R3, "out"),
	}
	for off := 0; off < 40; off += 4 {
		insns = append(insns, asm.StoreImm(asm.R2, int16(off), int64(int32(binary.LittleEndian.Uint32(frame[off:]))), asm.Word))
	}
	insns = append(insns,
		asm.StoreImm(asm.R2, 40, int64(binary.LittleEndian.Uint16(frame[40:])), asm.Half),
		asm.Mov.Imm(asm.R0, 3).WithSymbol("out"), // XDP_TX
		asm.Return(),
	)
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.XDP, License: "GPL", Instructions: insns})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { prog.Close() })
	return &xdpGen{prog: prog, frame: frame, ns: l.name(src), ifindex: l.ifindex(tb, src, self.Ifname)}
}

// run transmits until stop is closed: as fast as the kernel takes frames
// when pps is 0, else paced to pps on average. It adds the frames it
// produces to *count (some may be dropped at the first receive ring).
func (g *xdpGen) run(stop <-chan struct{}, pps float64, count *atomic.Uint64) error {
	var sent uint64
	return nsutil.DoNamed(g.ns, func() error {
		start := time.Now()
		for {
			select {
			case <-stop:
				return nil
			default:
			}
			n := uint64(1 << 14)
			if pps > 0 {
				due := uint64(pps * time.Since(start).Seconds())
				if due <= sent {
					time.Sleep(time.Millisecond)
					continue
				}
				n = min(due-sent, 1<<12)
			}
			_, err := g.prog.Run(&ebpf.RunOptions{
				Data:    g.frame,
				Repeat:  uint32(n),
				Flags:   unix.BPF_F_TEST_XDP_LIVE_FRAMES,
				Context: xdpMd{DataEnd: uint32(len(g.frame)), IngressIfindex: uint32(g.ifindex)},
			})
			if err != nil {
				return fmt.Errorf("live-frame test run: %w", err)
			}
			sent += n
			count.Add(n)
		}
	})
}

// ---- socket sender ----

// udpBlast sends payload-byte datagrams from src (bound to sport) to dst
// with sendmmsg, 64 per system call, until stop is closed, adding what
// the kernel accepted to *count.
func udpBlast(l *lab, src, dst string, sport, dport uint16, payload int, stop <-chan struct{}, count *atomic.Uint64) error {
	s, _ := l.topo.Node(src)
	d, _ := l.topo.Node(dst)
	return nsutil.DoNamed(l.name(src), func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: s.Addr.As4(), Port: int(sport)}); err != nil {
			return err
		}
		if err := unix.Connect(fd, &unix.SockaddrInet4{Addr: d.Addr.As4(), Port: int(dport)}); err != nil {
			return err
		}
		const batch = 64
		buf := make([]byte, payload)
		iov := unix.Iovec{Base: &buf[0]}
		iov.SetLen(len(buf))
		msgs := make([]unix.Mmsghdr, batch)
		for i := range msgs {
			msgs[i].Hdr.Iov = &iov
			msgs[i].Hdr.SetIovlen(1)
		}
		for {
			select {
			case <-stop:
				return nil
			default:
			}
			n, _, errno := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(fd), uintptr(unsafe.Pointer(&msgs[0])), batch, 0, 0, 0)
			switch {
			case errno == 0:
				count.Add(uint64(n))
			case errno == unix.EINTR || errno == unix.ENOBUFS || errno == unix.ECONNREFUSED:
			default:
				return fmt.Errorf("sendmmsg: %w", errno)
			}
		}
	})
}

// ---- CPU accounting ----

// cpuSample is CPU time consumed so far. The kernel here has tick-based
// CPU accounting without CONFIG_IRQ_TIME_ACCOUNTING: a tick that hits
// softirq work running in a task's context is charged both to that task
// and to the softirq column of /proc/stat, so "process + softirq" would
// count it twice. What the measured work costs is therefore taken as this
// process's own CPU time (user + system, which includes the softirq work
// it triggers inline) plus the ksoftirqd threads' (softirq work deferred
// to them). The /proc/stat totals are kept as a cross-check.
type cpuSample struct {
	at        time.Time
	self      time.Duration // getrusage(RUSAGE_SELF) user + system
	ksoftirqd time.Duration // every ksoftirqd/N thread, user + system
	busy      time.Duration // /proc/stat: all CPUs, everything but idle and iowait
	softirq   time.Duration // /proc/stat: all CPUs, softirq column
}

// clockTick is USER_HZ, the unit of /proc/stat and /proc/PID/stat times.
const clockTick = 10 * time.Millisecond

func sampleCPU(tb testing.TB) cpuSample {
	tb.Helper()
	s := cpuSample{at: time.Now()}
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	s.self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	for _, pid := range ksoftirqdPIDs(tb) {
		b, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			continue
		}
		// Fields after the ")" closing the command: state is field 3,
		// utime field 14, stime field 15.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 13 {
			continue
		}
		ut, _ := strconv.ParseUint(f[11], 10, 64)
		st, _ := strconv.ParseUint(f[12], 10, 64)
		s.ksoftirqd += time.Duration(ut+st) * clockTick
	}
	f, err := os.Open("/proc/stat")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 9 || fields[0] != "cpu" {
			continue
		}
		var v [8]uint64 // user nice system idle iowait irq softirq steal
		for i := range v {
			v[i], _ = strconv.ParseUint(fields[i+1], 10, 64)
		}
		s.busy = time.Duration(v[0]+v[1]+v[2]+v[5]+v[6]+v[7]) * clockTick
		s.softirq = time.Duration(v[6]) * clockTick
		break
	}
	return s
}

var (
	ksoftirqdOnce sync.Once
	ksoftirqdList []string
)

func ksoftirqdPIDs(tb testing.TB) []string {
	ksoftirqdOnce.Do(func() {
		ents, err := os.ReadDir("/proc")
		if err != nil {
			return
		}
		for _, e := range ents {
			if _, err := strconv.Atoi(e.Name()); err != nil {
				continue
			}
			comm, err := os.ReadFile("/proc/" + e.Name() + "/comm")
			if err == nil && strings.HasPrefix(string(comm), "ksoftirqd/") {
				ksoftirqdList = append(ksoftirqdList, e.Name())
			}
		}
	})
	if len(ksoftirqdList) == 0 {
		tb.Log("no ksoftirqd threads found: deferred softirq time is not counted")
	}
	return ksoftirqdList
}

// cpuUse is the difference of two samples.
type cpuUse struct {
	wall, self, ksoftirqd, busy, softirq time.Duration
}

func (a cpuSample) to(b cpuSample) cpuUse {
	return cpuUse{wall: b.at.Sub(a.at), self: b.self - a.self, ksoftirqd: b.ksoftirqd - a.ksoftirqd,
		busy: b.busy - a.busy, softirq: b.softirq - a.softirq}
}

// cpu is the CPU time attributed to the measured work.
func (u cpuUse) cpu() time.Duration { return u.self + u.ksoftirqd }

func (u cpuUse) String() string {
	return fmt.Sprintf("wall %v: process %v + ksoftirqd %v = %.2f cores (machine busy %.2f cores, softirq column %.2f cores)",
		u.wall.Round(time.Millisecond), u.self.Round(time.Millisecond), u.ksoftirqd.Round(time.Millisecond),
		u.cpu().Seconds()/u.wall.Seconds(), u.busy.Seconds()/u.wall.Seconds(), u.softirq.Seconds()/u.wall.Seconds())
}

// ---- one port's link model and qdisc, side by side ----

// portProbe reads one switch port's link model state (bpf QueueStats),
// counters and qdisc statistics, for sampling during a run.
type portProbe struct {
	name string
	sw   *bpf.Switch
	h    *netlink.Handle
	link netlink.Link
	port int
	rate uint64 // bits/s of the port's egress
}

func newPortProbe(tb testing.TB, l *lab, swName string, port int) *portProbe {
	tb.Helper()
	n, ok := l.topo.Node(swName)
	if !ok || port >= len(n.Ports) {
		tb.Fatalf("no port %d on %s", port, swName)
	}
	ref := n.Ports[port]
	lk := &l.topo.Links[ref.Link]
	ns, err := nsutil.Open(l.name(swName))
	if err != nil {
		tb.Fatal(err)
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(h.Close)
	nl, err := h.LinkByName(lk.End(ref.Side).Ifname)
	if err != nil {
		tb.Fatal(err)
	}
	sw, err := bpf.Open(switchd.SwitchPinDir(l.pinRoot, swName))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { sw.Close() })
	return &portProbe{name: fmt.Sprintf("%s port %d (%s)", swName, port, lk.Name), sw: sw, h: h, link: nl, port: port, rate: lk.Params(ref.Side).RateBps}
}

// portSample is one reading of a portProbe.
type portSample struct {
	Now   uint64  // CLOCK_MONOTONIC ns, taken right after the queue state
	Model float64 // the link model's backlog at Now: max(0, t_next - now) * rate / 8e9 bytes
	Queue bpf.QueueStats
	Qdisc shaping.Stats
	Ctr   bpf.PortCounters
}

func monotonicNs() uint64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return uint64(ts.Nano())
}

func (p *portProbe) sample(tb testing.TB) portSample {
	tb.Helper()
	var s portSample
	var err error
	if s.Queue, err = p.sw.QueueStats(p.port); err != nil {
		tb.Fatal(err)
	}
	s.Now = monotonicNs()
	if s.Queue.NextDepartNs > s.Now {
		s.Model = float64(s.Queue.NextDepartNs-s.Now) * float64(p.rate) / 8e9
	}
	if s.Qdisc, err = shaping.Read(p.h, p.link); err != nil {
		tb.Fatal(err)
	}
	if s.Ctr, err = p.sw.PortCounters(p.port); err != nil {
		tb.Fatal(err)
	}
	return s
}

func (s portSample) String() string {
	return fmt.Sprintf("model backlog %6.0f B (last arrival saw %6d B), qdisc backlog %6d B / %3d pkts, model drops %d, qdisc drops %d",
		s.Model, s.Queue.LastBacklog, s.Qdisc.BacklogBytes, s.Qdisc.BacklogPkts, s.Ctr.DropBuffer, s.Qdisc.Drops)
}
