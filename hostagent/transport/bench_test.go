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
// every congestion control, none being the baseline of the same run:
// 16 MiB over a 100 Gbit/s, 10 us pipe that marks ECN above 64 KiB, ACKs
// and all, no simulator beyond a timer heap. The difference to none is
// what the window, its updates and the pacing cost per packet.
func BenchmarkEngineCC(b *testing.B) {
	const rtt = 10 * time.Microsecond
	env := params.Env{RTT: rtt}
	for _, algo := range cc.Names() {
		b.Run(algo, func(b *testing.B) {
			sch, err := scheme.New("rss+pfld", scheme.MustDefaults("rss+pfld", env))
			if err != nil {
				b.Fatal(err)
			}
			ctl, err := cc.New(algo, cc.MustDefaults(algo, env))
			if err != nil {
				b.Fatal(err)
			}
			pkts, cpu0 := 0, cpuTime()
			for b.Loop() {
				clk := clock.NewVirtual()
				ab := [2]netip.Addr{netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2")}
				pipes := [2]*pipe{}
				eps := [2]*transport.Endpoint{}
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
				f, _ := eps[0].OpenFlow(ab[1])
				if _, err := f.Send(16 << 20); err != nil {
					b.Fatal(err)
				}
				for !f.Idle() && clk.Step() {
				}
				if !f.Idle() {
					b.Fatal("transfer did not complete")
				}
				pkts += f.Record().Packets
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(pkts), "ns/datapkt")
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(pkts), "cpu-ns/datapkt")
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
