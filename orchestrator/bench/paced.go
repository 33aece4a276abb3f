package bench

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/ftlab/ftlab/hostagent/agent"
	"github.com/ftlab/ftlab/hostagent/control"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/orchestrator/fidelity"
	"github.com/ftlab/ftlab/switchd"
)

// The paced measurement: every host of a k=4 fat tree in shaped mode
// sends one message to its neighbour under the same edge switch, paced at
// the link rate: every link carries at most one flow each way, so nothing
// queues in the fabric and the time is the agents' (and each packet's two
// hops, as the bare UDP loop's). The links run a tenth faster than the
// pacing, for the ACKs of the neighbour's flow that share each host's
// uplink with its own DATA.
const (
	pacedRate     = 40_000_000
	pacedHeadroom = 1.1
	pacedBuffer   = 256 << 10
	pacedScheme   = "rss+pfld"
)

// PacedResult is one paced run of agents on every host of a lab.
type PacedResult struct {
	Hosts int
	// Data counts DATA packets sent, retransmissions included;
	// Datagrams everything the agents sent (DATA, ACKs, probes, NACKs).
	Data, Datagrams int
	// Wall is from the first send to the last acknowledgement; CPU is
	// this process's and the ksoftirqd threads' time meanwhile.
	Wall, CPU time.Duration
	// Pacing sums every flow's pacing as the fidelity verdict does.
	Pacing fidelity.PacingInput

	// Loops are the event loops' counters: the pool's, or every agent's
	// own loop's.
	Loops []control.LoopStats

	sent  []transport.MessageRecord
	flows []transport.FlowRecord
}

// DatagramsPerCore is datagrams sent per second of CPU time.
func (r PacedResult) DatagramsPerCore() float64 { return float64(r.Datagrams) / r.CPU.Seconds() }

// LoopWait is the time the event loops' threads spent runnable but
// waiting for a CPU, summed.
func (r PacedResult) LoopWait() time.Duration {
	var ns int64
	for _, l := range r.Loops {
		ns += l.WaitNs
	}
	return time.Duration(ns)
}

// CPUPerPacket is the CPU time per DATA packet (its ACK, both agents'
// work and the fabric's forwarding included).
func (r PacedResult) CPUPerPacket() time.Duration { return r.CPU / time.Duration(max(r.Data, 1)) }

// pacedTopology is a k=4 fat tree whose links all run at rate.
func pacedTopology(rate uint64) (*topology.Topology, error) {
	rate = uint64(float64(rate) * pacedHeadroom)
	topo, err := topology.NewFatTree(4)
	if err != nil {
		return nil, err
	}
	for i := range topo.Links {
		l := &topo.Links[i]
		for _, d := range []*topology.LinkParams{&l.Up, &l.Down} {
			d.RateBps, d.BufferBytes, d.ECNBytes = rate, pacedBuffer, 0
		}
	}
	return topo, nil
}

// pacedLab builds the shaped k=4 lab of the paced measurement in s.
func pacedLab(ctx context.Context, s *scope, rate uint64) (*topology.Topology, error) {
	topo, err := pacedTopology(rate)
	if err != nil {
		return nil, err
	}
	if _, err := buildLab(ctx, s, topo, switchd.Config{Mode: switchd.ModeShaped, EdgePolicy: "ecmp", Seed: 1}); err != nil {
		return nil, err
	}
	return topo, nil
}

// PacedRuntime says how the agents of a paced run are run.
type PacedRuntime struct {
	// PerHost gives every agent an event loop of its own; otherwise they
	// share one per core (agent.Pool), as the runner runs them.
	PerHost bool
	// Quantum overrides the loops' batching quantum (0: the agents'
	// default, a share of a packet time).
	Quantum time.Duration
}

func (rt PacedRuntime) String() string {
	s := fmt.Sprintf("one loop per core (%d)", runtime.NumCPU())
	if rt.PerHost {
		s = "one loop per host"
	}
	switch {
	case rt.Quantum == time.Nanosecond:
		s += ", no batching"
	case rt.Quantum > 0:
		s += fmt.Sprintf(", quantum %v", rt.Quantum)
	}
	return s
}

// PacedAgents starts an agent on every host of topo (built in s), lets
// each send one message lasting d at rate to its neighbour under the same
// edge switch,
// and measures DATA packets against CPU time until the last one is
// acknowledged.
func PacedAgents(ctx context.Context, s *scope, topo *topology.Topology, rate uint64, d time.Duration, rt PacedRuntime) (res PacedResult, err error) {
	hosts := topo.Hosts()
	var pool *agent.Pool
	threads := len(hosts)
	if !rt.PerHost {
		if pool, err = agent.NewPool(runtime.NumCPU()); err != nil {
			return res, err
		}
		defer pool.Close()
		threads = pool.Len()
	}
	// As the runner does: a P for every loop thread besides the cores.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads + runtime.NumCPU()))
	set, err := startAgentSet(ctx, len(hosts), func(i int) agent.Options {
		o := agent.Options{Namespace: s.name(hosts[i].Name), Addr: hosts[i].Addr}
		if pool != nil {
			o.Loop = pool.Loop()
		}
		return o
	}, control.Configure{Scheme: pacedScheme, Transport: control.Transport{
		HostParams: transport.HostParams{Pacing: rate, MinRTO: 50 * time.Millisecond, InitialRTO: 50 * time.Millisecond},
		QuantumNs:  int64(rt.Quantum),
	}})
	if err != nil {
		return res, err
	}
	defer set.stop()
	bytes := uint64(float64(rate) * d.Seconds() / 8)
	c0 := sampleCPU()
	for i := range hosts {
		dst := hosts[i^1] // hosts are listed edge by edge, two per edge at k=4
		if err := set.handles[i].Do(&control.Send{Msg: int64(i), To: dst.Addr.String(), Bytes: bytes}); err != nil {
			return res, err
		}
	}
	res.Hosts = len(hosts)
	first, last := int64(0), int64(0)
	for acked, flows := 0, 0; acked < len(hosts) || flows < len(hosts); {
		he, err := set.next(ctx, time.Minute)
		if err != nil {
			return res, err
		}
		switch e := he.ev.(type) {
		case *control.Sent:
			acked++
			res.sent = append(res.sent, e.Record)
			res.Data += e.Record.Packets + e.Record.Retransmissions
			if first == 0 || e.Record.StartNs < first {
				first = e.Record.StartNs
			}
			last = max(last, e.Record.StartNs+e.Record.FCTNs)
			if acked == len(hosts) {
				use := c0.to(sampleCPU())
				res.CPU = use.cpu
			}
		case *control.Flow: // follows its Sent event
			flows++
			res.flows = append(res.flows, e.Record)
		}
	}
	res.Wall = time.Duration(last - first)
	res.Pacing = fidelity.Pacing(res.flows)
	for _, h := range set.handles {
		if err := h.Do(&control.StatsQuery{}); err != nil {
			return res, err
		}
	}
	for stats := 0; stats < len(hosts); {
		he, err := set.next(ctx, 5*time.Second)
		if err != nil {
			return res, err
		}
		if e, ok := he.ev.(*control.Stats); ok {
			stats++
			res.Datagrams += int(e.Conn.TxDatagrams)
			if pool == nil {
				res.Loops = append(res.Loops, e.Loop)
			}
		}
	}
	if pool != nil {
		for _, ls := range pool.Stats() {
			res.Loops = append(res.Loops, control.LoopStats{Iterations: ls.Iterations, Sleeps: ls.Sleeps, Holdoffs: ls.Holdoffs,
				Timers: ls.Timers, Reads: ls.Reads, LateMaxNs: ls.LateMaxNs, CPUNs: ls.CPUNs, WaitNs: ls.WaitNs})
		}
	}
	return res, nil
}

// hostEvent is an event and the index of the agent that sent it.
type hostEvent struct {
	host int
	ev   control.Event
}

// agentSet is a set of in-process agents whose events arrive on one
// channel.
type agentSet struct {
	handles []*agent.Handle
	events  chan hostEvent
	cancel  context.CancelFunc
}

// startAgentSet starts n agents with the options opts(i) gives, sends
// each the configuration (named after its index) and waits until all are
// configured.
func startAgentSet(ctx context.Context, n int, opts func(i int) agent.Options, cfg control.Configure) (*agentSet, error) {
	ctx, cancel := context.WithCancel(ctx)
	set := &agentSet{events: make(chan hostEvent, 4096), cancel: cancel}
	for i := range n {
		h, err := agent.Start(ctx, opts(i))
		if err != nil {
			set.stop()
			return nil, err
		}
		set.handles = append(set.handles, h)
		go func() {
			for ev := range h.Events() {
				select {
				case set.events <- hostEvent{i, ev}:
				case <-ctx.Done():
				}
			}
		}()
		c := cfg
		c.Name = fmt.Sprint("agent", i)
		if err := h.Do(&c); err != nil {
			set.stop()
			return nil, err
		}
	}
	for configured := 0; configured < n; {
		he, err := set.next(ctx, 10*time.Second)
		if err != nil {
			set.stop()
			return nil, err
		}
		if _, ok := he.ev.(*control.Configured); ok {
			configured++
		}
	}
	return set, nil
}

// next returns the next event, failing on an error event.
func (s *agentSet) next(ctx context.Context, d time.Duration) (hostEvent, error) {
	select {
	case he := <-s.events:
		if e, ok := he.ev.(*control.Error); ok {
			return he, fmt.Errorf("agent %d: %s", he.host, e.Error)
		}
		return he, nil
	case <-ctx.Done():
		return hostEvent{}, ctx.Err()
	case <-time.After(d):
		return hostEvent{}, fmt.Errorf("no agent event in %v", d)
	}
}

// stop stops every agent and waits for them.
func (s *agentSet) stop() {
	for _, h := range s.handles {
		_ = h.Stop()
	}
	for _, h := range s.handles {
		_ = h.Wait()
	}
	s.cancel()
}
