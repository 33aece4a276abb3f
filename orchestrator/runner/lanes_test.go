package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/internal/testlab"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/orchestrator/results"
	"github.com/ftlab/ftlab/orchestrator/scenario"
	"github.com/ftlab/ftlab/switchd"
)

// TestLaneNames: lanes get the base name and numbered ones, leaving out
// any whose port-mark tag a lab of the store or an earlier lane has.
func TestLaneNames(t *testing.T) {
	store := &lab.Store{Dir: t.TempDir()}
	got, err := LaneNames(store, "lane", 1)
	if err != nil || !cmp.Equal(got, []string{"lane"}) {
		t.Fatalf("one lane: %v, %v; want [lane]", got, err)
	}
	// A lab already up with lane2's tag.
	tag2 := switchd.MarkTag(store.PinRoot("lane2"))
	other := ""
	for i := range 10000 {
		n := "x" + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676%26))
		if n != "lane2" && switchd.MarkTag(store.PinRoot(n)) == tag2 {
			other = n
			break
		}
	}
	if other == "" {
		t.Fatal("no name with lane2's tag found")
	}
	if err := os.MkdirAll(filepath.Join(store.Dir, other), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err = LaneNames(store, "lane", 3)
	if err != nil {
		t.Fatal(err)
	}
	tags := map[uint32]string{tag2: other}
	for _, n := range got {
		if n == "lane2" {
			t.Errorf("lanes %v include lane2, whose tag lab %s has", got, other)
		}
		tag := switchd.MarkTag(store.PinRoot(n))
		if o, ok := tags[tag]; ok {
			t.Errorf("lanes %v: %s has the tag of %s", got, n, o)
		}
		tags[tag] = n
	}
	if len(got) != 3 || got[0] != "lane" {
		t.Errorf("lanes %v, want 3 starting with lane", got)
	}
	if _, err := LaneNames(store, "a_name_that_is_long", 2); err == nil {
		t.Error("lanes of a name too long for a suffix: no error")
	}
}

// TestLanes: with two lanes a scenario's runs go two at a time on two labs
// of the run's own, every run is recorded once, in the scenario's order,
// and both labs are gone afterwards.
func TestLanes(t *testing.T) {
	testlab.RequireRoot(t)
	sc := loadScenario(t, `
name: zz-test
topology: topologies/fattree-k4.yaml
dataplane: linerate
workload: {kind: permutation, size: 64KiB}
repetitions: 3
timeout: 10s
compare:
  policy: [ecmp, ofan]
`)
	store := &lab.Store{Dir: t.TempDir(), Prefix: testlab.Prefix(t)}
	var (
		mu             sync.Mutex
		labs           = map[string]int{}
		inflight, most int
	)
	opt := Options{
		Store: store, LabName: "lane", Lanes: 2, ResultsRoot: t.TempDir(),
		Agents: func(_ context.Context, st *lab.State, _ *lab.Store, _ *scenario.Config, _ *scenario.Run) (Agents, error) {
			mu.Lock()
			defer mu.Unlock()
			labs[st.Name]++
			inflight++
			most = max(most, inflight)
			return &countedAgents{fakeAgents{delay: 300 * time.Millisecond, events: make(chan AgentEvent, 64), stop: make(chan struct{})}, func() {
				mu.Lock()
				inflight--
				mu.Unlock()
			}}, nil
		},
	}
	t.Cleanup(func() {
		for n := range labs {
			_ = store.Down(n)
		}
	})
	dir, sum, err := Run(context.Background(), sc, opt)
	if err != nil || !sum.Complete {
		t.Fatalf("run with two lanes: %v, %+v", err, sum)
	}
	if len(labs) != 2 || most != 2 {
		t.Errorf("runs by lab %v, at most %d at once; want two labs, two at once", labs, most)
	}
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var meta results.Meta
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, r := range meta.Runs {
		got = append(got, r.Cell+"/"+string(rune('0'+r.Repetition)))
	}
	for _, c := range sc.Cells {
		for _, r := range c.Runs {
			want = append(want, c.Name+"/"+string(rune('0'+r.Repetition)))
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("run.json's runs (-scenario's order +recorded):\n%s", d)
	}
	if left, err := store.List(); err != nil || len(left) != 0 {
		t.Errorf("labs left after the run: %v (%v)", left, err)
	}
	if left := testlab.Remaining(t, store.Prefix); len(left) != 0 {
		t.Errorf("the lanes left %d namespaces", len(left))
	}
}

// countedAgents are fakeAgents that say when they stop.
type countedAgents struct {
	fakeAgents
	stopped func()
}

func (c *countedAgents) Stop() ([]transport.FlowRecord, error) {
	c.stopped()
	return c.fakeAgents.Stop()
}
