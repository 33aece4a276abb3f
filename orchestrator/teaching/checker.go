package teaching

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Result is one evaluated check, as reports show it.
type Result struct {
	Check       string  `json:"check"`
	Step        string  `json:"step"`
	Kind        string  `json:"kind"`
	Description string  `json:"description"`
	Priority    int     `json:"priority"`
	Points      int     `json:"points"`
	Earned      float64 `json:"earned"`
	Outcome
	// Hint is the check's hint, given when it did not pass.
	Hint string `json:"hint,omitempty"`
	// Live checks looked at the running lab; grading keeps their
	// recorded outcome.
	Live     bool          `json:"live"`
	At       time.Time     `json:"at"`
	Duration time.Duration `json:"duration_ns"`
}

// retryEvery is how often a waiting live check looks again.
const retryEvery = 250 * time.Millisecond

// Evaluate judges checks in env: per step in order, within a step by
// priority. A check that requires a feature this ftlab lacks is skipped,
// saying which; a live check with a wait is retried until it passes or the
// wait is over (the fabric converging after a change).
func Evaluate(ctx context.Context, env *Env, checks []*Check) []Result {
	ordered := slices.Clone(checks)
	stepIndex := func(c *Check) int {
		_, i, _ := env.Lab.Step(c.Step)
		return i
	}
	slices.SortStableFunc(ordered, func(a, b *Check) int {
		if d := stepIndex(a) - stepIndex(b); d != 0 {
			return d
		}
		return a.Priority - b.Priority
	})
	out := make([]Result, 0, len(ordered))
	for _, c := range ordered {
		out = append(out, evaluateOne(ctx, env, c))
	}
	return out
}

func evaluateOne(ctx context.Context, env *Env, c *Check) Result {
	kind, _ := LookupKind(c.Kind)
	r := Result{Check: c.ID, Step: c.Step, Kind: c.Kind, Description: c.Description, Priority: c.Priority,
		Points: c.Points, Live: kind != nil && kind.Live, At: time.Now().UTC()}
	start := time.Now()
	var missing []string
	for _, f := range c.Requires {
		if !env.Features[f] {
			missing = append(missing, f)
		}
	}
	switch {
	case len(missing) > 0:
		r.Outcome = skipped(fmt.Sprintf("needs ftlab %s, which this build does not have yet", strings.Join(missing, " and ")))
	case c.Spec == nil:
		r.Outcome = skipped("the check did not decode")
	default:
		deadline := time.Now().Add(c.Wait)
		for {
			r.Outcome = c.Spec.Evaluate(ctx, env)
			if r.Status != Fail || !r.Live || env.Live == nil || ctx.Err() != nil || time.Now().Add(retryEvery).After(deadline) {
				break
			}
			select {
			case <-ctx.Done():
			case <-time.After(retryEvery):
			}
		}
	}
	r.Duration = time.Since(start)
	r.Earned = r.Credit * float64(c.Points)
	if r.Status != Pass {
		r.Hint = c.Hint
	}
	return r
}

// Score sums results: points earned, and points possible without the
// checks that were skipped (a missing feature is nobody's fault) or
// inconclusive (to be rerun, not counted against the student).
func Score(results []Result) (earned, possible float64) {
	for _, r := range results {
		earned += r.Earned
		if r.Status == Pass || r.Status == Fail {
			possible += float64(r.Points)
		}
	}
	return earned, possible
}

// StepDone reports whether every priority-1 check of the step passed (or
// was skipped for a missing feature) in results, and the failing ones.
func StepDone(step string, results []Result) (bool, []string) {
	var failing []string
	for _, r := range results {
		if r.Step != step || r.Priority != 1 {
			continue
		}
		if r.Status == Fail || r.Status == Inconclusive {
			failing = append(failing, r.Check)
		}
	}
	return len(failing) == 0, failing
}

// Merge replaces, in old, the results of the checks in new, keeping the
// others: a report shows every check's latest outcome.
func Merge(old, new []Result, order []*Check) []Result {
	by := map[string]Result{}
	for _, r := range old {
		by[r.Check] = r
	}
	for _, r := range new {
		by[r.Check] = r
	}
	out := make([]Result, 0, len(by))
	for _, c := range order {
		if r, ok := by[c.ID]; ok {
			out = append(out, r)
		}
	}
	return out
}
