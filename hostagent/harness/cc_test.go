package harness

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/ftlab/ftlab/hostagent/cc"
	"github.com/ftlab/ftlab/hostagent/sim"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/internal/params"
)

// The congestion-control fabric, in the k=4 lab's ratios: every host on a
// 100 Gbit/s link whose egress buffer holds about 2 BDPs and marks ECN at
// half a BDP (the lab: 64 KiB and 16 KiB over a 32 KB BDP), host.window 8
// BDPs (the lab's 256 KiB), 8 paths per pair. The bottleneck of N senders
// into one receiver is the receiver's downlink. One-way 5 us of
// propagation plus three serializations of a 4 KiB packet: an 11 us round
// trip, 33 full packets in flight.
const (
	ccRTT    = 11 * time.Microsecond
	ccBuffer = 256 << 10
	ccECN    = 64 << 10
	ccWindow = 1 << 20
)

var ccEnv = params.Env{RTT: ccRTT}

// ccAlgos are the congestion controls under test: all but none.
func ccAlgos() []string {
	return slices.DeleteFunc(cc.Names(), func(n string) bool { return n == cc.None })
}

func ccFabric(hosts int, seed uint64) sim.Config {
	return sim.Config{
		Seed: seed, Hosts: hosts, Paths: 8,
		Host: sim.LinkConfig{Rate: linkBps, Delay: 1500 * time.Nanosecond, Buffer: ccBuffer, ECNThreshold: ccECN},
		Path: sim.LinkConfig{Rate: linkBps, Delay: 2 * time.Microsecond, Buffer: 1 << 20, ECNThreshold: ccECN},
	}
}

// withCC returns cfg running congestion control algo with its defaults at
// env, the fabric's base RTT being env.RTT.
func withCC(t testing.TB, cfg transport.Config, algo string, env params.Env) transport.Config {
	t.Helper()
	c, err := cc.New(algo, cc.MustDefaults(algo, env)) // nil for none
	if err != nil {
		t.Fatal(err)
	}
	cfg.CC, cfg.BaseRTT = c, env.RTT
	return cfg
}

// ccConfig is the CC fabric's endpoint configuration.
func ccConfig(t testing.TB, scheme, algo string) transport.Config {
	cfg := withCC(t, endpointConfig(named(t, scheme, nil)), algo, ccEnv)
	cfg.Window = ccWindow
	return cfg
}

// queueTarget is the bottleneck backlog in bytes each algorithm steers to
// at link rate bps, with the range around it a test accepts. The
// ECN-driven ones oscillate about the marking threshold (DCTCP keeps the
// queue near K; MP-RDMA's unsmoothed per-ACK cut drains it further); the
// delay-driven ones hold their queueing-delay target, Swift's at the
// flows' windows (flow scaling).
func queueTarget(t testing.TB, algo string, bps float64, flows int) (target, lo, hi float64) {
	p := cc.MustDefaults(algo, ccEnv)
	switch algo {
	case "dctcp":
		return ccECN, 0.4, 1.5
	case "mprdma":
		return ccECN, 0.25, 1.5
	case "nscc":
		return p.NSCC.Target.Seconds() * bps / 8, 0.7, 1.3
	case "swift":
		s := p.Swift
		// Each flow's window in packets at the fair share, queue included.
		wnd := (bps/8*ccRTT.Seconds() + ccECN) / float64(flows) / 4110
		alpha := s.FSRange.Seconds() / (1/math.Sqrt(s.FSMinWindow) - 1/math.Sqrt(s.FSMaxWindow))
		fs := min(max(alpha/math.Sqrt(wnd)-alpha/math.Sqrt(s.FSMaxWindow), 0), s.FSRange.Seconds())
		return (s.BaseTarget.Seconds() + fs - ccRTT.Seconds()) * bps / 8, 0.6, 1.5
	}
	t.Fatalf("no queue target for %s", algo)
	return 0, 0, 0
}

// meter samples the bottleneck (host dst's downlink) every step: its
// backlog, and the DATA bytes each sender put on its paths.
type meter struct {
	dst     int
	step    time.Duration
	backlog []int
	sent    map[int][]int // per source, bytes per step
	cur     map[int]int
}

func (m *meter) install(n *sim.Network) {
	m.sent, m.cur = map[int][]int{}, map[int]int{}
	n.AddFilter(func(p *sim.Packet) bool {
		if p.Dst == m.dst && len(p.Payload) > 200 { // DATA, not ACKs or probes
			m.cur[p.Src] += len(p.Payload)
		}
		return false
	})
	clk := n.Clock()
	var tick func()
	tick = func() {
		m.backlog = append(m.backlog, n.Host(m.dst).Downlink().Backlog())
		for src := range n.Config().Hosts {
			if src != m.dst {
				m.sent[src] = append(m.sent[src], m.cur[src])
				m.cur[src] = 0
			}
		}
		clk.AfterFunc(m.step, tick)
	}
	clk.AfterFunc(m.step, tick)
}

// span returns the steps of [a, b).
func (m *meter) span(a, b time.Duration) (int, int) {
	return max(int(a/m.step), 0), min(int(b/m.step), len(m.backlog))
}

// rates returns each sender's mean rate in bit/s over [a, b), and their
// sum.
func (m *meter) rates(a, b time.Duration) (map[int]float64, float64) {
	i, j := m.span(a, b)
	out, total := map[int]float64{}, 0.0
	for src, s := range m.sent {
		sum := 0
		for _, v := range s[i:j] {
			sum += v
		}
		out[src] = float64(sum) * 8 / (float64(j-i) * m.step.Seconds())
		total += out[src]
	}
	return out, total
}

// meanBacklog is the bottleneck's mean backlog over [a, b).
func (m *meter) meanBacklog(a, b time.Duration) float64 {
	i, j := m.span(a, b)
	sum := 0
	for _, v := range m.backlog[i:j] {
		sum += v
	}
	return float64(sum) / float64(j-i)
}

// jain is Jain's fairness index: 1 when all are equal, 1/n when one has
// everything.
func jain(xs map[int]float64) float64 {
	var s, s2 float64
	for _, x := range xs {
		s += x
		s2 += x * x
	}
	return s * s / (float64(len(xs)) * s2)
}

// longFlows sends n messages too long to finish, host i starting at i x
// stagger, all to host n.
func longFlows(n int, stagger time.Duration) []Message {
	var msgs []Message
	for i := range n {
		msgs = append(msgs, Message{From: i, To: n, Size: 256 << 20, At: time.Duration(i) * stagger})
	}
	return msgs
}

// TestCCFairShare: four flows join a bottleneck 100 us (9 RTTs) apart;
// two milliseconds later (180 RTTs) they share it fairly, keep it busy and
// hold its queue near the algorithm's target, under a single-path and a
// multipath scheme alike.
func TestCCFairShare(t *testing.T) {
	const n = 4
	for _, algo := range ccAlgos() {
		for _, sch := range []string{"ecmp", "rss+pfld"} {
			t.Run(algo+"/"+sch, func(t *testing.T) {
				t.Parallel()
				m := &meter{dst: n, step: time.Microsecond}
				a, b := 4*time.Millisecond, 6*time.Millisecond
				sc := Scenario{Net: ccFabric(n+1, 3), Transport: ccConfig(t, sch, algo), Messages: longFlows(n, 100*time.Microsecond),
					Setup: m.install, Limit: b}
				res, _ := Run(sc) // incomplete by design: the flows outlast the run
				r, total := m.rates(a, b)
				q := m.meanBacklog(a, b)
				target, lo, hi := queueTarget(t, algo, linkBps, n)
				dl := res.Net.Host(n).Downlink().Stats()
				t.Logf("%s/%s: Jain %.3f, utilization %.3f, mean queue %.1f KB (target %.1f KB), drops %d, rates (Gbit/s)%s",
					algo, sch, jain(r), total/linkBps, q/1000, target/1000, dl.TailDrops, gbits(r))
				if j := jain(r); j < 0.95 {
					t.Errorf("Jain's index %.3f < 0.95", j)
				}
				if u := total / linkBps; u < 0.9 {
					t.Errorf("utilization %.3f < 0.9", u)
				}
				if q < lo*target || q > hi*target {
					t.Errorf("mean queue %.1f KB outside %.2f-%.2f x the target %.1f KB", q/1000, lo, hi, target/1000)
				}
			})
		}
	}
}

func gbits(r map[int]float64) string {
	s := ""
	for i := range len(r) {
		s += fmt.Sprintf(" %.1f", r[i]/1e9)
	}
	return s
}

// TestCCIncast: 8 and 32 senders send 1 MiB each to one receiver at once
// (Ordered Chaos's incast). Without congestion control each sends a
// host.window of 8 BDPs at line rate and the receiver's buffer drops most
// of it, again and again; every algorithm must lose at least 10x fewer
// packets there, and every message must still arrive exactly once. What
// the algorithms do lose is their first round trip: every flow starts with
// its initial window (one BDP for mprdma and swift, 1.5 for nscc, 10
// packets for dctcp) before the first mark comes back.
func TestCCIncast(t *testing.T) {
	for _, fan := range []int{8, 32} {
		for _, sch := range []string{"ecmp", "rss+pfld"} {
			t.Run(fmt.Sprintf("%d:1/%s", fan, sch), func(t *testing.T) {
				t.Parallel()
				drops := map[string]uint64{}
				for _, algo := range cc.Names() {
					var msgs []Message
					for i := range fan {
						msgs = append(msgs, Message{From: i, To: fan, Size: 1 << 20})
					}
					sc := Scenario{Net: ccFabric(fan+1, 5), Transport: ccConfig(t, sch, algo), Messages: msgs, Limit: time.Second}
					res := runChecked(t, sc)
					drops[algo] = res.Net.Host(fan).Downlink().Stats().TailDrops
					tot := res.Totals()
					t.Logf("%d:1 %s/%s: CCT %v, buffer drops %d, retransmissions %d, RTOs %d",
						fan, algo, sch, res.End, drops[algo], tot.Retransmissions, tot.RTOs)
				}
				for _, algo := range ccAlgos() {
					if 10*max(drops[algo], 1) > drops[cc.None] {
						t.Errorf("%s: %d buffer drops, not 10x fewer than none's %d", algo, drops[algo], drops[cc.None])
					}
				}
			})
		}
	}
}

// TestCCFollowsHalving: four flows share the bottleneck; at 3 ms its rate
// halves. Within 4 RTTs the senders must be down to the new capacity
// (their rate over the next 2 RTTs at most 10% above it), and from 10 RTTs
// on they must keep it busy with the queue back near the target.
func TestCCFollowsHalving(t *testing.T) {
	const n = 4
	halve := 3 * time.Millisecond
	for _, algo := range ccAlgos() {
		for _, sch := range []string{"ecmp", "rss+pfld"} {
			t.Run(algo+"/"+sch, func(t *testing.T) {
				t.Parallel()
				m := &meter{dst: n, step: time.Microsecond}
				end := halve + 50*ccRTT
				sc := Scenario{Net: ccFabric(n+1, 3), Transport: ccConfig(t, sch, algo), Messages: longFlows(n, 0),
					Setup: func(nw *sim.Network) {
						m.install(nw)
						nw.Clock().AfterFunc(halve, func() { nw.Host(n).Downlink().SetRate(linkBps / 2) })
					}, Limit: end}
				if _, err := Run(sc); err != nil && !isIncomplete(err) {
					t.Fatal(err)
				}
				after := halve + 4*ccRTT
				_, follow := m.rates(after, after+2*ccRTT)
				_, busy := m.rates(halve+10*ccRTT, end)
				q := m.meanBacklog(halve+10*ccRTT, end)
				target, _, hi := queueTarget(t, algo, linkBps/2, n)
				var trace string
				for k := -2; k < 20; k += 2 {
					at := halve + time.Duration(k)*ccRTT
					_, r := m.rates(at, at+2*ccRTT)
					trace += fmt.Sprintf(" %+d:%.0f", k, r/1e9)
				}
				t.Logf("%s/%s: rate 4-6 RTTs after %.1f Gbit/s, 10-50 RTTs after %.1f Gbit/s, queue %.1f KB (target %.1f KB); Gbit/s per 2 RTTs:%s",
					algo, sch, follow/1e9, busy/1e9, q/1000, target/1000, trace)
				if follow > 1.1*linkBps/2 {
					t.Errorf("4-6 RTTs after the halving the senders still send %.1f Gbit/s into %.0f", follow/1e9, linkBps/2e9)
				}
				if busy < 0.85*linkBps/2 {
					t.Errorf("10-50 RTTs after the halving the senders use only %.1f of %.0f Gbit/s", busy/1e9, linkBps/2e9)
				}
				if q > hi*target {
					t.Errorf("10-50 RTTs after the halving the queue is %.1f KB, above %.2f x the target %.1f KB", q/1000, hi, target/1000)
				}
			})
		}
	}
}

func isIncomplete(err error) bool { return errors.Is(err, ErrIncomplete) }
