package check

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ftlab/ftlab/internal/testlab"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/orchestrator/report"
	"github.com/ftlab/ftlab/orchestrator/results"
	"github.com/ftlab/ftlab/orchestrator/runner"
	"github.com/ftlab/ftlab/orchestrator/scenario"
)

func queues(maxB uint64, share float64) []report.DirectionQueue {
	var qs []report.DirectionQueue
	for _, d := range FabricStages {
		qs = append(qs, report.DirectionQueue{Direction: d, MaxBacklog: maxB, MeanBacklog: float64(maxB) / 10, MaxTxShare: share})
	}
	return qs
}

func ofanSummary(small, large map[string]uint64, ofanShare float64) *report.Summary {
	s := &report.Summary{Scenario: "t"}
	for _, p := range []string{"ecmp", "random", "ar", "pofan", "ofan"} {
		share := 1.3
		if p == "ofan" {
			share = ofanShare
		}
		s.Cells = append(s.Cells,
			report.CellSummary{Cell: "policy=" + p + ",workload.size=64KiB", Queues: queues(small[p], share)},
			report.CellSummary{Cell: "policy=" + p + ",workload.size=4MiB", Queues: queues(large[p], share)})
	}
	return s
}

func TestEvalOfan(t *testing.T) {
	small := map[string]uint64{"ecmp": 10000, "random": 10000, "ar": 10000, "pofan": 4000, "ofan": 4000}
	tests := []struct {
		name  string
		large map[string]uint64
		share float64
		want  bool
	}{
		{"holds", map[string]uint64{"ecmp": 40000, "random": 30000, "ar": 25000, "pofan": 5000, "ofan": 5000}, 1.01, true},
		{"ofan grows", map[string]uint64{"ecmp": 40000, "random": 30000, "ar": 25000, "pofan": 5000, "ofan": 40000}, 1.01, false},
		{"random flat", map[string]uint64{"ecmp": 40000, "random": 12000, "ar": 25000, "pofan": 5000, "ofan": 5000}, 1.01, false},
		{"ofan unbalanced", map[string]uint64{"ecmp": 40000, "random": 30000, "ar": 25000, "pofan": 5000, "ofan": 5000}, 1.5, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := EvalOfan(ofanSummary(small, tt.large, tt.share), "64KiB", "4MiB", []string{"ofan", "pofan"}, []string{"ecmp", "random", "ar"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, o.Holds); diff != "" {
				t.Errorf("holds (-want +got):\n%s\n%s", diff, o.Measurement)
			}
		})
	}
	if _, err := EvalOfan(&report.Summary{}, "64KiB", "4MiB", []string{"ofan"}, nil); err == nil {
		t.Error("missing cells: no error")
	}
}

func ocCell(t string, p99 float64, rtos, needed, spurious int, drops uint64) report.CellSummary {
	return report.CellSummary{Cell: "transport=" + t, Messages: 8, Delivered: 8, FCTP99: p99, RTOs: rtos,
		RetxNeeded: needed, RetxSpurious: spurious, DropsCorrupt: drops}
}

func TestEvalOrderedChaos(t *testing.T) {
	tests := []struct {
		name  string
		cells []report.CellSummary
		want  Outcome
	}{
		{"holds", []report.CellSummary{ocCell("ecmp", 300e6, 20, 20, 0, 20), ocCell("rss", 250e6, 15, 15, 0, 15), ocCell("rss+pfld", 100e6, 1, 10, 0, 12)},
			Outcome{Holds: true, Measurement: "p99 FCT ecmp 300.0ms, rss 250.0ms, rss+pfld 100.0ms; RTOs ecmp 20, rss 15, rss+pfld 1; rss+pfld retx 10 needed + 0 spurious vs 12 drops"}},
		{"slower and spurious", []report.CellSummary{ocCell("ecmp", 300e6, 20, 20, 0, 20), ocCell("rss", 90e6, 15, 15, 0, 15), ocCell("rss+pfld", 100e6, 5, 10, 2, 12)},
			Outcome{Holds: false, Measurement: "p99 FCT ecmp 300.0ms, rss 90.0ms, rss+pfld 100.0ms; RTOs ecmp 20, rss 15, rss+pfld 5; rss+pfld retx 10 needed + 2 spurious vs 12 drops [p99 not lowest; RTOs not >=90% fewer; retx != drops]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EvalOrderedChaos(&report.Summary{Scenario: "t", Cells: tt.cells})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, err := EvalOrderedChaos(&report.Summary{Cells: []report.CellSummary{ocCell("ecmp", 1, 0, 0, 0, 0)}}); err == nil {
		t.Error("missing cells: no error")
	}
}

func TestEvalPSNPath(t *testing.T) {
	cell := func(transport string, needed, spurious, delivered int) report.CellSummary {
		return report.CellSummary{Cell: "transport=" + transport, Messages: 10, Delivered: delivered, RetxNeeded: needed, RetxSpurious: spurious, DropsCorrupt: 100}
	}
	psn := func(needed, spurious, delivered int) report.CellSummary {
		return cell("psnpath", needed, spurious, delivered)
	}
	gap := cell("gapnack", 100, 25, 10) // 20% redundant
	tests := []struct {
		name  string
		cells []report.CellSummary
		want  bool
	}{
		{"none redundant", []report.CellSummary{psn(100, 0, 10), gap}, true},
		{"1% redundant", []report.CellSummary{psn(99, 1, 10), gap}, true},
		{"2% redundant", []report.CellSummary{psn(98, 2, 10), gap}, false},
		{"no losses", []report.CellSummary{psn(0, 0, 10), gap}, false},
		{"undelivered", []report.CellSummary{psn(100, 0, 9), gap}, false},
		{"gapnack no worse", []report.CellSummary{psn(99, 1, 10), cell("gapnack", 99, 1, 10)}, false},
		{"gapnack none redundant", []report.CellSummary{psn(100, 0, 10), cell("gapnack", 100, 0, 10)}, false},
		{"gapnack undelivered", []report.CellSummary{psn(100, 0, 10), cell("gapnack", 100, 25, 7)}, true},
		{"with rss+pfld", []report.CellSummary{psn(100, 0, 10), gap, cell("rss+pfld", 100, 50, 10)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EvalPSNPath(&report.Summary{Cells: tt.cells})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got.Holds); diff != "" {
				t.Errorf("(-want +got):\n%s\n%s", diff, got.Measurement)
			}
		})
	}
	got, err := EvalPSNPath(&report.Summary{Cells: []report.CellSummary{psn(99, 1, 10), gap, cell("rss+pfld", 100, 0, 10)}})
	if err != nil {
		t.Fatal(err)
	}
	want := Outcome{Holds: true, Measurement: "psnpath 1.00% redundant (1 spurious of 100 retx, 100 drops); " +
		"gapnack 20.00% redundant (25 spurious of 125 retx, 100 drops); rss+pfld 0.00% redundant (0 spurious of 100 retx, 100 drops)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcome (-want +got):\n%s", diff)
	}
	for _, cells := range [][]report.CellSummary{{psn(100, 0, 10)}, {gap}} {
		if _, err := EvalPSNPath(&report.Summary{Scenario: "s", Cells: cells}); err == nil {
			t.Errorf("%s alone: no error", cells[0].Cell)
		}
	}
}

func TestEvalAsymmetry(t *testing.T) {
	// sf(i, first, last): subflow i starts on (first) and ends on (last) the degraded path.
	sf := func(i int, first, last bool) []SubflowSample {
		id := string(rune('a' + i))
		return []SubflowSample{{Subflow: id, AtNs: 10, Degraded: first}, {Subflow: id, AtNs: 5, Degraded: first}, {Subflow: id, AtNs: 99, Degraded: last}}
	}
	build := func(n, firstDeg, lastDeg int) []SubflowSample {
		var out []SubflowSample
		for i := 0; i < n; i++ {
			out = append(out, sf(i, i < firstDeg, i < lastDeg)...)
		}
		return out
	}
	tests := []struct {
		name    string
		samples []SubflowSample
		want    Outcome
	}{
		{"converges", build(10, 5, 2), Outcome{Holds: true,
			Measurement: "degraded path's share of 10 subflows: 50% at start, 20% at end; capacity share 20% (tolerance +-10 points)"}},
		{"stays even", build(10, 5, 5), Outcome{Holds: false,
			Measurement: "degraded path's share of 10 subflows: 50% at start, 50% at end; capacity share 20% (tolerance +-10 points)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EvalAsymmetry(tt.samples, 0.2)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, err := EvalAsymmetry(nil, 0.2); err == nil {
		t.Error("no samples: no error")
	}
}

func TestParseSubflows(t *testing.T) {
	sc, err := scenario.Load("../../scenarios/paper/rss-asymmetry.yaml")
	if err != nil {
		t.Fatal(err)
	}
	topo := sc.Cells[0].Config.Topo()
	deg, _ := topo.Node("a0-1")
	h30, _ := topo.Node("h3-0-0")
	csvText := "cell,repetition,host,peer,flow,subflow,packets,at_ns,ev,reason,uplink,uplinks\n" +
		"base,0,h0-0-0," + h30.Addr.String() + ",7,0,10,100,1,initial,1,2\n" + // pod 0 up via a0-1
		"base,0,h0-0-0," + h30.Addr.String() + ",7,0,10,200,2,reroute,0,2\n" + // moved to a0-0
		"base,0,h3-0-0,h0-0-1,8,1,10,100,3,initial,1,2\n" + // into pod 0 via agg index 1: a0-1
		"base,0,h1-0-0,h2-0-0,9,0,10,100,4,initial,1,2\n" + // neither end in pod 0: skipped
		"base,0,h0-0-0,h0-1-0,9,0,10,100,4,initial,1,2\n" // within pod 0: skipped
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, results.SubflowsFile), []byte(csvText), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, err := results.ReadSubflows(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := subflowSamples(rows, topo, deg)
	want := []SubflowSample{
		{Subflow: "0/h0-0-0/7/0", AtNs: 100, Degraded: true},
		{Subflow: "0/h0-0-0/7/0", AtNs: 200, Degraded: false},
		{Subflow: "0/h3-0-0/8/1", AtNs: 100, Degraded: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestPaperScenariosLoad checks every shipped paper scenario validates and
// every check's scenarios exist.
func TestPaperScenariosLoad(t *testing.T) {
	files, err := filepath.Glob("../../scenarios/paper/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no paper scenarios: %v", err)
	}
	for _, f := range files {
		if _, err := scenario.Load(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, c := range Checks {
		for _, f := range c.Scenarios {
			if _, err := os.Stat(filepath.Join("../../scenarios/paper", f)); err != nil {
				t.Errorf("check %s: %v", c.Name, err)
			}
		}
	}
}

func TestLookup(t *testing.T) {
	got, err := Lookup([]string{"psn-path", "ofan"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range got {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"psn-path", "ofan"}, names); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := Lookup([]string{"nope"}); err == nil {
		t.Error("unknown check: no error")
	}
}

// TestRunAsymmetryCheck runs the quickest paper check end to end (root;
// a few seconds): its claim may hold or not, but it must be evaluated.
func TestRunAsymmetryCheck(t *testing.T) {
	testlab.RequireRoot(t)
	c, err := Lookup([]string{"rss-asymmetry"})
	if err != nil {
		t.Fatal(err)
	}
	store := &lab.Store{Dir: t.TempDir(), Prefix: testlab.Prefix(t)}
	res, err := RunOne(context.Background(), c[0], Options{Dir: "../../scenarios/paper", Runner: runner.Options{
		Store: store, LabName: "chk", ResultsRoot: t.TempDir(), Agents: runner.InProcessAgents}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Measurement, "degraded path's share") || res.Fidelity == "" || len(res.Dirs) != 1 {
		t.Errorf("result %+v", res)
	}
	if left := testlab.Remaining(t, store.Prefix); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}
