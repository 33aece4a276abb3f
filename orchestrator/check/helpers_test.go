package check

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/ftlab/ftlab/orchestrator/fidelity"
	"github.com/ftlab/ftlab/orchestrator/results"
	"github.com/ftlab/ftlab/orchestrator/scenario"
	"github.com/ftlab/ftlab/orchestrator/workload"
)

// Recorded inputs: a scenario parsed from a string (the same compared
// keys as a paper scenario, a fabric without delays) and runs whose rows
// the test writes, so each check's verdict logic is exercised on data
// that holds and on data that does not.

func parseScenario(t *testing.T, name, src string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Parse(filepath.Join(t.TempDir(), name), []byte(src))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return sc
}

// recorded builds the data of sc: every cell's runs from runOf (nil: the
// cell did not run).
func recorded(sc *scenario.Scenario, file string, runOf func(c *scenario.Cell, rep int) *RunData) *Data {
	d := &Data{File: file, Scenario: sc}
	for _, c := range sc.Cells {
		for rep := range c.Runs {
			r := runOf(c, rep)
			if r == nil {
				continue
			}
			r.Meta.Cell, r.Meta.Repetition, r.Rows.Cell, r.Rows.Repetition = c.Name, rep, c.Name, rep
			if r.Meta.Status == "" {
				r.Meta.Status = results.StatusComplete
			}
			if r.Meta.Fidelity == nil {
				r.Meta.Fidelity = &fidelity.Report{Verdict: fidelity.OK}
			}
			for i := range r.Rows.Flows {
				r.Rows.Flows[i].Cell, r.Rows.Flows[i].Repetition = c.Name, rep
			}
			d.Runs = append(d.Runs, *r)
		}
	}
	return d
}

// flowsWith makes n delivered flows whose FCTs spread evenly up to
// largest, the last one at tail, each with the given RTOs and
// retransmissions (the first flows carry them).
func flowsWith(n int, largest, tail time.Duration, rtos, retx, spurious int) []results.FlowRow {
	fl := make([]results.FlowRow, n)
	for i := range fl {
		fct := largest * time.Duration(i+1) / time.Duration(n)
		if i == n-1 {
			fct = tail
		}
		fl[i] = results.FlowRow{ID: i, Src: fmt.Sprintf("h%d", i), Dst: "h0", Bytes: 1 << 20, Delivered: true, Verified: true, FCT: fct, Done: fct}
	}
	for i := 0; i < rtos; i++ {
		fl[i%n].RTOs++
	}
	for i := 0; i < retx; i++ {
		fl[i%n].Retx++
	}
	for i := 0; i < spurious; i++ {
		fl[i%n].RetxSpurious++
	}
	return fl
}

func runWith(flows []results.FlowRow, pc *results.PacketCounts) *RunData {
	return &RunData{Meta: &results.Run{Packets: pc, CCT: time.Second, Bound: &workload.Bound{CCT: 800 * time.Millisecond}},
		Rows: results.Rows{Flows: flows}}
}

func claimByID(t *testing.T, cs []Claim, id string) Claim {
	t.Helper()
	for _, c := range cs {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no claim %s among %d", id, len(cs))
	return Claim{}
}

// wantVerdicts checks the named claims' verdicts.
func wantVerdicts(t *testing.T, cs []Claim, want map[string]Verdict) {
	t.Helper()
	for id, v := range want {
		c := claimByID(t, cs, id)
		if c.Verdict != v {
			t.Errorf("%s: %s, want %s (measured %s, rule %s; %s; %s)", id, c.Verdict, v, c.MeasuredText(), c.Rule, c.Why, c.Detail)
		}
	}
}
