package agent_test

import (
	"math"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ftlab/ftlab/hostagent/control"
	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/switchd"
)

// BenchmarkAgentVsBareUDP compares the agent's packet rate with a bare
// UDP loop between the same two hosts (under one edge switch of a k=4
// lab, line-rate eBPF switch), in the same run:
//
//   - bare: one thread sends 1472-byte UDP datagrams with sendmmsg
//     (batches of 64), at most 256 ahead of the receiver (a counter in
//     memory: flow control for free), one thread receives them with
//     recvmmsg; rate = datagrams received per second while receiving.
//   - agent: two agents move 64 MiB with rss+pfld, unpaced (the window
//     limits), every packet built, checksummed, paced, acknowledged and
//     verified; rate = DATA packets per second of the message's FCT.
//
// ratio = bare-pps / agent-data-pps: the transport's overhead factor on
// throughput. The agent's receiver also sends an ACK per DATA packet (and
// its sender receives them), which the bare loop does not, so
// agent-pkts-per-s counts every datagram both ways, and the CPU time of
// the process per packet (user and system, the veth and XDP forwarding
// that runs in its syscalls included) is reported for both:
// cpu-ratio = agent CPU per DATA packet / bare CPU per datagram.
//
// Run as root: go test -run '^$' -bench AgentVsBare -benchtime 5x ./hostagent/agent/
func BenchmarkAgentVsBareUDP(b *testing.B) {
	l := newLab(b, switchd.Config{Mode: switchd.ModeLineRate, EdgePolicy: "ecmp", Seed: 1})
	src, dst := "h0-0-0", "h0-0-1"
	// The machine may be shared: report the best of the iterations
	// (-benchtime Nx), each side measured alternately.
	var bestBare, bestAgent, bestAll float64
	bareCPU, agentCPU := math.Inf(1), math.Inf(1)
	for b.Loop() {
		c0 := cpuTime()
		bare := bareUDP(b, l, src, dst, 200000)
		c1 := cpuTime()
		agentPPS, allPPS, n := agentRate(b, l, src, dst, 64<<20)
		c2 := cpuTime()
		bestBare, bestAgent, bestAll = max(bestBare, bare), max(bestAgent, agentPPS), max(bestAll, allPPS)
		bareCPU = min(bareCPU, float64((c1-c0).Nanoseconds())/1e3/200000)
		agentCPU = min(agentCPU, float64((c2-c1).Nanoseconds())/1e3/float64(n))
	}
	b.ReportMetric(bestBare, "bare-pps")
	b.ReportMetric(bestAgent, "agent-data-pps")
	b.ReportMetric(bestAll, "agent-pkts-per-s")
	b.ReportMetric(bestBare/bestAgent, "ratio")
	b.ReportMetric(bareCPU, "bare-cpu-us/pkt")
	b.ReportMetric(agentCPU, "agent-cpu-us/pkt")
	b.ReportMetric(agentCPU/bareCPU, "cpu-ratio")
}

// bareUDP measures the bare loop: datagrams received per second.
func bareUDP(b *testing.B, l *lab, src, dst string, n int) float64 {
	const port, size, batch, window = 9477, 1472, 64, 256
	var rfd, sfd int
	if err := nsutil.DoNamed(l.name(dst), func() (err error) {
		if rfd, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0); err != nil {
			return err
		}
		_ = unix.SetsockoptInt(rfd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 8<<20)
		_ = unix.SetsockoptTimeval(rfd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Usec: 100000})
		return unix.Bind(rfd, &unix.SockaddrInet4{Port: port})
	}); err != nil {
		b.Fatal(err)
	}
	defer unix.Close(rfd)
	if err := nsutil.DoNamed(l.name(src), func() (err error) {
		sfd, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	defer unix.Close(sfd)

	var received atomic.Int64
	var senderDone atomic.Bool
	credit := make(chan struct{}, 1)
	var first, last atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		bufs, hdrs := mmsgBufs(batch, size+64)
		for {
			m, _, e := unix.Syscall6(unix.SYS_RECVMMSG, uintptr(rfd), uintptr(unsafe.Pointer(&hdrs[0])), batch, unix.MSG_WAITFORONE, 0, 0)
			if e != 0 {
				if e == unix.EAGAIN || e == unix.EINTR {
					if senderDone.Load() {
						return // the sender is done and 100 ms passed quietly
					}
					continue
				}
				b.Error(e)
				return
			}
			now := time.Now().UnixNano()
			if received.Load() == 0 {
				first.Store(now)
			}
			last.Store(now)
			if received.Add(int64(m)) >= int64(n) {
				return
			}
			select {
			case credit <- struct{}{}:
			default:
			}
			_ = bufs
		}
	}()
	dstAddr := netip.MustParseAddr(l.addr(b, dst)).As4()
	_, hdrs := mmsgBufs(batch, size)
	sa := unix.RawSockaddrInet4{Family: unix.AF_INET, Port: uint16(port>>8 | port<<8&0xff00), Addr: dstAddr}
	for i := range hdrs {
		hdrs[i].Hdr.Name = (*byte)(unsafe.Pointer(&sa))
		hdrs[i].Hdr.Namelen = unix.SizeofSockaddrInet4
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for sent := 0; sent < n; {
		// Flow control through memory (free, unlike the agent's ACKs):
		// at most window datagrams ahead of the receiver, so neither the
		// socket nor the CPU is overrun.
		// A lost datagram would hold the window for good: give up
		// waiting after a millisecond.
		for wait := time.Now(); int64(sent)-received.Load() > window && time.Since(wait) < time.Millisecond; {
			timer.Reset(100 * time.Microsecond)
			select {
			case <-credit:
			case <-timer.C:
			}
		}
		m, _, e := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(sfd), uintptr(unsafe.Pointer(&hdrs[0])), batch, 0, 0, 0)
		if e != 0 {
			if e == unix.ENOBUFS || e == unix.EAGAIN {
				continue
			}
			b.Fatal(e)
		}
		sent += int(m)
	}
	senderDone.Store(true)
	<-done
	got := received.Load()
	d := time.Duration(last.Load() - first.Load())
	b.Logf("bare: %d of %d datagrams received in %v", got, n, d)
	return float64(got) / d.Seconds()
}

func mmsgBufs(n, size int) ([][]byte, []unix.Mmsghdr) {
	bufs := make([][]byte, n)
	iov := make([]unix.Iovec, n)
	hdrs := make([]unix.Mmsghdr, n)
	for i := range n {
		bufs[i] = make([]byte, size)
		iov[i].Base = &bufs[i][0]
		iov[i].SetLen(size)
		hdrs[i].Hdr.Iov = &iov[i]
		hdrs[i].Hdr.SetIovlen(1)
	}
	return bufs, hdrs
}

// agentRate moves one message between two agents and returns DATA packets
// per second and all packets (DATA, ACK, probes, both ways) per second.
func agentRate(b *testing.B, l *lab, src, dst string, bytes uint64) (float64, float64, int) {
	as := l.startAgents(b, []string{src, dst}, control.Configure{Scheme: "rss+pfld", Transport: control.Transport{
		MinRTONs: int64(250 * time.Millisecond), InitialRTONs: int64(250 * time.Millisecond),
	}})
	out := as.run(l, []transfer{{src: src, dst: dst}}, bytes, time.Minute)
	final := as.stop()
	s := out[0].sent.Record
	fct := time.Duration(s.FCTNs)
	all := final[src].Conn.TxDatagrams + final[dst].Conn.TxDatagrams
	b.Logf("agent: %d DATA packets (%d retransmitted) in %v, %s; %d datagrams both ways", s.Packets+s.Retransmissions, s.Retransmissions, fct, mbps(s.Bytes, s.FCTNs), all)
	n := s.Packets + s.Retransmissions
	return float64(n) / fct.Seconds(), float64(all) / fct.Seconds(), n
}

// cpuTime is the process's user and system CPU time so far (softirq work
// done in its syscalls, such as veth and XDP forwarding, included).
func cpuTime() time.Duration {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
