package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ftlab/ftlab/orchestrator/fidelity"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/orchestrator/results"
	"github.com/ftlab/ftlab/orchestrator/scenario"
	"github.com/ftlab/ftlab/orchestrator/workload"
	"github.com/ftlab/ftlab/switchd"
)

// After the last delivery a run waits for its senders' last reports: until
// every sender said its message was acknowledged, and then one maximum
// RTT (at least drainStrays) so that the copies still in flight then
// (retransmissions and probes sent before the last ACK arrived, and their
// ACKs) land before the agents stop and the hosts' packets are counted.
// It never waits more than drainLimit, at least drainAcks, after the last
// delivery: the fixed drain this replaced, which waited that long every
// time (200 ms per run of the demo, whose RTT is 15 ms).
const (
	drainAcks   = 200 * time.Millisecond
	drainStrays = 20 * time.Millisecond
)

// drainLimit is the longest a complete run drains: two maximum RTTs, at
// least drainAcks.
func drainLimit(maxRTT time.Duration) time.Duration { return max(drainAcks, 2*maxRTT) }

// runOnce runs one repetition: agents up, messages released on time and
// after their dependencies, faults injected, until every message is
// delivered, the cell's timeout passes or ctx ends; then what the agents
// and switches recorded is collected and the run's fidelity judged.
// watches keeps the dequeue monitor from one run of the cell to the next;
// the caller closes it (reset).
func runOnce(ctx context.Context, st *lab.State, opt Options, cell *scenario.Cell, run *scenario.Run, watches *dequeueWatches) *results.Run {
	r := &results.Run{Cell: cell.Name, Repetition: run.Repetition, Seed: run.Seed, Bound: run.Bound, Started: time.Now().UTC()}
	ctl := opt.Store.Control(st)
	if err := ctl.ResetStats(); err != nil {
		return failed(r, err)
	}
	m := startMeters(ctl, cell.Config, watches)
	defer m.close()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	agents, err := opt.Agents(runCtx, st, opt.Store, cell.Config, run)
	if err != nil {
		return failed(r, fmt.Errorf("start agents: %w", err))
	}

	x := newExchange(r, agents, run.Messages)
	start := time.Now()
	r.StartMonoNs = monotonicNs()
	faults, undo := injectFaults(runCtx, ctl, start, run.Timeline)
	loopErr := x.run(ctx, start, cell.Config.Timeout, faults)
	if r.Status == results.StatusComplete {
		x.drain(max(drainStrays, cell.Config.MaxRTT), drainLimit(cell.Config.MaxRTT))
	}

	cancel()
	// Faults meant to last until the end of the run end with it, so the
	// next run (and the next cell on a reused lab) starts on a healthy
	// fabric.
	undoErr := undo()
	flows, stopErr := agents.Stop()
	cpu := m.stopCPU()
	r.Flows = flows
	if pc, ok := agents.(PacketCounter); ok {
		r.Packets = pc.Packets()
	}
	r.Duration = time.Since(start)
	hostPorts, err := m.ports(ctl, r)
	loopErr = errors.Join(loopErr, err, undoErr)
	// Links `ftlab link set` slowed run at their new rate.
	st.ApplyRates(r.Ports)
	st.ApplyRates(hostPorts)
	for len(faults) > 0 {
		r.Faults = append(r.Faults, <-faults)
	}
	if err := errors.Join(loopErr, stopErr); err != nil {
		return failed(r, err)
	}
	r.Fidelity = judge(r, hostPorts, m.unmeasured, cell, run, cpu)
	return r
}

// failed marks r failed with err.
func failed(r *results.Run, err error) *results.Run {
	r.Status, r.Error = results.StatusFailed, err.Error()
	return r
}

// monotonicNs is CLOCK_MONOTONIC now, the agents' time base; 0 if unknown.
func monotonicNs() int64 {
	var mono unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &mono) != nil {
		return 0
	}
	return mono.Nano()
}

// meters measure a run besides its agents: the links' real queues (in
// shaped mode) and the machine's CPU.
type meters struct {
	dq *switchd.DequeueWatch
	// unmeasured says why the links' real queues are not measured; a
	// kernel that cannot (no raw tracepoints) still runs, with the verdict
	// saying so.
	unmeasured string
	cpu        *fidelity.Sampler
	cpuStopped bool
}

func startMeters(ctl *switchd.Lab, cfg *scenario.Config, watches *dequeueWatches) *meters {
	m := &meters{cpu: fidelity.NewSampler()}
	if cfg.DataPlane == scenario.Shaped {
		var err error
		if m.dq, err = watches.get(ctl); err != nil {
			m.unmeasured = err.Error()
		}
	}
	m.cpu.Start()
	return m
}

// dequeueWatches keeps one dequeue monitor for the runs of a cell, on one
// lab: each run restarts it from zero (switchd.DequeueWatch.Restart)
// instead of loading it again. A new cell closes it (reset), since its lab
// may have a new data plane.
type dequeueWatches struct {
	w *switchd.DequeueWatch
}

// get returns the watch, restarted, or a new one.
func (d *dequeueWatches) get(ctl *switchd.Lab) (*switchd.DequeueWatch, error) {
	if d.w != nil {
		if err := d.w.Restart(); err == nil {
			return d.w, nil
		}
		d.reset()
	}
	w, err := ctl.WatchDequeues()
	if err != nil {
		return nil, err
	}
	d.w = w
	return w, nil
}

// reset closes the watch, if any.
func (d *dequeueWatches) reset() {
	if d.w != nil {
		_ = d.w.Close()
		d.w = nil
	}
}

// stopCPU ends CPU sampling and returns what it found.
func (m *meters) stopCPU() *fidelity.CPUStats {
	if m.cpuStopped {
		return nil
	}
	m.cpuStopped = true
	return m.cpu.Stop()
}

// ports reads the switch ports' counters once the fabric has settled into
// r.Ports, with the real queues' figures where they were measured, and
// returns the hosts' egress ports as the dequeue monitor saw them.
func (m *meters) ports(ctl *switchd.Lab, r *results.Run) (hosts []switchd.PortStats, err error) {
	ports, err := settledStats(ctl)
	if err != nil {
		return nil, err
	}
	r.Ports = ports
	if m.dq == nil {
		return nil, nil
	}
	fillErr := m.dq.Fill(ports)
	hosts, err = m.dq.HostPorts()
	return hosts, errors.Join(fillErr, err)
}

// close stops what the run measured itself; the dequeue watch is the
// cell's (dequeueWatches).
func (m *meters) close() { m.stopCPU() }

// Settling: how long settledStats waits at most, and how often it looks.
const (
	maxSettle   = 3 * time.Second
	settleEvery = 20 * time.Millisecond
)

// settledStats reads the switch ports' counters once the fabric has
// drained after the agents stopped: with packets still queued in a slow
// link's qdisc, a packet its sender counted and its receiver had not yet
// seen would look lost. It waits until no qdisc holds a packet twice in a
// row (the second look also lets a packet between a dequeue and the
// peer's ingress arrive), at most maxSettle, and returns the last read.
func settledStats(ctl *switchd.Lab) ([]switchd.PortStats, error) {
	deadline := time.Now().Add(maxSettle)
	empty := 0
	for {
		ports, err := ctl.Stats()
		if err != nil {
			return nil, err
		}
		queued := false
		for _, p := range ports {
			if p.Qdisc != nil && p.Qdisc.BacklogPkts > 0 {
				queued = true
				break
			}
		}
		if queued {
			empty = 0
		} else if empty++; empty == 2 {
			return ports, nil
		}
		if time.Now().After(deadline) {
			return ports, nil
		}
		time.Sleep(settleEvery)
	}
}

// injectFaults applies the timeline from start on, in the background
// until ctx ends; the returned channel gets each action as it is applied
// and holds them all without blocking.
func injectFaults(ctx context.Context, ctl *switchd.Lab, start time.Time, timeline []scenario.Action) (chan results.FaultEvent, func() error) {
	in := &injector{ctl: ctl, failed: map[int]bool{}}
	faults := make(chan results.FaultEvent, len(timeline))
	done := make(chan struct{})
	go func() {
		defer close(done)
		in.runTimeline(ctx, start, timeline, func(ev results.FaultEvent) { faults <- ev })
	}()
	return faults, func() error {
		<-done
		return in.undo(timeline)
	}
}

// exchange is the messages of one run between the runner and the agents:
// it releases each message when it is due, sends it, and records what the
// agents report about it.
type exchange struct {
	r         *results.Run
	agents    Agents
	messages  []workload.Message
	msgs      []*results.Message
	waiting   []int         // per message: dependencies not yet delivered
	dependent map[int][]int // message -> the messages waiting for it
	delivered int

	start  time.Time
	due    chan int // messages to release now
	timers []*time.Timer
}

func newExchange(r *results.Run, agents Agents, messages []workload.Message) *exchange {
	x := &exchange{r: r, agents: agents, messages: messages, msgs: make([]*results.Message, len(messages)),
		waiting: make([]int, len(messages)), dependent: map[int][]int{}, due: make(chan int, len(messages))}
	for i, m := range messages {
		x.msgs[i] = &results.Message{Message: m}
		x.waiting[i] = len(m.After)
		for _, d := range m.After {
			x.dependent[d] = append(x.dependent[d], i)
		}
	}
	r.Messages = x.msgs
	return x
}

// schedule makes message i due at its start offset, now if that passed.
func (x *exchange) schedule(i int) {
	wait := time.Until(x.start.Add(x.messages[i].Start))
	if wait <= 0 {
		x.due <- i
		return
	}
	x.timers = append(x.timers, time.AfterFunc(wait, func() { x.due <- i }))
}

// run releases the messages without dependencies at their start offsets
// and the others when the last of their dependencies is delivered (not
// before their own start offset), until every message is delivered
// (status complete), timeout passes (timeout) or ctx ends (interrupted),
// recording the faults as they are applied. An error ends the run: a
// message that could not be sent, or an agent that failed.
func (x *exchange) run(ctx context.Context, start time.Time, timeout time.Duration, faults <-chan results.FaultEvent) error {
	x.start = start
	defer func() {
		for _, t := range x.timers {
			t.Stop()
		}
	}()
	for i := range x.msgs {
		if x.waiting[i] == 0 {
			x.schedule(i)
		}
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for x.delivered < len(x.msgs) {
		select {
		case <-ctx.Done():
			x.r.Status = results.StatusInterrupted
			return nil
		case <-deadline.C:
			x.r.Status = results.StatusTimeout
			return nil
		case ev := <-faults:
			x.r.Faults = append(x.r.Faults, ev)
		case i := <-x.due:
			x.msgs[i].Released = time.Since(start)
			if err := x.agents.Send(x.messages[i]); err != nil {
				return fmt.Errorf("send message %d: %w", i, err)
			}
		case ev := <-x.agents.Events():
			if err := x.take(ev); err != nil {
				return err
			}
		}
	}
	x.r.Status = results.StatusComplete
	for _, m := range x.msgs {
		x.r.CCT = max(x.r.CCT, m.Done)
	}
	return nil
}

// take records one agent event; a delivery makes the messages that waited
// for it due.
func (x *exchange) take(ev AgentEvent) error {
	switch ev.Kind {
	case EventError:
		return ev.Err
	case EventSent:
		x.sent(ev)
	case EventReceived:
		if ev.Msg < 0 || ev.Msg >= len(x.msgs) || x.msgs[ev.Msg].Received != nil {
			return nil
		}
		m := x.msgs[ev.Msg]
		m.Received, m.Done = ev.Received, time.Since(x.start)
		x.delivered++
		for _, d := range x.dependent[ev.Msg] {
			if x.waiting[d]--; x.waiting[d] == 0 {
				x.schedule(d)
			}
		}
	}
	return nil
}

func (x *exchange) sent(ev AgentEvent) {
	if ev.Msg >= 0 && ev.Msg < len(x.msgs) {
		x.msgs[ev.Msg].Sent = ev.Sent
	}
}

// drain takes the senders' last reports after every message was
// delivered: until each message's sender reported it acknowledged and
// strays more passed, or limit passed.
func (x *exchange) drain(strays, limit time.Duration) {
	end := time.NewTimer(limit)
	defer end.Stop()
	var settled <-chan time.Time
	if x.allSent() {
		settled = time.After(strays)
	}
	for {
		select {
		case ev := <-x.agents.Events():
			if ev.Kind == EventSent {
				x.sent(ev)
				if settled == nil && x.allSent() {
					settled = time.After(strays)
				}
			}
		case <-settled:
			return
		case <-end.C:
			return
		}
	}
}

// allSent reports whether every message's sender has reported it
// acknowledged.
func (x *exchange) allSent() bool {
	for _, m := range x.msgs {
		if m.Sent == nil {
			return false
		}
	}
	return true
}
