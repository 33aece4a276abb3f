package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/ftlab/ftlab/hostagent/agent"
	"github.com/ftlab/ftlab/hostagent/control"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/orchestrator/results"
	"github.com/ftlab/ftlab/orchestrator/scenario"
	"github.com/ftlab/ftlab/orchestrator/workload"
	"github.com/ftlab/ftlab/switchd"
)

// agentStartTimeout bounds how long an agent may take to open its sockets
// and take its configuration.
const agentStartTimeout = 10 * time.Second

// InProcessAgents runs one host agent per host of the lab inside this
// process, on one event loop per core (agent.Pool): each serves the
// control protocol (hostagent/control) over a pair of pipes, with its
// sockets opened in its host's namespace (a socket keeps the namespace it
// was made in, so one loop thread polls the sockets of many hosts). The
// runner speaks the same JSON lines to it as it would to a hostagent
// process.
func InProcessAgents(ctx context.Context, st *lab.State, store *lab.Store, cfg *scenario.Config, run *scenario.Run) (Agents, error) {
	return AgentRuntime{}.Start(ctx, st, store, cfg, run)
}

// AgentRuntime says how in-process agents run.
type AgentRuntime struct {
	// Loops is the number of event loops the agents share, a pool of
	// their own. Default: the process's shared loops, one per core, which
	// the agents of every run going at the same time share (loops.go).
	Loops int
	// PerHost gives every agent an event loop (and OS thread) of its own,
	// as agent processes have: the way in-process agents ran before they
	// shared loops, kept for comparison.
	PerHost bool
}

// Start is an AgentStarter with this runtime.
func (rt AgentRuntime) Start(ctx context.Context, st *lab.State, store *lab.Store, cfg *scenario.Config, run *scenario.Run) (Agents, error) {
	conf, err := configureOf(cfg, run.Seed)
	if err != nil {
		return nil, err
	}
	hosts := len(st.Topology.Hosts())
	var (
		pool    *agent.Pool
		release func() error
	)
	switch {
	case rt.PerHost:
		procs := raiseProcs(hosts)
		release = func() error { procs(); return nil }
	case rt.Loops > 0:
		if pool, err = agent.NewPool(max(1, min(rt.Loops, hosts))); err != nil {
			return nil, fmt.Errorf("agent loops: %w", err)
		}
		own, procs := pool, raiseProcs(pool.Len())
		release = func() error { defer procs(); return own.Close() }
	default:
		if pool, release, err = leaseLoops(); err != nil {
			return nil, fmt.Errorf("agent loops: %w", err)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	a := &inproc{release: release, topo: st.Topology,
		cancel: cancel, events: make(chan AgentEvent, 1024), quit: make(chan struct{}), byName: map[string]*inprocAgent{},
		keyToMsg: map[control.MessageKey]int{}, pending: map[control.MessageKey]*transport.ReceiveRecord{},
	}
	for _, h := range st.Topology.Hosts() {
		opts := agent.Options{Namespace: store.NamespaceName(st.Name, h.Name), Addr: h.Addr, Mark: switchd.HostMark(st.Topology, st.PinRoot, h.Name)}
		if pool != nil {
			opts.Loop = pool.Loop()
		}
		ag, err := a.start(ctx, h, opts, conf)
		if err != nil {
			_, _ = a.Stop()
			return nil, fmt.Errorf("agent %s: %w", h.Name, err)
		}
		a.agents = append(a.agents, ag)
		a.byName[h.Name] = ag
	}
	for _, ag := range a.agents {
		go a.read(ag)
	}
	return a, nil
}

type inproc struct {
	cancel context.CancelFunc
	agents []*inprocAgent
	byName map[string]*inprocAgent
	events chan AgentEvent
	quit   chan struct{} // closed by Stop: events are no longer read
	topo   *topology.Topology

	release func() error // gives back the loops (and the Ps raised for them); Stop calls it

	mu       sync.Mutex
	keyToMsg map[control.MessageKey]int                      // sender's flow/msg -> workload message
	pending  map[control.MessageKey]*transport.ReceiveRecord // deliveries whose sender has not reported yet
	flows    []transport.FlowRecord
	counts   results.PacketCounts // summed from the agents' final stats
	stopped  bool
}

type inprocAgent struct {
	node   *topology.Node
	addr   string
	cmdW   *io.PipeWriter
	evR    *control.LineReader
	done   chan error // Serve's result
	wmu    sync.Mutex
	closed chan struct{} // the event reader finished
}

func (a *inproc) start(ctx context.Context, h *topology.Node, opts agent.Options, conf *control.Configure) (*inprocAgent, error) {
	cmdR, cmdW := io.Pipe()
	evR, evW := io.Pipe()
	ag := &inprocAgent{node: h, addr: h.Addr.String(), cmdW: cmdW, evR: control.NewLineReader(evR, control.MaxEventLine),
		done: make(chan error, 1), closed: make(chan struct{})}
	go func() {
		err := agent.Serve(ctx, cmdR, evW, opts)
		evW.CloseWithError(io.EOF)
		ag.done <- err
	}()
	deadline := time.AfterFunc(agentStartTimeout, func() { evR.CloseWithError(errors.New("agent did not start in time")) })
	defer deadline.Stop()
	if _, err := ag.expect(control.EvReady); err != nil {
		return nil, err
	}
	c := *conf
	c.Name = h.Name
	setDelayLine(&c.Transport, a.topo, h)
	if err := ag.command(&c); err != nil {
		return nil, err
	}
	if _, err := ag.expect(control.EvConfigured); err != nil {
		return nil, err
	}
	return ag, nil
}

// setDelayLine turns host h's delay line on when the fabric has link
// delays or jitter, with its access link's (the direction towards it):
// the switches add every other link's to the packets (docs/delay.md).
func setDelayLine(t *control.Transport, topo *topology.Topology, h *topology.Node) {
	for i := range topo.Links {
		l := &topo.Links[i]
		if l.Up.Delay != 0 || l.Down.Delay != 0 || l.Up.Jitter != 0 || l.Down.Jitter != 0 {
			t.DelayLine = true
			break
		}
	}
	if !t.DelayLine || len(h.Ports) == 0 {
		return
	}
	p := h.Ports[0]
	in := topo.Links[p.Link].Params(1 - p.Side)
	t.AccessDelayNs, t.AccessJitterNs = int64(in.Delay), int64(in.Jitter)
}

// expect reads events until one named want, failing on an error event.
func (ag *inprocAgent) expect(want string) (control.Event, error) {
	for {
		line, err := ag.evR.Next()
		if err != nil {
			return nil, err
		}
		ev, err := control.DecodeEvent(line)
		if err != nil {
			return nil, err
		}
		if e, ok := ev.(*control.Error); ok {
			return nil, fmt.Errorf("%s", e.Error)
		}
		if ev.EventName() == want {
			return ev, nil
		}
	}
}

func (ag *inprocAgent) command(c control.Command) error {
	ag.wmu.Lock()
	defer ag.wmu.Unlock()
	return control.WriteCommand(ag.cmdW, c)
}

// read turns one agent's events into AgentEvents. Deliveries are matched
// to workload messages by (sender, flow, message): a delivery can be
// reported before its sender's acknowledgement, so it waits until the
// sender's event names the message.
func (a *inproc) read(ag *inprocAgent) {
	defer close(ag.closed)
	for {
		line, err := ag.evR.Next()
		if err != nil {
			a.mu.Lock()
			stopped := a.stopped
			a.mu.Unlock()
			if !stopped {
				a.emit(AgentEvent{Kind: EventError, Err: fmt.Errorf("agent %s stopped: %v", ag.node.Name, err)})
			}
			return
		}
		ev, err := control.DecodeEvent(line)
		if err != nil {
			a.emit(AgentEvent{Kind: EventError, Err: fmt.Errorf("agent %s: %w", ag.node.Name, err)})
			continue
		}
		switch e := ev.(type) {
		case *control.Sent:
			key := e.Key(ag.addr)
			rec := e.Record
			a.mu.Lock()
			a.keyToMsg[key] = int(e.Msg)
			got := a.pending[key]
			delete(a.pending, key)
			a.mu.Unlock()
			if got != nil {
				a.emit(AgentEvent{Kind: EventReceived, Msg: int(e.Msg), Received: got})
			}
			a.emit(AgentEvent{Kind: EventSent, Msg: int(e.Msg), Sent: &rec})
		case *control.Received:
			key := e.Key()
			rec := e.Record
			a.mu.Lock()
			msg, ok := a.keyToMsg[key]
			if !ok {
				a.pending[key] = &rec
			}
			a.mu.Unlock()
			if ok {
				a.emit(AgentEvent{Kind: EventReceived, Msg: msg, Received: &rec})
			}
		case *control.Flow:
			a.mu.Lock()
			a.flows = append(a.flows, e.Record)
			a.mu.Unlock()
		case *control.Stats:
			if e.Final {
				a.mu.Lock()
				a.counts.Add(packetCountsOf(e))
				a.mu.Unlock()
			}
		case *control.Error:
			a.emit(AgentEvent{Kind: EventError, Err: fmt.Errorf("agent %s: %s", ag.node.Name, e.Error)})
		}
	}
}

func (a *inproc) emit(ev AgentEvent) {
	select {
	case a.events <- ev:
	case <-a.quit: // the run is over: nobody reads any more
	}
}

func (a *inproc) Events() <-chan AgentEvent { return a.events }

func (a *inproc) Send(m workload.Message) error {
	src, ok := a.byName[m.Src]
	if !ok {
		return fmt.Errorf("no agent on %s", m.Src)
	}
	dst, ok := a.byName[m.Dst]
	if !ok {
		return fmt.Errorf("no agent on %s", m.Dst)
	}
	return src.command(&control.Send{Msg: int64(m.ID), To: dst.addr, Bytes: m.Bytes})
}

// Stop ends every agent (stop, then end of input) and returns the flow
// records they reported.
func (a *inproc) Stop() ([]transport.FlowRecord, error) {
	a.mu.Lock()
	a.stopped = true
	a.mu.Unlock()
	close(a.quit)
	var errs []error
	for _, ag := range a.agents {
		_ = ag.command(&control.Stop{})
		_ = ag.cmdW.Close()
	}
	timeout := time.After(5 * time.Second)
	for _, ag := range a.agents {
		select {
		case err := <-ag.done:
			if err != nil && !errors.Is(err, context.Canceled) {
				errs = append(errs, fmt.Errorf("agent %s: %w", ag.node.Name, err))
			}
		case <-timeout:
			errs = append(errs, fmt.Errorf("agent %s did not stop", ag.node.Name))
		}
		select {
		case <-ag.closed:
		case <-time.After(time.Second):
		}
	}
	a.cancel()
	if err := a.release(); err != nil {
		errs = append(errs, fmt.Errorf("agent loops: %w", err))
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.flows, errors.Join(errs...)
}

// Packets returns the agents' packet counts, summed from the final stats
// each reported as it stopped; call it after Stop.
func (a *inproc) Packets() *results.PacketCounts {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.counts
	return &c
}

// configureOf is the configure command for a cell: its transport scheme
// and congestion control with the cell's parameter blocks, and the host
// settings.
func configureOf(c *scenario.Config, seed uint64) (*control.Configure, error) {
	p, cp := c.Params, c.CCBlocks // the blocks are the cell's, already resolved and checked
	host := c.Host
	if t := c.Topo(); host.Pacing == 0 && len(t.Hosts()) > 0 {
		h := t.Hosts()[0]
		host.Pacing = t.Links[h.Ports[0].Link].Up.RateBps // line rate
	}
	conf := &control.Configure{
		Scheme: string(c.Transport), Params: &p, CC: string(c.CC), CCParams: &cp,
		Transport: control.Transport{
			HostParams: host, BaseRTTNs: int64(c.BaseRTT), MaxRTTNs: int64(c.MaxRTT), MTU: c.Fabric().MTU, Seed: seed,
		},
	}
	if err := conf.Transport.Validate(); err != nil {
		return nil, fmt.Errorf("transport settings: %w", err)
	}
	return conf, nil
}
