package report

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ftlab/ftlab/orchestrator/fidelity"
	"github.com/ftlab/ftlab/orchestrator/results"
)

// TestSummarize aggregates two runs of a cell: FCT percentiles by nearest
// rank over every delivered message, mean CCT over complete runs against
// their bounds, counters summed, queues per direction in path order.
func TestSummarize(t *testing.T) {
	var flows []results.FlowRow
	for i := 1; i <= 100; i++ {
		flows = append(flows, results.FlowRow{Delivered: true, FCT: time.Duration(i) * time.Millisecond, RetxNeeded: 1, ProbesTail: 1, ProbesRTX: 1})
	}
	lost := results.FlowRow{RTOs: 3, NACKs: 2}
	runs := []results.Rows{
		{Status: results.StatusComplete, CCT: 30 * time.Millisecond, Bound: 20 * time.Millisecond, Flows: flows[:50],
			Links: []results.LinkRow{
				{Direction: "A->C", TxPackets: 30, MaxBacklog: 100, MeanBacklog: 10, DropBuffer: 1},
				{Direction: "E->A", TxPackets: 10, MaxBacklog: 500, MeanBacklog: 40, DropCorrupt: 2},
				{Direction: "E->A", TxPackets: 30, MaxBacklog: 200, MeanBacklog: 20},
			}},
		{Status: results.StatusComplete, CCT: 50 * time.Millisecond, Bound: 20 * time.Millisecond, Flows: flows[50:]},
		{Status: results.StatusTimeout, CCT: 0, Flows: []results.FlowRow{lost}, Links: []results.LinkRow{{Direction: "E->A", DropLinkDown: 4}}},
	}
	got := summarize("c", runs)
	want := CellSummary{Cell: "c", Runs: 3, CompleteRuns: 2, Messages: 101, Delivered: 100,
		FCTP50: float64(50 * time.Millisecond), FCTP99: float64(99 * time.Millisecond), FCTMax: float64(100 * time.Millisecond),
		CCTMean: float64(40 * time.Millisecond), CCTIncrease: 1, RetxNeeded: 100, RTOs: 3, NACKs: 2, Probes: 200,
		DropsCorrupt: 2, DropsBuffer: 1, DropsLinkDown: 4,
		Queues: []DirectionQueue{
			{Direction: "E->A", MaxBacklog: 500, MeanBacklog: 20, MaxTxShare: 30 / (40.0 / 3)},
			{Direction: "A->C", MaxBacklog: 100, MeanBacklog: 10, MaxTxShare: 1},
		}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if empty := summarize("idle", nil); empty.FCTP99 != 0 || empty.CCTMean != 0 || empty.Queues != nil {
		t.Errorf("no runs: %+v", empty)
	}
}

func TestWriteCompare(t *testing.T) {
	a := &Summary{Scenario: "s", Cells: []CellSummary{
		{Cell: "policy=ecmp", FCTP99: float64(1500 * time.Microsecond), CCTMean: float64(3 * time.Millisecond), RetxNeeded: 4, RetxSpurious: 1, RTOs: 2},
		{Cell: "policy=ofan", FCTP99: float64(time.Millisecond), RetxNeeded: 1},
	}}
	b := &Summary{Scenario: "s2", Cells: []CellSummary{
		{Cell: "policy=ecmp", FCTP99: float64(2 * time.Millisecond), CCTMean: float64(4 * time.Millisecond), RetxNeeded: 5, RTOs: 3},
	}}
	var out strings.Builder
	WriteCompare(&out, "x", "y", a, b)
	want := []string{
		"A: x (s)",
		"B: y (s2)",
		"",
		"CELL         FCT p99 A  FCT p99 B   CCT A  CCT B  RETX A  RETX B  SPURIOUS A  SPURIOUS B  RTOs A  RTOs B",
		"policy=ecmp  1.5ms      2ms         3ms    4ms    4       5       1           0           2       3",
		"policy=ofan  1ms        (not in B)  -             1               0                       0       ",
		"",
	}
	if diff := cmp.Diff(want, strings.Split(out.String(), "\n")); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestWriteVerdicts(t *testing.T) {
	var out strings.Builder
	WriteVerdicts(&out, FidelitySummary{})
	if out.Len() != 0 {
		t.Errorf("nothing judged, but wrote %q", out.String())
	}
	WriteVerdicts(&out, FidelitySummary{Verdict: fidelity.WARN, Runs: []RunVerdict{
		{Cell: "base", Repetition: 0, Verdict: fidelity.OK},
		{Cell: "base", Repetition: 1, Verdict: fidelity.WARN, Reasons: []string{"CPU saturated", "pacing"}},
	}})
	want := "fidelity: WARN\n  base rep 0: OK\n  base rep 1: WARN\n    CPU saturated\n    pacing\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRetriedAreTold(t *testing.T) {
	f := FidelitySummary{Verdict: fidelity.OK, Retried: 2, Runs: []RunVerdict{{Cell: "base", Verdict: fidelity.OK}}}
	var out strings.Builder
	WriteVerdicts(&out, f)
	want := "fidelity: OK\n  2 runs were run again, disturbed by the hypervisor (kept in run.json, retried)\n  base rep 0: OK\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	var md strings.Builder
	writeFidelity(&md, f)
	if !strings.Contains(md.String(), "2 runs were run again: a WARN while the hypervisor took 10% of the cores") {
		t.Errorf("report.md's fidelity section does not tell the retries:\n%s", md.String())
	}
	md.Reset()
	f.Retried = 0
	writeFidelity(&md, f)
	if strings.Contains(md.String(), "run again") {
		t.Errorf("no retries, but report.md tells some:\n%s", md.String())
	}
}
