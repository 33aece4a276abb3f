package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ftlab/ftlab/orchestrator/runner"
)

// TestProgressLines: away from a terminal, progress is a line per
// finished run (ftlab run) or per finished cell (ftlab check), with the
// verdicts, the retries and the time left; starts and retries add none.
func TestProgressLines(t *testing.T) {
	// Two cells of two runs; the first run of cell 2 is retried once.
	events := []runner.Progress{
		{Cell: 1, CellName: "transport=ecmp", Run: 1, Runs: 2, Status: "building"},
		{Cell: 1, CellName: "transport=ecmp", Run: 1, Runs: 2, Status: "running"},
		{Cell: 1, CellName: "transport=ecmp", Run: 1, Runs: 2, Status: "complete", Verdict: "OK", Done: 1, Elapsed: 2 * time.Second},
		{Cell: 1, CellName: "transport=ecmp", Run: 2, Runs: 2, Status: "running", Done: 1},
		{Cell: 1, CellName: "transport=ecmp", Run: 2, Runs: 2, Status: "complete", Verdict: "WARN", Done: 2, Elapsed: 4 * time.Second},
		{Cell: 2, CellName: "transport=rss", Run: 1, Runs: 2, Status: "retrying", Done: 2},
		{Cell: 2, CellName: "transport=rss", Run: 1, Runs: 2, Status: "complete", Verdict: "OK", Done: 3, Elapsed: 9 * time.Second},
		{Cell: 2, CellName: "transport=rss", Run: 2, Runs: 2, Status: "timeout", Done: 4, Elapsed: 12 * time.Second},
	}
	for _, tt := range []struct {
		name  string
		every lineEvery
		want  []string
	}{
		{"every run", everyRun, []string{
			"s: cell 1/2 transport=ecmp run 1/2: complete, OK (1/4 runs, 2s, about 6s left)",
			"s: cell 1/2 transport=ecmp run 2/2: complete, WARN (2/4 runs, 4s, about 4s left)",
			"s: cell 2/2 transport=rss run 1/2: complete, OK (3/4 runs, 9s, about 3s left)",
			"s: cell 2/2 transport=rss run 2/2: timeout (4/4 runs, 12s)",
		}},
		{"every cell", everyCell, []string{
			"s: cell 1/2 transport=ecmp: 2 runs: 1 OK, 1 WARN (2/4 runs, 4s, about 4s left)",
			"s: cell 2/2 transport=rss: 2 runs: 1 OK, 1 without a verdict, 1 retried (4/4 runs, 12s)",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			a := &app{stdout: &b, stderr: &b}
			tell, finish := a.progress("s", tt.every)
			for _, p := range events {
				p.Cells, p.Total = 2, 4
				tell(p)
			}
			finish()
			got := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}
