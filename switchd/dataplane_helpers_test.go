package switchd_test

// Helpers shared by the data plane benchmark and the shaped-mode and
// balance tests: labs of any data plane from an edited topology, a
// receive counter (an XDP program on a host's veth that counts and drops
// whatever arrives), an in-kernel traffic generator (BPF_PROG_RUN with
// BPF_F_TEST_XDP_LIVE_FRAMES) and a sendmmsg UDP blaster, and CPU time
// accounting for work that runs in softirq.

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/ftlab/ftlab/bpf"
	"github.com/ftlab/ftlab/bpf/xdptool"
	"github.com/ftlab/ftlab/internal/bpffs"
	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/testlab"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/orchestrator/fabric"
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

// ---- receive counter ----

// rxCounter is xdptool.RxCounter with test failures and cleanup.
type rxCounter struct{ *xdptool.RxCounter }

type rxCount struct{ Packets, Bytes uint64 }

func newRxCounter(tb testing.TB) *rxCounter {
	tb.Helper()
	c, err := xdptool.NewRxCounter()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Close)
	return &rxCounter{c}
}

// attach puts the counter on a host's interface.
func (c *rxCounter) attach(tb testing.TB, l *lab, host string) {
	tb.Helper()
	self, _ := l.hostPort(tb, host)
	if err := c.Attach(l.name(host), self.Ifname); err != nil {
		tb.Fatalf("attach rx counter to %s: %v", host, err)
	}
}

func (c *rxCounter) read(tb testing.TB) rxCount {
	tb.Helper()
	p, b, err := c.Read()
	if err != nil {
		tb.Fatal(err)
	}
	return rxCount{p, b}
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

var (
	ksoftirqdOnce sync.Once
	ksoftirqdList []string
)

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
	sw, err := switchd.OpenSwitch(l.topo, l.pinRoot, swName)
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
	Real  bpf.RealQueue // what the link model knows of the qdisc (bpf/c/realq.h)
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
	if s.Real, err = p.sw.RealQueue(p.port); err != nil {
		tb.Fatal(err)
	}
	return s
}

func (s portSample) String() string {
	return fmt.Sprintf("model backlog %6.0f B (last arrival saw %6d B), qdisc backlog %6d B / %3d pkts (counted %6d B), model drops %d (%d for the real queue), qdisc drops %d",
		s.Model, s.Queue.LastBacklog, s.Qdisc.BacklogBytes, s.Qdisc.BacklogPkts, s.Real.Backlog(), s.Ctr.DropBuffer, s.Queue.LagDecided, s.Qdisc.Drops)
}
