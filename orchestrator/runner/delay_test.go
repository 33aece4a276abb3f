package runner

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ftlab/ftlab/hostagent/agent"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/hostagent/wire"
	"github.com/ftlab/ftlab/internal/testlab"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/orchestrator/fidelity"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/orchestrator/results"
	"github.com/ftlab/ftlab/orchestrator/scenario"
	"github.com/ftlab/ftlab/switchd"
)

// TestDelayConstantsAgree: the switches (which cannot import the agents)
// stamp packets to the agents' port at the header's delay words.
func TestDelayConstantsAgree(t *testing.T) {
	if switchd.DefaultAgentPort != agent.DefaultPort {
		t.Errorf("switchd stamps port %d, agents listen on %d", switchd.DefaultAgentPort, agent.DefaultPort)
	}
	if wire.DelayOff != 28 || wire.JitterOff != 32 || wire.Version != 2 {
		t.Errorf("wire's delay words at %d and %d, version %d: bpf/c/delay.h has 28, 32 and 2", wire.DelayOff, wire.JitterOff, wire.Version)
	}
}

// recordingAgents keeps the flow records the in-process agents return.
type recordingAgents struct {
	Agents
	mu    *sync.Mutex
	flows *[]transport.FlowRecord
}

func (r recordingAgents) Stop() ([]transport.FlowRecord, error) {
	f, err := r.Agents.Stop()
	r.mu.Lock()
	*r.flows = append(*r.flows, f...)
	r.mu.Unlock()
	return f, err
}

// delayHosts and delayMatrix: three messages on paths of 6, 2 and 4
// links that share no link, so nothing queues behind another flow.
const (
	delayHosts  = "[h0-0-0, h1-0-0, h2-0-0, h2-0-1, h3-0-0, h3-1-0]"
	delayMatrix = `- [0, 65536, 0, 0, 0, 0]
- [0, 0, 0, 0, 0, 0]
- [0, 0, 0, 65536, 0, 0]
- [0, 0, 0, 0, 0, 0]
- [0, 0, 0, 0, 0, 65536]
- [0, 0, 0, 0, 0, 0]
`
)

// runDelay runs the three messages on a real k=4 lab whose links all
// have the given delay and returns each flow's minimum RTT by (source,
// destination address) and the run's results.
func runDelay(t *testing.T, delay time.Duration) (map[[2]string]time.Duration, *results.Run) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "three.matrix.yaml"), []byte(delayMatrix), 0o644); err != nil {
		t.Fatal(err)
	}
	src := `name: zz-delay
topology: {kind: fattree, k: 4, links: {rate: 5Mbit, buffer: 64KiB, delay: ` + delay.String() + `}}
workload: {kind: all-to-all-v, matrix: three.matrix.yaml, hosts: ` + delayHosts + `}
host: {window: 16KiB}
timeout: 60s
`
	sc, err := scenario.Parse(filepath.Join(dir, "zz-delay.yaml"), []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var flows []transport.FlowRecord
	opt := Options{
		Store:       &lab.Store{Dir: t.TempDir(), Prefix: testlab.Prefix(t)},
		ResultsRoot: t.TempDir(),
		Agents: func(ctx context.Context, st *lab.State, store *lab.Store, cfg *scenario.Config, run *scenario.Run) (Agents, error) {
			a, err := InProcessAgents(ctx, st, store, cfg, run)
			if err != nil {
				return nil, err
			}
			return recordingAgents{Agents: a, mu: &mu, flows: &flows}, nil
		},
	}
	dir, sum, err := Run(context.Background(), sc, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Complete || sum.Cells[0].Delivered != sum.Cells[0].Messages {
		t.Fatalf("delay %v: %+v", delay, sum.Cells[0])
	}
	set, err := results.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	rtts := map[[2]string]time.Duration{}
	for _, f := range flows {
		rtts[[2]string{f.Host, f.Peer}] = time.Duration(f.MinRTTNs)
	}
	return rtts, set.Meta.Runs[0]
}

// TestLinkDelay: with a delay on every link of a real k=4 lab, each
// flow's smallest RTT is the one without delays plus twice its path's
// delay (2, 4 or 6 links each way), within 5% when the run is judged OK
// (never below it in any case); nothing is reordered on a path, and the
// verdict WARNs of late delay lines exactly when they were late.
func TestLinkDelay(t *testing.T) {
	testlab.RequireRoot(t)
	const delay = time.Millisecond
	base, baseRun := runDelay(t, 0)
	got, run := runDelay(t, delay)
	topo, err := topology.NewFatTree(4)
	if err != nil {
		t.Fatal(err)
	}
	links := func(src, dst string) int {
		s, _ := topo.Node(src)
		a, err := netip.ParseAddr(dst)
		if err != nil {
			t.Fatal(err)
		}
		d := a.As4()
		switch {
		case s.Pod != int(d[1]):
			return 6
		case s.Edge != int(d[2]):
			return 4
		}
		return 2
	}
	f := run.Fidelity
	if f == nil || baseRun.Fidelity == nil {
		t.Fatal("run not judged")
	}
	// Both runs kept up: the 5% bound applies.
	kept := f.Verdict == fidelity.OK && baseRun.Fidelity.Verdict == fidelity.OK
	if len(got) != 3 || len(base) != 3 {
		t.Fatalf("%d and %d flows, want 3 each", len(got), len(base))
	}
	for k, rtt := range got {
		b, ok := base[k]
		if !ok {
			t.Fatalf("flow %v has no run without delay", k)
		}
		want := b + 2*time.Duration(links(k[0], k[1]))*delay
		// The delays are always applied: never below them. Within 5% of
		// the base RTT plus them when the verdict says the machine kept
		// up; a saturated CPU makes samples late (in either run), and
		// the verdict must then say so (checked below).
		d := rtt - want
		switch {
		case rtt < 2*time.Duration(links(k[0], k[1]))*delay:
			t.Errorf("%s -> %s (%d links): min RTT %v, below the delays' own %v", k[0], k[1], links(k[0], k[1]), rtt, 2*time.Duration(links(k[0], k[1]))*delay)
		case (d > want/20 || d < -want/20) && kept:
			t.Errorf("%s -> %s (%d links): min RTT %v, want %v (%v without delays) within 5%% in runs judged OK", k[0], k[1], links(k[0], k[1]), rtt, want, b)
		case d > want/20 || d < -want/20:
			t.Logf("%s -> %s: min RTT %v, %v off %v, runs judged %s and %s (without delays): %v", k[0], k[1], rtt, d, want, f.Verdict, baseRun.Fidelity.Verdict, f.Reasons)
		}
	}
	if f.ReorderedSameEV != 0 || !f.OrderChecked {
		t.Errorf("same-EV reordering %d (checked %v)", f.ReorderedSameEV, f.OrderChecked)
	}
	d := f.Delay
	if d.Packets == 0 || d.MeanDelayNs < float64(2*delay) || d.MeanDelayNs > float64(6*delay) {
		t.Errorf("delay lines: %+v", d)
	}
	// How late the delay lines are depends on the CPU they get, which
	// other work on the machine takes: whatever it was, the verdict must
	// say so exactly when they were later than its limit.
	late := d.Late()
	said := false
	for _, r := range f.Reasons {
		if strings.HasPrefix(r, "FAIL") {
			t.Errorf("verdict: %s", r)
		}
		said = said || strings.Contains(r, "link delays")
	}
	if late != said {
		t.Errorf("delay lines late by %.0fus on average (a packet is %.0fus), but the verdict's reasons are %v", d.MeanLateNs/1e3, d.PacketNs/1e3, f.Reasons)
	}
	t.Logf("verdict %s %v; delay lines: %d packets, %.1fms applied on average, late %.0fµs on average (%.0f%% of a %.0fµs packet), 99%% within %.0fµs (-1: more), worst %.0fµs",
		f.Verdict, f.Reasons, d.Packets, d.MeanDelayNs/1e6, d.MeanLateNs/1e3, 100*d.MeanLateNs/d.PacketNs, d.PacketNs/1e3,
		float64(d.P99LateBelowNs)/1e3, float64(d.MaxLateNs)/1e3)
}
