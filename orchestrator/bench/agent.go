package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ftlab/ftlab/hostagent/agent"
	"github.com/ftlab/ftlab/hostagent/cc"
	"github.com/ftlab/ftlab/hostagent/control"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/switchd"
)

// RateResult is packets moved, in what wall and CPU time; for the agent,
// also the datagrams its sender sent (DATA, probes) in how many sendmmsg
// calls.
type RateResult struct {
	Packets              int
	Wall, CPU            time.Duration
	Datagrams, SendCalls int
}

// PerSend is datagrams per sendmmsg call.
func (r RateResult) PerSend() float64 { return float64(r.Datagrams) / float64(max(r.SendCalls, 1)) }

// PPS is packets per second of wall time.
func (r RateResult) PPS() float64 { return float64(r.Packets) / r.Wall.Seconds() }

// PPSPerCore is packets per second of CPU time.
func (r RateResult) PPSPerCore() float64 { return float64(r.Packets) / r.CPU.Seconds() }

// BareUDP sends n 1472-byte datagrams from namespace src to dstAddr:port
// in namespace dst with sendmmsg (batches of 64, at most 256 ahead of the
// receiver through a shared counter) and receives them with recvmmsg.
// CPU is this process's user + system time (the veth and XDP forwarding
// done in its syscalls included).
func BareUDP(ctx context.Context, src, dst string, dstAddr [4]byte, n int) (RateResult, error) {
	const port, size, batch, window = 9477, 1472, 64, 256
	var rfd, sfd int = -1, -1
	if err := nsutil.DoNamed(dst, func() (err error) {
		if rfd, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0); err != nil {
			return err
		}
		_ = unix.SetsockoptInt(rfd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 8<<20)
		_ = unix.SetsockoptTimeval(rfd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Usec: 100000})
		return unix.Bind(rfd, &unix.SockaddrInet4{Port: port})
	}); err != nil {
		return RateResult{}, err
	}
	defer unix.Close(rfd)
	if err := nsutil.DoNamed(src, func() (err error) {
		sfd, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		return err
	}); err != nil {
		return RateResult{}, err
	}
	defer unix.Close(sfd)
	if err := unix.Connect(sfd, &unix.SockaddrInet4{Addr: dstAddr, Port: port}); err != nil {
		return RateResult{}, err
	}
	var received atomic.Int64
	var senderDone atomic.Bool
	var first, last atomic.Int64
	rerr := make(chan error, 1)
	c0 := processCPU()
	go func() {
		hdrs := mmsgs(batch, size+64)
		for {
			m, _, e := unix.Syscall6(unix.SYS_RECVMMSG, uintptr(rfd), uintptr(unsafe.Pointer(&hdrs[0])), batch, unix.MSG_WAITFORONE, 0, 0)
			if e != 0 {
				if e == unix.EAGAIN || e == unix.EINTR {
					if senderDone.Load() {
						rerr <- nil
						return
					}
					continue
				}
				rerr <- e
				return
			}
			now := time.Now().UnixNano()
			if received.Load() == 0 {
				first.Store(now)
			}
			last.Store(now)
			if received.Add(int64(m)) >= int64(n) {
				rerr <- nil
				return
			}
		}
	}()
	hdrs := mmsgs(batch, size)
	var serr error
	for sent := 0; sent < n && serr == nil; {
		if ctx.Err() != nil {
			serr = ctx.Err()
			break
		}
		for wait := time.Now(); int64(sent)-received.Load() > window && time.Since(wait) < time.Millisecond; {
			time.Sleep(20 * time.Microsecond)
		}
		m, _, e := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(sfd), uintptr(unsafe.Pointer(&hdrs[0])), batch, 0, 0, 0)
		switch {
		case e == 0:
			sent += int(m)
		case e == unix.ENOBUFS || e == unix.EAGAIN || e == unix.EINTR || e == unix.ECONNREFUSED:
		default:
			serr = fmt.Errorf("sendmmsg: %w", e)
		}
	}
	senderDone.Store(true)
	err := errors.Join(serr, <-rerr)
	cpu := processCPU() - c0
	got := received.Load()
	if err == nil && got == 0 {
		err = errors.New("bare UDP: nothing received")
	}
	return RateResult{Packets: int(got), Wall: time.Duration(last.Load() - first.Load()), CPU: cpu}, err
}

func mmsgs(n, size int) []unix.Mmsghdr {
	iov := make([]unix.Iovec, n)
	hdrs := make([]unix.Mmsghdr, n)
	for i := range n {
		buf := make([]byte, size)
		iov[i].Base = &buf[0]
		iov[i].SetLen(size)
		hdrs[i].Hdr.Iov = &iov[i]
		hdrs[i].Hdr.SetIovlen(1)
	}
	return hdrs
}

// AgentTransfer starts in-process agents in namespaces src and dst,
// moves one message of bytes from src to dstAddr with scheme and
// congestion control algo ("" or none: unpaced, window-limited; otherwise
// the algorithm's window, paced at window over RTT) and returns DATA
// packets (retransmissions included) over the message's completion time
// and the process's CPU time meanwhile. The agents are stopped before it
// returns.
func AgentTransfer(ctx context.Context, src, dst, dstAddr, scheme, algo string, bytes uint64) (res RateResult, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type hostEvent struct {
		src bool
		ev  control.Event
	}
	events := make(chan hostEvent, 4096)
	var hs []*agent.Handle
	defer func() {
		for _, h := range hs {
			_ = h.Stop()
		}
		for _, h := range hs {
			_ = h.Wait()
		}
	}()
	cfg := control.Configure{Scheme: scheme, CC: algo, Transport: control.Transport{
		HostParams: transport.HostParams{MinRTO: 250 * time.Millisecond, InitialRTO: 250 * time.Millisecond},
	}}
	for i, ns := range []string{src, dst} {
		h, err := agent.Start(ctx, agent.Options{Namespace: ns})
		if err != nil {
			return res, err
		}
		hs = append(hs, h)
		go func() {
			for ev := range h.Events() {
				select {
				case events <- hostEvent{i == 0, ev}:
				case <-ctx.Done():
				}
			}
		}()
		c := cfg
		c.Name = ns
		if err := h.Do(&c); err != nil {
			return res, err
		}
	}
	next := func(d time.Duration) (hostEvent, error) {
		select {
		case he := <-events:
			if e, ok := he.ev.(*control.Error); ok {
				return he, fmt.Errorf("agent error: %s", e.Error)
			}
			return he, nil
		case <-ctx.Done():
			return hostEvent{}, ctx.Err()
		case <-time.After(d):
			return hostEvent{}, fmt.Errorf("no agent event in %v", d)
		}
	}
	for configured := 0; configured < 2; {
		he, err := next(5 * time.Second)
		if err != nil {
			return res, err
		}
		if _, ok := he.ev.(*control.Configured); ok {
			configured++
		}
	}
	c0 := processCPU()
	if err := hs[0].Do(&control.Send{Msg: 1, To: dstAddr, Bytes: bytes}); err != nil {
		return res, err
	}
	for {
		he, err := next(time.Minute)
		if err != nil {
			return res, err
		}
		if s, ok := he.ev.(*control.Sent); ok && he.src {
			cpu := processCPU() - c0
			res = RateResult{Packets: s.Record.Packets + s.Record.Retransmissions, Wall: time.Duration(s.Record.FCTNs), CPU: cpu}
			break
		}
	}
	// The sender's socket counters: how many datagrams each sendmmsg
	// carried (pacing splits the batches a window-limited burst fills).
	if err := hs[0].Do(&control.StatsQuery{}); err != nil {
		return res, err
	}
	for {
		he, err := next(10 * time.Second)
		if err != nil {
			return res, err
		}
		if st, ok := he.ev.(*control.Stats); ok && he.src {
			res.SendCalls, res.Datagrams = int(st.Conn.TxCalls), int(st.Conn.TxDatagrams)
			return res, nil
		}
	}
}

// Agent measures the host agent's DATA packet rate per core against a
// bare UDP loop between the same two hosts of a k=4 line-rate lab, and its
// CPU per DATA packet under each congestion control of opt.CC against cc
// none in the same run.
func Agent(ctx context.Context, opt Options) (sec *Section, err error) {
	n, bytes := 200000, uint64(64<<20)
	if opt.Quick {
		n, bytes = 50000, 16<<20
	}
	const scheme = "rss+pfld"
	algos := opt.ccs()
	sec = &Section{Name: "agent", Method: fmt.Sprintf(
		"h0-0-0 -> h0-0-1 of a k=4 fat tree, eBPF switch in line-rate mode. Baseline: %d 1472-byte datagrams, sendmmsg/recvmmsg, "+
			"at most 256 ahead of the receiver. Agent: in-process agents move %d MiB with %s, unpaced; DATA packets over the FCT. "+
			"CPU = this process's user + system time. Congestion controls (%s): the same transfer, each against cc none's CPU per DATA packet, "+
			"measured before and after them, and the datagrams per sendmmsg (pacing splits batches).",
		n, bytes>>20, scheme, strings.Join(algos, ", "))}
	s, err := newScope()
	if err != nil {
		return sec, err
	}
	defer func() {
		if cerr := s.close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	topo, err := topology.NewFatTree(4)
	if err != nil {
		return sec, err
	}
	if _, err := buildLab(ctx, s, topo, switchd.Config{Mode: switchd.ModeLineRate, EdgePolicy: "ecmp", Seed: 1}); err != nil {
		return sec, err
	}
	src, dst := "h0-0-0", "h0-0-1"
	dn, _ := topo.Node(dst)
	bare, err := BareUDP(ctx, s.name(src), s.name(dst), dn.Addr.As4(), n)
	if err != nil {
		return sec, err
	}
	opt.logf("bench: agent bare: %.0f pps, %.0f pps/core", bare.PPS(), bare.PPSPerCore())
	ag, err := AgentTransfer(ctx, s.name(src), s.name(dst), dn.Addr.String(), scheme, cc.None, bytes)
	if err != nil {
		return sec, err
	}
	opt.logf("bench: agent: %.0f pps, %.0f pps/core, %.1f datagrams per sendmmsg", ag.PPS(), ag.PPSPerCore(), ag.PerSend())
	sec.Rows = append(sec.Rows,
		row("agent DATA pps per core ("+scheme+")", "pps/core", ag.PPSPerCore(), bare.PPSPerCore(), "bare UDP loop"),
		row("agent DATA pps ("+scheme+")", "pps", ag.PPS(), bare.PPS(), "bare UDP loop"),
	)
	// cc none again after the others: the baseline is the mean of both,
	// and their ratio says how much the machine drifted meanwhile.
	var rows []Row
	for _, algo := range algos {
		if algo == cc.None {
			continue
		}
		r, err := AgentTransfer(ctx, s.name(src), s.name(dst), dn.Addr.String(), scheme, algo, bytes)
		if err != nil {
			return sec, fmt.Errorf("cc %s: %w", algo, err)
		}
		opt.logf("bench: agent cc %s: %.0f pps, %.0f ns CPU per DATA packet, %.1f datagrams per sendmmsg", algo, r.PPS(), r.cpuPerPacket(), r.PerSend())
		rows = append(rows,
			row("agent CPU per DATA packet ("+scheme+", cc "+algo+")", "ns", r.cpuPerPacket(), 0, "cc none"),
			row("agent datagrams per sendmmsg ("+scheme+", cc "+algo+")", "datagrams", r.PerSend(), 0, "cc none"))
	}
	if len(rows) == 0 {
		return sec, nil
	}
	again, err := AgentTransfer(ctx, s.name(src), s.name(dst), dn.Addr.String(), scheme, cc.None, bytes)
	if err != nil {
		return sec, err
	}
	// Pacing at window over RTT leaves each event-loop wake-up a few
	// packets to send where unpaced cc none fills whole batches: the
	// datagrams per sendmmsg say how much of a difference in CPU per
	// packet is that rather than the controller.
	base := map[string]float64{"ns": (ag.cpuPerPacket() + again.cpuPerPacket()) / 2, "datagrams": (ag.PerSend() + again.PerSend()) / 2}
	sec.Rows = append(sec.Rows, row("agent CPU per DATA packet ("+scheme+", cc none, after the others)", "ns", again.cpuPerPacket(), ag.cpuPerPacket(), "cc none, first"))
	for _, r := range rows {
		sec.Rows = append(sec.Rows, row(r.Figure, r.Unit, r.Value, base[r.Unit], "cc none, mean of both"))
	}
	return sec, nil
}

// cpuPerPacket is CPU nanoseconds per packet.
func (r RateResult) cpuPerPacket() float64 {
	return float64(r.CPU.Nanoseconds()) / float64(max(r.Packets, 1))
}
