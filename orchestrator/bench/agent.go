package bench

import (
	"context"
	"errors"
	"fmt"
	"runtime"
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
	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/orchestrator/fidelity"
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
	ns := []string{src, dst}
	set, err := startAgentSet(ctx, len(ns), func(i int) agent.Options { return agent.Options{Namespace: ns[i]} },
		control.Configure{Scheme: scheme, CC: algo, Transport: control.Transport{
			HostParams: transport.HostParams{MinRTO: 250 * time.Millisecond, InitialRTO: 250 * time.Millisecond},
		}})
	if err != nil {
		return res, err
	}
	defer set.stop()
	c0 := processCPU()
	if err := set.handles[0].Do(&control.Send{Msg: 1, To: dstAddr, Bytes: bytes}); err != nil {
		return res, err
	}
	for {
		he, err := set.next(ctx, time.Minute)
		if err != nil {
			return res, err
		}
		if s, ok := he.ev.(*control.Sent); ok && he.host == 0 {
			cpu := processCPU() - c0
			res = RateResult{Packets: s.Record.Packets + s.Record.Retransmissions, Wall: time.Duration(s.Record.FCTNs), CPU: cpu}
			break
		}
	}
	// The sender's socket counters: how many datagrams each sendmmsg
	// carried (pacing splits the batches a window-limited burst fills).
	if err := set.handles[0].Do(&control.StatsQuery{}); err != nil {
		return res, err
	}
	for {
		he, err := set.next(ctx, 10*time.Second)
		if err != nil {
			return res, err
		}
		if st, ok := he.ev.(*control.Stats); ok && he.host == 0 {
			res.SendCalls, res.Datagrams = int(st.Conn.TxCalls), int(st.Conn.TxDatagrams)
			return res, nil
		}
	}
}

// pacedRuntimes are the runtimes the agent section compares, step by
// step: the runner's (one loop per core, batching within a quarter packet
// time), the same loops without batching (a quantum of 1 ns), and a loop
// per host (how in-process agents ran before they shared loops).
var pacedRuntimes = []PacedRuntime{{}, {Quantum: time.Nanosecond}, {PerHost: true}}

// pacedRows measures the paced agents in each runtime and the paced bare
// UDP loop, in one shaped lab.
func pacedRows(ctx context.Context, opt Options, d time.Duration) (rows []Row, err error) {
	s, err := newScope()
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := s.close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	topo, err := pacedLab(ctx, s, pacedRate)
	if err != nil {
		return nil, err
	}
	bare, err := PacedBareUDP(ctx, s, topo, pacedRate, d)
	if err != nil {
		return nil, fmt.Errorf("paced bare UDP: %w", err)
	}
	opt.logf("bench: paced bare UDP: %d datagrams, CPU %v, %.0f per core", bare.Packets, bare.CPU.Round(time.Millisecond), bare.PPSPerCore())
	cores := float64(runtime.NumCPU())
	for _, rt := range pacedRuntimes {
		pr, err := PacedAgents(ctx, s, topo, pacedRate, d, rt)
		if err != nil {
			return rows, fmt.Errorf("paced agents, %v: %w", rt, err)
		}
		share := pr.CPU.Seconds() / pr.Wall.Seconds() / cores
		opt.logf("bench: paced agents, %v: %d DATA, %d datagrams in %v, CPU %v (%.0f%% of %v cores), %v per DATA packet, lost %.1f%% of paced time to late departures (late %.2f slots, gaps %.1f%% long), latest %v, loops waited %v for a CPU",
			rt, pr.Data, pr.Datagrams, pr.Wall.Round(time.Millisecond), pr.CPU.Round(time.Millisecond), 100*share, cores,
			pr.CPUPerPacket(), 100*pr.Pacing.Loss(), pr.Pacing.Late(), 100*pr.Pacing.Error(), time.Duration(pr.Pacing.MaxLateNs), pr.LoopWait().Round(time.Millisecond))
		label := fmt.Sprintf("%d hosts at %s, %v", pr.Hosts, units.FormatRate(pacedRate), rt)
		rows = append(rows,
			row("paced agents datagrams per core ("+label+")", "pps/core", pr.DatagramsPerCore(), bare.PPSPerCore(), "paced bare UDP loop"),
			row("paced agents CPU per DATA packet ("+label+")", "µs", pr.CPUPerPacket().Seconds()*1e6, 2e6/bare.PPSPerCore(), "paced bare UDP loop, 2 datagrams"),
			row("paced agents CPU share ("+label+")", "%", 100*share, 100, "all cores"),
			row("paced agents' time lost to late departures ("+label+")", "%", 100*pr.Pacing.Loss(), 100*fidelity.MaxPacingLoss, "fidelity limit"),
			row("paced agents' departures after their slots ("+label+")", "slots", pr.Pacing.Late(), fidelity.MaxPacingLateSlots, "fidelity limit"),
			row("paced agents' loops waiting for a CPU ("+label+")", "s", pr.LoopWait().Seconds()/float64(max(len(pr.Loops), 1)), pr.Wall.Seconds(), "run time, per loop thread"),
		)
	}
	return rows, nil
}

// Agent measures the host agent's DATA packet rate per core against a
// bare UDP loop between the same two hosts of a k=4 line-rate lab, paced
// on every host of a shaped lab in each runtime (pacedRuntimes) against a
// paced bare UDP loop, and its CPU per DATA packet under each congestion
// control of opt.CC against cc none in the same run.
func Agent(ctx context.Context, opt Options) (sec *Section, err error) {
	n, bytes, paced := 200000, uint64(64<<20), 2*time.Second
	if opt.Quick {
		n, bytes, paced = 50000, 16<<20, 500*time.Millisecond
	}
	const scheme = "rss+pfld"
	algos := opt.ccs()
	sec = &Section{Name: "agent", Method: fmt.Sprintf(
		"h0-0-0 -> h0-0-1 of a k=4 fat tree, eBPF switch in line-rate mode. Baseline: %d 1472-byte datagrams, sendmmsg/recvmmsg, "+
			"at most 256 ahead of the receiver. Agent: in-process agents move %d MiB with %s, unpaced; DATA packets over the FCT. "+
			"CPU = this process's user + system time. Congestion controls (%s): the same transfer, each against cc none's CPU per DATA packet, "+
			"measured before and after them, and the datagrams per sendmmsg (pacing splits batches). "+
			"Paced: a k=4 fat tree in shaped mode, every link at %s; each of the 16 hosts sends %v worth of data with %s, paced at %s, "+
			"to its neighbour under the same edge switch (two hops; nothing queues in the fabric), the agents sharing one event loop per core "+
			"(as the runner runs them; also without batching: quantum 1 ns) or with a loop each; datagrams are everything the agents sent (DATA, ACKs, probes), CPU is this process's "+
			"and the ksoftirqd threads' until the last message is acknowledged. Paced baseline: the same hosts send 1472-byte UDP datagrams "+
			"to the same neighbours at the same rate from one goroutine that wakes every %v and moves each host's due datagrams with one "+
			"sendmmsg and its arrivals with one recvmmsg: the fabric's and the sockets' cost with the least wake-ups.",
		n, bytes>>20, scheme, strings.Join(algos, ", "), units.FormatRate(uint64(pacedRate*pacedHeadroom)), paced, pacedScheme,
		units.FormatRate(pacedRate), bareTick)}
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
	prows, err := pacedRows(ctx, opt, paced)
	sec.Rows = append(sec.Rows, prows...)
	if err != nil {
		return sec, err
	}
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
