package runner

import (
	"context"
	"testing"

	"github.com/ftlab/ftlab/orchestrator/fidelity"
	"github.com/ftlab/ftlab/orchestrator/results"
)

// try is a finished run with verdict v and steal s.
func try(status string, v fidelity.Verdict, s float64) *results.Run {
	return &results.Run{Status: status, Fidelity: &fidelity.Report{Verdict: v, Inputs: fidelity.Inputs{CPU: &fidelity.CPUStats{MeanSteal: s}}}}
}

func TestRetryDisturbed(t *testing.T) {
	disturbed := try(results.StatusComplete, fidelity.WARN, 0.3)
	ok := try(results.StatusComplete, fidelity.OK, 0.3)
	warn := try(results.StatusComplete, fidelity.WARN, 0.02)
	failedRun := try(results.StatusFailed, fidelity.WARN, 0.3)
	for _, tt := range []struct {
		name      string
		n         int
		tries     []*results.Run
		cancelled bool
		want      *results.Run
		retried   int
	}{
		{"never asked", 0, []*results.Run{disturbed}, false, disturbed, 0},
		{"OK at once", 2, []*results.Run{ok}, false, ok, 0},
		{"WARN of the machine's own", 2, []*results.Run{warn}, false, warn, 0},
		{"disturbed twice, then OK", 2, []*results.Run{disturbed, disturbed, ok}, false, ok, 2},
		{"disturbed beyond the retries", 1, []*results.Run{disturbed, disturbed, ok}, false, disturbed, 1},
		{"a failed run is not retried", 2, []*results.Run{failedRun, ok}, false, failedRun, 0},
		{"interrupted", 2, []*results.Run{disturbed, ok}, true, disturbed, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancelled {
				cancel()
			}
			calls, retried := 0, 0
			got := retryDisturbed(ctx, tt.n, func() *results.Run {
				calls++
				return tt.tries[calls-1]
			}, func(r *results.Run) {
				if r != tt.tries[retried] {
					t.Errorf("retried try %d is not the one run %d", retried+1, retried+1)
				}
				retried++
			})
			if got != tt.want {
				t.Errorf("counted try %+v, want %+v", got, tt.want)
			}
			if retried != tt.retried || calls != tt.retried+1 {
				t.Errorf("%d tries, %d retried; want %d retried", calls, retried, tt.retried)
			}
		})
	}
}
