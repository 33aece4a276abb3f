package transport_test

import (
	"net/netip"
	"syscall"
	"testing"
	"time"

	"github.com/ftlab/ftlab/hostagent/cc"
	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/netio"
	"github.com/ftlab/ftlab/hostagent/scheme"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/internal/params"
)

// pipe is a lossless link between two endpoints on one virtual clock:
// every datagram arrives delay later, in order, ECN marked CE when more
// than mark bytes are queued ahead of it at rate. No payload is copied
// beyond what a conn must (the sender reuses its buffer).
type pipe struct {
	clk   *clock.Virtual
	local netip.Addr
	peer  *transport.Endpoint
	delay time.Duration
	rate  float64 // bits per second
	mark  int     // bytes
	busy  clock.Time
	pool  [][]byte
}

func (p *pipe) LocalAddr() netip.Addr { return p.local }
func (p *pipe) MaxPayload() int       { return 4096 - 28 }

func (p *pipe) Send(d netio.Datagram) error {
	var b []byte
	if n := len(p.pool); n > 0 {
		b, p.pool = p.pool[n-1][:0], p.pool[:n-1]
	}
	b = append(b, d.Payload...)
	now := p.clk.Now()
	start := max(now, p.busy)
	if d.ECN.Capable() && int(float64(start-now)*p.rate/8e9) > p.mark {
		d.ECN = netio.CE
	}
	p.busy = start + clock.Time(float64(len(b)+42)*8e9/p.rate)
	d.Peer, d.Payload = p.local, b
	p.clk.At(p.busy.Add(p.delay), func() {
		p.peer.HandleDatagram(d)
		p.pool = append(p.pool, b)
	})
	return nil
}

// BenchmarkEngineCC is the transport engine's cost per DATA packet under
// every congestion control against none: 16 MiB with rss+pfld over a
// 100 Gbit/s, 10 us pipe that marks ECN above 64 KiB, ACKs and all, no
// simulator beyond a timer heap. Each iteration moves the message with
// none and with the algorithm, alternately, so both see the same machine
// (shared, the figures drift between runs); x-none is the ratio of their
// CPU times per packet, the cost of the window, its updates and the
// pacing. Both transfers run the same events (the pipe never drops).
func BenchmarkEngineCC(b *testing.B) {
	const rtt = 10 * time.Microsecond
	env := params.Env{RTT: rtt}
	sch, err := scheme.New("rss+pfld", scheme.MustDefaults("rss+pfld", env))
	if err != nil {
		b.Fatal(err)
	}
	// transfer moves 16 MiB and returns the DATA packets and CPU time.
	transfer := func(ctl transport.CongestionControl) (int, time.Duration) {
		clk := clock.NewVirtual()
		ab := [2]netip.Addr{netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2")}
		var pipes [2]*pipe
		var eps [2]*transport.Endpoint
		for i := range 2 {
			pipes[i] = &pipe{clk: clk, local: ab[i], delay: rtt / 2, rate: 100e9, mark: 64 << 10}
			eps[i], err = transport.NewEndpoint(transport.Config{
				Scheme: sch, CC: ctl, Rate: 100e9, BaseRTT: rtt, MinRTO: 100 * time.Microsecond, Seed: uint64(i + 1),
			}, clk, pipes[i])
			if err != nil {
				b.Fatal(err)
			}
		}
		pipes[0].peer, pipes[1].peer = eps[1], eps[0]
		c0 := cpuTime()
		f, _ := eps[0].OpenFlow(ab[1])
		if _, err := f.Send(16 << 20); err != nil {
			b.Fatal(err)
		}
		for !f.Idle() && clk.Step() {
		}
		if !f.Idle() {
			b.Fatal("transfer did not complete")
		}
		return f.Record().Packets, cpuTime() - c0
	}
	for _, algo := range cc.Names()[1:] {
		b.Run(algo, func(b *testing.B) {
			ctl, err := cc.New(algo, cc.MustDefaults(algo, env))
			if err != nil {
				b.Fatal(err)
			}
			var pkts, basePkts int
			var cpu, baseCPU time.Duration
			for b.Loop() {
				n, c := transfer(nil)
				basePkts, baseCPU = basePkts+n, baseCPU+c
				n, c = transfer(ctl)
				pkts, cpu = pkts+n, cpu+c
			}
			per := float64(cpu.Nanoseconds()) / float64(pkts)
			base := float64(baseCPU.Nanoseconds()) / float64(basePkts)
			b.ReportMetric(per, "cpu-ns/datapkt")
			b.ReportMetric(base, "none-cpu-ns/datapkt")
			b.ReportMetric(per/base, "x-none")
		})
	}
}

// cpuTime is the process's user and system time: on a machine shared with
// other work it measures what the benchmark itself spent, where wall time
// also counts the waits for a CPU.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
