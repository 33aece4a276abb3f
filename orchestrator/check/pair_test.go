package check

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ftlab/ftlab/orchestrator/fidelity"
	"github.com/ftlab/ftlab/orchestrator/results"
	"github.com/ftlab/ftlab/orchestrator/scenario"
)

// cellOf makes a cell with one run per verdict, repetitions 0, 1, ...
// ("" for a run that was never judged).
func cellOf(name string, verdicts ...fidelity.Verdict) *CellData {
	c := &CellData{Cell: &scenario.Cell{Name: name}}
	for rep, v := range verdicts {
		m := &results.Run{Cell: name, Repetition: rep, Status: results.StatusComplete}
		if v != "" {
			m.Fidelity = &fidelity.Report{Verdict: v}
		}
		c.Runs = append(c.Runs, RunData{Meta: m})
	}
	return c
}

func reps(c *CellData) []int {
	var out []int
	for _, r := range c.Runs {
		out = append(out, r.Meta.Repetition)
	}
	return out
}

// TestPairOK: the seeds with a run not judged OK leave every cell
// together, so comparisons stay paired; too few left and the cells come
// back whole with their worst verdict.
func TestPairOK(t *testing.T) {
	const ok, warn = fidelity.OK, fidelity.WARN
	seeds := func(n int, v fidelity.Verdict, bad ...int) []fidelity.Verdict {
		vs := make([]fidelity.Verdict, n)
		for i := range vs {
			vs[i] = ok
		}
		for _, b := range bad {
			vs[b] = v
		}
		return vs
	}
	for _, tc := range []struct {
		name     string
		cells    []*CellData
		wantReps [][]int
		wantFid  fidelity.Verdict
		wantNote string // a part of the note; "" for none
	}{
		{
			name:     "all OK: nothing left out",
			cells:    []*CellData{cellOf("a", seeds(4, ok)...), cellOf("b", seeds(4, ok)...)},
			wantReps: [][]int{{0, 1, 2, 3}, {0, 1, 2, 3}},
			wantFid:  ok,
		},
		{
			name:     "one WARN run leaves its seed out of both cells",
			cells:    []*CellData{cellOf("a", seeds(4, ok)...), cellOf("b", seeds(4, warn, 2)...)},
			wantReps: [][]int{{0, 1, 3}, {0, 1, 3}},
			wantFid:  ok,
			wantNote: "judged on the 3 of 4 seeds with every run OK; left out: repetition 2 (b WARN)",
		},
		{
			name:     "a run never judged counts as not OK",
			cells:    []*CellData{cellOf("a", seeds(4, "", 0)...), cellOf("b", seeds(4, ok)...)},
			wantReps: [][]int{{1, 2, 3}, {1, 2, 3}},
			wantFid:  ok,
			wantNote: "left out: repetition 0 (a not judged)",
		},
		{
			name:     "too few seeds left: the cells whole and WARN",
			cells:    []*CellData{cellOf("a", seeds(4, warn, 0)...), cellOf("b", seeds(4, warn, 1)...)},
			wantReps: [][]int{{0, 1, 2, 3}, {0, 1, 2, 3}},
			wantFid:  warn,
			wantNote: "2 of 4 seeds have every run OK, fewer than 3",
		},
		{
			name:     "two seeds: both must be OK",
			cells:    []*CellData{cellOf("a", seeds(2, warn, 1)...)},
			wantReps: [][]int{{0, 1}},
			wantFid:  warn,
			wantNote: "1 of 2 seeds have every run OK, fewer than 2",
		},
		{
			name:     "a missing cell stays missing",
			cells:    []*CellData{cellOf("a", seeds(4, warn, 3)...), nil},
			wantReps: [][]int{{0, 1, 2}, nil},
			wantFid:  ok,
			wantNote: "left out: repetition 3 (a WARN)",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, fid, note := pairOK(tc.cells...)
			var got [][]int
			for _, c := range out {
				if c == nil {
					got = append(got, nil)
					continue
				}
				got = append(got, reps(c))
			}
			if diff := cmp.Diff(tc.wantReps, got); diff != "" {
				t.Errorf("repetitions kept (-want +got):\n%s", diff)
			}
			if fid != tc.wantFid {
				t.Errorf("fidelity %s, want %s", fid, tc.wantFid)
			}
			if (tc.wantNote == "") != (note == "") || !strings.Contains(note, tc.wantNote) {
				t.Errorf("note %q, want one with %q", note, tc.wantNote)
			}
		})
	}
}
