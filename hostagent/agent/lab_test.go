package agent_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/ftlab/ftlab/hostagent/agent"
	"github.com/ftlab/ftlab/hostagent/control"
	"github.com/ftlab/ftlab/internal/bpffs"
	"github.com/ftlab/ftlab/internal/testlab"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/orchestrator/fabric"
	"github.com/ftlab/ftlab/switchd"
	"github.com/ftlab/ftlab/switchd/routing"
)

// lab is a k=4 fat tree with the eBPF switch.
type lab struct {
	topo *topology.Topology
	name func(string) string
	ctl  *switchd.Lab
}

func newLab(t testing.TB, cfg switchd.Config, edit ...func(*topology.Topology)) *lab {
	t.Helper()
	testlab.RequireRoot(t)
	topo := testlab.Topology(t, "fattree-k4")
	for _, e := range edit {
		e(topo)
	}
	l := &lab{topo: topo, name: testlab.Namer(testlab.Prefix(t))}
	cfg = cfg.WithDefaults()
	pinRoot := filepath.Join(t.TempDir(), "bpf")
	if err := bpffs.Mount(pinRoot); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bpffs.Unmount(pinRoot) })
	start := time.Now()
	if _, err := fabric.Build(context.Background(), topo, fabric.Options{Namespace: l.name}); err != nil {
		t.Fatal(err)
	}
	tables, err := routing.Compute(topo, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := switchd.InstallBPF(context.Background(), topo, cfg, tables, l.name, pinRoot); err != nil {
		t.Fatal(err)
	}
	t.Logf("k=4 lab (%s) up in %v", cfg.Mode, time.Since(start).Round(time.Millisecond))
	l.ctl = &switchd.Lab{Topo: topo, Config: cfg, Namespace: l.name, PinRoot: pinRoot}
	return l
}

func (l *lab) addr(t testing.TB, host string) string {
	t.Helper()
	n, ok := l.topo.Node(host)
	if !ok {
		t.Fatalf("no host %s", host)
	}
	return n.Addr.String()
}

// hostEvent is an event and the host it came from.
type hostEvent struct {
	host string
	ev   control.Event
}

// agents are in-process agents in some of a lab's hosts.
type agents struct {
	t      testing.TB
	byHost map[string]*agent.Handle
	events chan hostEvent
}

// startAgents starts an agent in each host and configures it. The agents
// share a loop per core, with a P for each loop on top of the cores, as
// ftlab's runner runs them (orchestrator/runner.AgentRuntime): a loop per
// host, each a locked thread, made timers late by milliseconds on a
// loaded 2-core machine, and the RTOs that followed were the machine's,
// not the fabric's.
func (l *lab) startAgents(t testing.TB, hosts []string, cfg control.Configure) *agents {
	t.Helper()
	as := &agents{t: t, byHost: map[string]*agent.Handle{}, events: make(chan hostEvent, 4096)}
	pool, err := agent.NewPool(min(runtime.NumCPU(), len(hosts)))
	if err != nil {
		t.Fatal(err)
	}
	prev := runtime.GOMAXPROCS(pool.Len() + runtime.NumCPU())
	t.Cleanup(func() { // after the agents' cleanups (last in, first out)
		if err := pool.Close(); err != nil {
			t.Error(err)
		}
		runtime.GOMAXPROCS(prev)
	})
	for _, h := range hosts {
		if as.byHost[h] != nil {
			continue
		}
		ha, err := agent.Start(context.Background(), agent.Options{Namespace: l.name(h), Loop: pool.Loop()})
		if err != nil {
			t.Fatalf("%s: %v", h, err)
		}
		t.Cleanup(func() {
			_ = ha.Stop()
			_ = ha.Wait()
		})
		as.byHost[h] = ha
		go func() {
			for ev := range ha.Events() {
				as.events <- hostEvent{h, ev}
			}
		}()
		c := cfg
		c.Name = h
		if err := ha.Do(&c); err != nil {
			t.Fatal(err)
		}
	}
	// Every agent must be configured before anyone sends.
	for range as.byHost {
		he := as.next(5 * time.Second)
		if _, ok := he.ev.(*control.Configured); !ok {
			t.Fatalf("%s: %T %+v, want configured", he.host, he.ev, he.ev)
		}
	}
	return as
}

func (as *agents) next(timeout time.Duration) hostEvent {
	as.t.Helper()
	select {
	case he := <-as.events:
		return he
	case <-time.After(timeout):
		as.t.Fatalf("no event in %v", timeout)
	}
	return hostEvent{}
}

// transfer is one message's outcome.
type transfer struct {
	src, dst string
	sent     *control.Sent
	flow     *control.Flow
	recv     *control.Received
}

// run sends the messages (src, dst, bytes) at once and waits until every
// one was acknowledged, its flow reported and its delivery reported.
func (as *agents) run(l *lab, msgs []transfer, bytes uint64, timeout time.Duration) []*transfer {
	t := as.t
	t.Helper()
	out := make([]*transfer, len(msgs))
	for i := range msgs {
		m := msgs[i]
		out[i] = &m
		if err := as.byHost[m.src].Do(&control.Send{Msg: int64(i), To: l.addr(t, m.dst), Bytes: bytes}); err != nil {
			t.Fatal(err)
		}
	}
	keys := map[control.MessageKey]int{}
	var early []*control.Received
	left := 3 * len(msgs)
	deadline := time.Now().Add(timeout)
	for left > 0 {
		he := as.next(time.Until(deadline))
		switch e := he.ev.(type) {
		case *control.Sent:
			out[e.Msg].sent = e
			keys[e.Key(l.addr(t, he.host))] = int(e.Msg)
			left--
		case *control.Flow:
			out[e.Msg].flow = e
			left--
		case *control.Received:
			early = append(early, e)
			left--
		case *control.Error:
			t.Fatalf("%s: error event: %s (input %q)", he.host, e.Error, e.Input)
		}
	}
	for _, r := range early {
		i, ok := keys[r.Key()]
		if !ok {
			t.Fatalf("delivery %+v matches no sent message", r.Key())
		}
		out[i].recv = r
	}
	return out
}

// stop stops every agent and returns their final stats.
func (as *agents) stop() map[string]*control.Stats {
	t := as.t
	t.Helper()
	for _, h := range as.byHost {
		if err := h.Stop(); err != nil {
			t.Fatal(err)
		}
	}
	final := map[string]*control.Stats{}
	for len(final) < len(as.byHost) {
		he := as.next(5 * time.Second)
		if s, ok := he.ev.(*control.Stats); ok && s.Final {
			final[he.host] = s
		}
	}
	for h, ha := range as.byHost {
		if err := ha.Wait(); err != nil {
			t.Errorf("%s: %v", h, err)
		}
	}
	return final
}

func mbps(bytes int, ns int64) string {
	if ns <= 0 {
		return "?"
	}
	return fmt.Sprintf("%.0f Mbit/s", float64(bytes)*8e3/float64(ns))
}
