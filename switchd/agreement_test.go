package switchd_test

import (
	"math"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ftlab/ftlab/bpf"
	"github.com/ftlab/ftlab/internal/testlab"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/switchd"
	"github.com/ftlab/ftlab/switchd/shaping"
)

// TestModelAgreesWithQdisc overloads one egress port in shaped mode and
// checks that the link model (which decides drops and ECN marks) and the
// HTB qdisc (which makes packets wait) describe the same queue.
//
// h0-0-1 (under e0-0) and h0-1-0 (under e0-1, through an aggregation
// switch) each send full-size UDP datagrams to h0-0-0 as fast as their own
// shaped 100 Mbit/s host links let them out, so e0-0's port towards
// h0-0-0 receives twice its rate and nothing else on either path is
// overloaded. During the load the port's model backlog,
// max(0, t_next - now) * rate / 8e9 with now = CLOCK_MONOTONIC, and the
// qdisc's backlog are sampled side by side. The dequeue monitor runs, as
// in every shaped run, so the model also sees the real queue (see
// bpf/c/realq.h): whatever the machine's load, the qdisc must hold no
// more than the buffer.
func TestModelAgreesWithQdisc(t *testing.T) {
	testlab.RequireRoot(t)
	const (
		bottleneck = "e0-0"
		port       = 0 // e0-0's port to h0-0-0
		receiver   = "h0-0-0"
		payload    = 1472 // 1514-byte frames
		frame      = payload + 42
		warm       = 300 * time.Millisecond
		samples    = 20
		every      = 100 * time.Millisecond
	)
	senders := []string{"h0-0-1", "h0-1-0"}
	l := buildLab(t, testlab.Topology(t, "fattree-k4"), switchd.Config{Mode: switchd.ModeShaped, Seed: 1})
	probe := newPortProbe(t, l, bottleneck, port)
	ref := mustNode(t, l, bottleneck).Ports[port]
	params := l.topo.Links[ref.Link].Params(ref.Side) // the direction leaving e0-0
	rate, buffer := float64(params.RateBps), float64(params.BufferBytes)

	dq, err := l.control().WatchDequeues()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dq.Close() })
	ctr := newRxCounter(t)
	ctr.attach(t, l, receiver)
	stop := make(chan struct{})
	done := make(chan error, len(senders))
	var sent atomic.Uint64
	for i, s := range senders {
		go func() { done <- udpBlast(l, s, receiver, uint16(41000+i), 9, payload, stop, &sent) }()
	}
	stopped := false
	finish := func() {
		if stopped {
			return
		}
		stopped = true
		close(stop)
		for range senders {
			if err := <-done; err != nil {
				t.Errorf("sender: %v", err)
			}
		}
	}
	defer finish()

	time.Sleep(warm)
	first := probe.sample(t)
	c0, t0 := ctr.read(t), time.Now()
	var got []portSample
	for range samples {
		time.Sleep(every)
		got = append(got, probe.sample(t))
	}
	c1, t1 := ctr.read(t), time.Now()
	finish()
	last := got[len(got)-1]

	var sumModel, sumQdisc, sumDiff float64
	busy := 0
	for i, s := range got {
		q := float64(s.Qdisc.BacklogBytes)
		sumModel += s.Model
		sumQdisc += q
		sumDiff += math.Abs(s.Model - q)
		if s.Model > 2*frame && q > 2*frame {
			busy++
		}
		t.Logf("sample %2d: %v, model - qdisc %+6.0f B", i, s, s.Model-q)
	}
	n := float64(len(got))
	meanModel, meanQdisc, meanDiff := sumModel/n, sumQdisc/n, sumDiff/n
	tol := max(2*frame, 0.2*meanModel)
	delivered := float64(c1.Bytes-c0.Bytes) * 8 / t1.Sub(t0).Seconds()
	t.Logf("mean backlog: model %.0f B, qdisc %.0f B (buffer %.0f B); mean |model - qdisc| %.0f B, tolerance %.0f B",
		meanModel, meanQdisc, buffer, meanDiff, tol)
	t.Logf("delivered %.2f Mbit/s on a %.0f Mbit/s link (%.4f); senders got %d datagrams out; model drops %d, qdisc drops %d",
		delivered/1e6, rate/1e6, delivered/rate, sent.Load(), last.Ctr.DropBuffer-first.Ctr.DropBuffer, last.Qdisc.Drops)

	t.Logf("qdisc - model grew by %.0f B/s over the samples (least squares)", drift(got))

	// Once the queue drained, the link model reckons the real queue
	// empty: every snapshot since the last byte was handed over saw
	// what the qdisc held.
	var rq bpf.RealQueue
	for range 100 {
		if rq, err = probe.sw.RealQueue(port); err != nil {
			t.Fatal(err)
		}
		if st, err := shaping.Read(probe.h, probe.link); err == nil && st.BacklogPkts == 0 && rq.Backlog() == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if rq.Backlog() != 0 {
		t.Errorf("drained bottleneck: the link model reckons %d bytes in the real queue: %+v", rq.Backlog(), rq)
	}

	// Only the bottleneck port may be overloaded.
	stats, err := l.control().Stats()
	if err != nil {
		t.Fatal(err)
	}
	if err := dq.Fill(stats); err != nil {
		t.Fatal(err)
	}
	// The dequeue monitor saw the bottleneck's real queue drain: almost
	// every dequeue left a backlog, served at the link rate (HTB cannot go
	// faster; slower is the fidelity figure above).
	for _, p := range stats {
		if p.Dequeue == nil {
			t.Fatalf("%s port %d: no dequeue statistics", p.Switch, p.Port)
		}
		if p.Switch != bottleneck || p.Port != port {
			continue
		}
		d := p.Dequeue
		t.Logf("bottleneck dequeues: %+v, %.2f Mbit/s while backlogged", *d, d.BusyRateBps()/1e6)
		if d.Dequeues < uint64(p.Qdisc.SentPackets)*9/10 || d.BusyGaps < d.Dequeues*3/4 {
			t.Errorf("bottleneck: %d dequeues (%d busy) of %d packets the qdisc sent: the monitor misses them", d.Dequeues, d.BusyGaps, p.Qdisc.SentPackets)
		}
		if r := d.BusyRateBps(); r > 1.05*rate || r < 0.5*rate {
			t.Errorf("bottleneck served %.2f Mbit/s while backlogged on a %.0f Mbit/s link", r/1e6, rate/1e6)
		}
	}
	var bottleneckLag, bottleneckDrops uint64
	for _, p := range stats {
		if p.Switch == bottleneck && p.Port == port {
			bottleneckLag, bottleneckDrops = p.Queue.LagDecided, p.Counters.DropBuffer
		}
	}
	lagging := 2*bottleneckLag > bottleneckDrops
	for _, p := range stats {
		if p.Counters.TxPackets == 0 {
			continue
		}
		t.Logf("%s port %d (%s): tx %d, model drops %d (%d decided by the real queue), qdisc sent %d, qdisc drops %d",
			p.Switch, p.Port, p.Direction, p.Counters.TxPackets, p.Counters.DropBuffer, p.Queue.LagDecided, p.Qdisc.SentPackets, p.Qdisc.Drops)
		// Elsewhere arrivals come at most at the link rate, so the
		// ideal link never drops; when the machine serves a port slower
		// than the port before it, its real queue grows and drops follow
		// it (counted as decided by the lag), never the model.
		// A machine so late that the bottleneck's real queue decided most
		// of its drops also delivers upstream packets in batches (a host
		// link's softirq work run late), which an ideal port downstream
		// sees as a burst above its rate (CI: 32 such drops of 15,606
		// packets, with 86% of the bottleneck's drops the real queue's):
		// that is the machine's, reported by the fidelity verdicts, and
		// only a machine that kept up must show none.
		if (p.Switch != bottleneck || p.Port != port) && p.Counters.DropBuffer > p.Queue.LagDecided && !lagging {
			t.Errorf("%s port %d dropped %d packets, %d of them for the real queue: only %s port %d should be overloaded", p.Switch, p.Port, p.Counters.DropBuffer, p.Queue.LagDecided, bottleneck, port)
		}
	}

	// How closely the qdisc follows the model depends on the CPU: when
	// softirq work or HTB's timer runs late, the real queue serves less
	// than the link rate for a while and lags behind the model, which has
	// already counted those bytes as sent. That lag is a fidelity
	// figure (logged here, reported by the benchmark and the fidelity
	// monitor), not a pass/fail property on a shared 2-core machine. What
	// must hold whatever the load: the model never claims a longer queue
	// than the real one (its drain rate is not slower than the link), and
	// the real queue never outgrows the buffer (drops follow it).
	if meanDiff > tol {
		t.Logf("FIDELITY: qdisc lags the model: mean |model - qdisc| = %.0f B > %.0f B (means: model %.0f, qdisc %.0f)",
			meanDiff, tol, meanModel, meanQdisc)
	}
	// HTB may send up to its burst (a millisecond of the rate) ahead of
	// the model.
	burst := max(2*frame, rate/8/1000)
	if meanModel > meanQdisc+burst+2*frame {
		t.Errorf("the model's queue is longer than the real one beyond HTB's burst: mean model %.0f B, qdisc %.0f B, burst %.0f B",
			meanModel, meanQdisc, burst)
	}
	// With the monitor running, drops follow the real queue when it is
	// the longer: it stays within the buffer, give or take a frame per
	// CPU admitting at the same time and the readings' skew.
	slack := float64(runtime.NumCPU()+1) * frame
	for i, s := range got {
		if q := float64(s.Qdisc.BacklogBytes); q > buffer+slack {
			t.Errorf("sample %d: the qdisc holds %.0f B, more than the %.0f B buffer (+%.0f B): drops do not follow the real queue", i, q, buffer, slack)
		}
	}
	t.Logf("the link served %.4f of its rate over the samples (shortfall %.0f B)",
		1-shortfall(got[0], last, rate)/(rate/8*float64(last.Now-got[0].Now)/1e9), shortfall(got[0], last, rate))
	// The queue that decides is the longer of the two: when the machine
	// serves the port slowly, the real queue fills and its drops keep the
	// model's own queue short (CI: 14,951 of 15,020 drops decided by the
	// real queue, model 16 KB and qdisc 65 KB on average).
	if max(meanModel, meanQdisc) < buffer/4 {
		t.Errorf("under 2x overload the queue should be well filled: mean model %.0f B, qdisc %.0f B, want the longer >= %.0f B (buffer/4)",
			meanModel, meanQdisc, buffer/4)
	}
	if !lagging && meanModel < buffer/4 {
		t.Errorf("under 2x overload the model's queue should be well filled when it decides most drops (%d of %d by the real queue): mean model %.0f B, want >= %.0f B",
			bottleneckLag, bottleneckDrops, meanModel, buffer/4)
	}
	// The senders share the machine with the suite: a stall longer than
	// the buffer's 5 ms drain empties the queue for a sample or two (CI
	// saw 17 of 20 busy) without saying anything of the data plane.
	if busy < len(got)*3/4 {
		t.Errorf("only %d of %d samples had both backlogs above 2 frames", busy, len(got))
	}
	if last.Ctr.DropBuffer <= first.Ctr.DropBuffer {
		t.Errorf("the link model dropped nothing during a 2x overload")
	}
	if last.Qdisc.Drops != 0 {
		t.Errorf("the qdisc dropped %d packets: the link model must drop first", last.Qdisc.Drops)
	}
	if delivered > 1.02*rate {
		t.Errorf("delivered %.2f Mbit/s, above the %.0f Mbit/s link rate (+2%%)", delivered/1e6, rate/1e6)
	}

	// A restarted watch measures from zero, as a new one would (the
	// runner keeps one watch for the runs of a cell and restarts it for
	// each), and counts what comes after.
	var before uint64
	for _, p := range stats {
		if p.Switch == bottleneck && p.Port == port {
			before = p.Dequeue.Dequeues
		}
	}
	if err := dq.Restart(); err != nil {
		t.Fatal(err)
	}
	dequeues := func() (total, atBottleneck uint64) {
		st, err := l.control().Stats()
		if err != nil {
			t.Fatal(err)
		}
		if err := dq.Fill(st); err != nil {
			t.Fatal(err)
		}
		for _, p := range st {
			total += p.Dequeue.Dequeues
			if p.Switch == bottleneck && p.Port == port {
				atBottleneck = p.Dequeue.Dequeues
			}
		}
		return total, atBottleneck
	}
	if total, _ := dequeues(); total != 0 {
		t.Errorf("right after Restart the watch counts %d dequeues, want 0", total)
	}
	stop2, done2 := make(chan struct{}), make(chan error, 1)
	go func() { done2 <- udpBlast(l, senders[0], receiver, 41100, 9, payload, stop2, &sent) }()
	time.Sleep(200 * time.Millisecond)
	close(stop2)
	if err := <-done2; err != nil {
		t.Fatal(err)
	}
	if _, got := dequeues(); got == 0 || got >= before {
		t.Errorf("after Restart, 200 ms of one sender: %d dequeues at the bottleneck, want some and fewer than the %d of the overload before", got, before)
	}
}

// shortfall is how many bytes the port's qdisc sent less than the link
// rate would have between samples a and b.
func shortfall(a, b portSample, rate float64) float64 {
	return rate/8*float64(b.Now-a.Now)/1e9 - float64(b.Qdisc.SentBytes-a.Qdisc.SentBytes)
}

// drift is the least-squares slope of (qdisc - model) backlog over the
// samples' times, in bytes per second: how fast the real queue runs ahead
// of (or behind) the link model.
func drift(ss []portSample) float64 {
	var n, sx, sy, sxx, sxy float64
	for _, s := range ss {
		x := float64(s.Now-ss[0].Now) / 1e9
		y := float64(s.Qdisc.BacklogBytes) - s.Model
		n++
		sx += x
		sy += y
		sxx += x * x
		sxy += x * y
	}
	if d := n*sxx - sx*sx; d != 0 {
		return (n*sxy - sx*sy) / d
	}
	return 0
}

func mustNode(t *testing.T, l *lab, name string) *topology.Node {
	t.Helper()
	n, ok := l.topo.Node(name)
	if !ok {
		t.Fatalf("no node %s", name)
	}
	return n
}
