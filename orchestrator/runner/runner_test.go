package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ftlab/ftlab/bpf"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/internal/testlab"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/orchestrator/fabric"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/orchestrator/report"
	"github.com/ftlab/ftlab/orchestrator/results"
	"github.com/ftlab/ftlab/orchestrator/scenario"
	"github.com/ftlab/ftlab/orchestrator/workload"
	"github.com/ftlab/ftlab/switchd"
)

// fakeAgents delivers every message a fixed time after it is sent, and
// records the order of sends, so the runner's scheduling and result files
// can be checked without real transports.
type fakeAgents struct {
	mu     sync.Mutex
	delay  time.Duration
	drop   map[int]bool // messages never delivered
	sent   []int
	events chan AgentEvent
	stop   chan struct{}
}

func (f *fakeAgents) Send(m workload.Message) error {
	f.mu.Lock()
	f.sent = append(f.sent, m.ID)
	f.mu.Unlock()
	if f.drop[m.ID] {
		return nil
	}
	time.AfterFunc(f.delay, func() {
		select {
		case f.events <- AgentEvent{Kind: EventReceived, Msg: m.ID, Received: &transport.ReceiveRecord{Bytes: int(m.Bytes), Verified: true}}:
		case <-f.stop:
		}
		select {
		case f.events <- AgentEvent{Kind: EventSent, Msg: m.ID, Sent: &transport.MessageRecord{Bytes: int(m.Bytes), Packets: 3, RetxNeeded: 1}}:
		case <-f.stop:
		}
	})
	return nil
}

func (f *fakeAgents) Events() <-chan AgentEvent { return f.events }
func (f *fakeAgents) Stop() ([]transport.FlowRecord, error) {
	close(f.stop)
	return nil, nil
}

func loadScenario(t *testing.T, yaml string) *scenario.Scenario {
	t.Helper()
	path := filepath.Join(testlab.Root(t), "scenarios", "zz-test.yaml")
	sc, err := scenario.Parse(path, []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func TestRunWritesResultsAndReportRebuildsThem(t *testing.T) {
	testlab.RequireRoot(t)
	sc := loadScenario(t, `
name: zz-test
topology: topologies/fattree-k4.yaml
dataplane: linerate
workload: {kind: ring-allreduce, size: 64KiB, hosts: [h0-0-0, h1-0-0, h2-0-0, h3-0-0]}
repetitions: 2
timeout: 10s
compare:
  policy: [ecmp, ofan]
`)
	var fakes []*fakeAgents
	opt := Options{
		Store:       &lab.Store{Dir: t.TempDir(), Prefix: testlab.Prefix(t)},
		ResultsRoot: t.TempDir(),
		Agents: func(ctx context.Context, st *lab.State, store *lab.Store, cfg *scenario.Config, run *scenario.Run) (Agents, error) {
			f := &fakeAgents{delay: 5 * time.Millisecond, events: make(chan AgentEvent, 64), stop: make(chan struct{})}
			fakes = append(fakes, f)
			return f, nil
		},
	}
	dir, sum, err := Run(context.Background(), sc, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Cells) != 2 || !sum.Complete {
		t.Fatalf("summary: %+v", sum)
	}
	for _, c := range sum.Cells {
		if c.CompleteRuns != 2 || c.Delivered != c.Messages || c.Messages != 2*2*3*4 {
			t.Errorf("cell %s: %+v; want 2 complete runs delivering 2 runs x 6 steps x 4 messages", c.Cell, c)
		}
		if c.CCTMean <= 0 || c.RetxNeeded != c.Messages {
			t.Errorf("cell %s: CCT %v, retx %d", c.Cell, c.CCTMean, c.RetxNeeded)
		}
	}
	// Ring all-reduce: a step's messages only start once the previous
	// step's have been delivered.
	run := sc.Cells[0].Runs[0]
	pos := map[int]int{}
	for i, id := range fakes[0].sent {
		pos[id] = i
	}
	for _, m := range run.Messages {
		for _, d := range m.After {
			if pos[d] >= pos[m.ID] {
				t.Errorf("message %d (step %d) was sent before its dependency %d", m.ID, m.Step, d)
			}
		}
	}
	for _, f := range []string{results.RunFile, results.FlowsFile, results.LinksFile, results.SubflowsFile, report.SummaryFile, report.ReportFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	before, _ := os.ReadFile(filepath.Join(dir, report.ReportFile))
	if !strings.Contains(string(before), "policy=ofan") || !strings.Contains(string(before), "E->A") {
		t.Errorf("report lacks cells or queue directions:\n%s", before)
	}
	if _, err := report.Rebuild(dir); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, report.ReportFile))
	if string(before) != string(after) {
		t.Errorf("report rebuilt from the raw files differs:\n--- live\n%s\n--- rebuilt\n%s", before, after)
	}
	if left := testlab.Remaining(t, opt.Store.Prefix); len(left) != 0 {
		t.Errorf("run left %d namespaces", len(left))
	}
}

func TestTimeoutAndInterruptKeepResults(t *testing.T) {
	testlab.RequireRoot(t)
	sc := loadScenario(t, `
name: zz-test
topology: topologies/fattree-k4.yaml
dataplane: linerate
workload: {kind: permutation, size: 64KiB}
repetitions: 3
timeout: 300ms
`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runs := 0
	opt := Options{
		Store:       &lab.Store{Dir: t.TempDir(), Prefix: testlab.Prefix(t)},
		ResultsRoot: t.TempDir(),
		Agents: func(context.Context, *lab.State, *lab.Store, *scenario.Config, *scenario.Run) (Agents, error) {
			runs++
			if runs == 2 {
				time.AfterFunc(100*time.Millisecond, cancel) // Ctrl-C during the second run
			}
			return &fakeAgents{delay: time.Millisecond, drop: map[int]bool{3: true}, events: make(chan AgentEvent, 64), stop: make(chan struct{})}, nil
		},
	}
	dir, sum, err := Run(ctx, sc, opt)
	if err == nil {
		t.Fatal("interrupted run returned no error")
	}
	if sum.Complete || len(sum.Cells) != 1 || sum.Cells[0].Runs != 2 {
		t.Fatalf("summary %+v; want incomplete with 2 runs (one timed out, one interrupted)", sum)
	}
	c := sum.Cells[0]
	if c.CompleteRuns != 0 || c.Delivered != c.Messages-2 {
		t.Errorf("cell %+v: want no complete run and everything but message 3 delivered in both", c)
	}
	data, _ := os.ReadFile(filepath.Join(dir, results.RunFile))
	if !strings.Contains(string(data), `"complete": false`) || !strings.Contains(string(data), `"status": "timeout"`) ||
		!strings.Contains(string(data), `"status": "interrupted"`) {
		t.Errorf("run.json does not record the timeout and the interruption")
	}
	if left := testlab.Remaining(t, opt.Store.Prefix); len(left) != 0 {
		t.Errorf("interrupted run left %d namespaces", len(left))
	}
}

// TestReuseLab runs a scenario's cells on a lab that is already up: each
// cell reprograms its data plane, the lab stays up, and a scenario whose
// topology differs from the lab's is refused.
func TestReuseLab(t *testing.T) {
	testlab.RequireRoot(t)
	sc := loadScenario(t, `
name: zz-test
topology: topologies/fattree-k4.yaml
dataplane: linerate
workload: {kind: permutation, size: 64KiB}
timeout: 10s
compare:
  policy: [ecmp, ofan]
`)
	store := &lab.Store{Dir: t.TempDir(), Prefix: testlab.Prefix(t)}
	if _, err := store.Up(context.Background(), "mine", sc.Cells[0].Config.Topo(), lab.UpOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Down("mine") })
	opt := Options{
		Store: store, ReuseLab: "mine", ResultsRoot: t.TempDir(),
		Agents: func(context.Context, *lab.State, *lab.Store, *scenario.Config, *scenario.Run) (Agents, error) {
			return &fakeAgents{delay: time.Millisecond, events: make(chan AgentEvent, 64), stop: make(chan struct{})}, nil
		},
	}
	_, sum, err := Run(context.Background(), sc, opt)
	if err != nil || !sum.Complete {
		t.Fatalf("run on a reused lab: %v, %+v", err, sum)
	}
	st, err := store.Get("mine")
	if err != nil || st.Phase != lab.PhaseUp || st.DataPlane.EdgePolicy != "ofan" {
		t.Fatalf("after the run the lab is %+v (%v); want it up with the last cell's policy, ofan", st, err)
	}
	// Link rates are the data plane's: another rate reprograms the lab.
	slower := loadScenario(t, `
name: zz-test
topology: {kind: fattree, k: 4, links: {rate: 25Mbit}}
workload: {kind: permutation, size: 64KiB}
`)
	if _, _, err := Run(context.Background(), slower, opt); err != nil {
		t.Fatalf("a scenario with other link rates on the lab: %v", err)
	}
	if st, err := store.Get("mine"); err != nil || st.Topology.FullRate() != 25_000_000 {
		t.Errorf("the lab records links at %d bit/s (%v), want the scenario's 25 Mbit/s", st.Topology.FullRate(), err)
	}
	// The veths are not: another MTU is refused.
	other := loadScenario(t, `
name: zz-test
topology: {kind: fattree, k: 4, links: {mtu: 4200}}
workload: {kind: permutation, size: 64KiB}
`)
	if _, _, err := Run(context.Background(), other, opt); err == nil || !strings.Contains(err.Error(), "cannot run this scenario") {
		t.Errorf("a scenario with another MTU on the lab: err = %v, want a refusal", err)
	}
}

// TestCellsShareOneLab: the cells of a matrix on one fabric run on one
// lab, built once and reprogrammed in place between cells, and a cell
// starts from a clean data plane although the cell before left a failed
// link, corruption and a degraded rate behind. (switchd's
// TestReconfigureStartsClean compares the whole data plane with a fresh
// install.)
func TestCellsShareOneLab(t *testing.T) {
	testlab.RequireRoot(t)
	sc := loadScenario(t, `
name: zz-test
topology: topologies/fattree-k4.yaml
workload: {kind: permutation, size: 64KiB}
timeout: 10s
compare:
  policy: [ecmp, ofan]
`)
	type cellStart struct {
		created time.Time
		reused  bool
		policy  string
		dirtyOK bool // every port up, no corruption, its rate, counters, queues, qdisc drops and backlog zero
	}
	var starts []cellStart
	opt := Options{
		Store:       &lab.Store{Dir: t.TempDir(), Prefix: testlab.Prefix(t)},
		ResultsRoot: t.TempDir(),
		Agents: func(ctx context.Context, st *lab.State, store *lab.Store, cfg *scenario.Config, run *scenario.Run) (Agents, error) {
			ctl := store.Control(st)
			stats, err := ctl.Stats()
			if err != nil {
				return nil, err
			}
			clean := true
			for _, p := range stats {
				sw, err := switchd.OpenSwitch(st.Topology, st.PinRoot, p.Switch)
				if err != nil {
					return nil, err
				}
				pc, err := sw.Port(p.Port)
				sw.Close()
				if err != nil {
					return nil, err
				}
				if !pc.Up || pc.CorruptProb != 0 || p.Counters != (bpf.PortCounters{}) || p.Queue.Packets != 0 ||
					pc.RateBps != p.Params.RateBps || p.Qdisc == nil || !p.Qdisc.Installed || p.Qdisc.Drops != 0 || p.Qdisc.BacklogPkts != 0 {
					clean = false
				}
			}
			starts = append(starts, cellStart{st.Created, st.DataPlaneReused, st.DataPlane.EdgePolicy, clean})
			// Leave the lab dirty for the next cell: packets through every
			// queue, then faults.
			if _, err := fabric.PingAll(ctx, st.Topology, store.Namer(st.Name)); err != nil {
				return nil, err
			}
			l := &st.Topology.Links[0]
			if err := ctl.SetLinkUp(l, false); err != nil {
				return nil, err
			}
			if err := ctl.SetCorruption(l, topology.SideA, 0.5); err != nil {
				return nil, err
			}
			if err := ctl.SetRate(l, topology.SideB, 1_000_000); err != nil {
				return nil, err
			}
			return &fakeAgents{delay: time.Millisecond, events: make(chan AgentEvent, 64), stop: make(chan struct{})}, nil
		},
	}
	_, sum, err := Run(context.Background(), sc, opt)
	if err != nil || !sum.Complete {
		t.Fatalf("run: %v, %+v", err, sum)
	}
	if len(starts) != 2 {
		t.Fatalf("%d cells started, want 2", len(starts))
	}
	if !starts[1].created.Equal(starts[0].created) || !starts[1].reused {
		t.Errorf("cell 2 ran on a lab created %v (reused in place: %v), cell 1 on one created %v: want the same lab, reprogrammed in place",
			starts[1].created, starts[1].reused, starts[0].created)
	}
	if starts[0].policy != "ecmp" || starts[1].policy != "ofan" {
		t.Errorf("cells ran with policies %s, %s; want ecmp, ofan", starts[0].policy, starts[1].policy)
	}
	for i, s := range starts {
		if !s.dirtyOK {
			t.Errorf("cell %d started with a port down, corrupted, at another rate, or with counters, queues, qdisc drops or backlog left", i+1)
		}
	}
	if left := testlab.Remaining(t, opt.Store.Prefix); len(left) != 0 {
		t.Errorf("run left %d namespaces", len(left))
	}
}
