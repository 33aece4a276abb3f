package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/ftlab/ftlab/orchestrator/teaching"
)

// CheckResult is what `ftlab lab check` found.
type CheckResult struct {
	// Report is the whole lab's standing: these results merged into the
	// earlier ones, as written to the workspace (with expected answers,
	// which the workspace's files leave out).
	Report *teaching.Report
	// Checked are this check's results only.
	Checked []teaching.Result
	// Step is the step checked ("" for all); Done says whether its
	// priority-1 checks passed, Advanced whether that moved the student
	// to the next step.
	Step     string
	Done     bool
	Advanced bool
}

// Env is what checks of the student's lab are evaluated against: the
// running lab, the answers file and runs in the workspace.
func (m *Manager) Env(a *Active) (*teaching.Env, error) {
	ws := a.Session.Workspace
	answers, err := teaching.ReadAnswers(a.Lab, filepath.Join(ws, teaching.AnswersFile))
	if err != nil {
		return nil, err
	}
	runs, err := teaching.LoadRuns(ws, a.Session)
	if err != nil {
		return nil, err
	}
	return &teaching.Env{Lab: a.Lab, Facts: a.Facts, Answers: answers, Runs: runs,
		Live: &live{store: m.Store, name: a.Session.LabName}, Workspace: ws, Features: m.Features}, nil
}

// Check evaluates the checks of one step (stepID, or the current step when
// empty) or, with all, of every step, against the running lab, the
// student's answers and runs; writes report.md, results.json and
// junit.xml to the workspace; and moves the student on when the current
// step's priority-1 checks pass.
func (m *Manager) Check(ctx context.Context, a *Active, stepID string, all bool) (*CheckResult, error) {
	ws := a.Session.Workspace
	env, err := m.Env(a)
	if err != nil {
		return nil, err
	}
	answers, runs := env.Answers, env.Runs
	var previous []teaching.Result
	if old, err := teaching.ReadReport(filepath.Join(ws, teaching.ResultsFile)); err == nil {
		previous = old.Results
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	res := &CheckResult{}
	var checks []*teaching.Check
	var kept []teaching.Result
	if all {
		// Live checks of the steps behind the student keep the outcome
		// they had when that step was checked: later steps change the
		// lab (a failed link is repaired), and checking them again would
		// judge the wrong state. Answers and runs are judged again.
		recorded := map[string]teaching.Result{}
		for _, r := range previous {
			recorded[r.Check] = r
		}
		for _, c := range a.Lab.Checks() {
			_, si, _ := a.Lab.Step(c.Step)
			kind, _ := teaching.LookupKind(c.Kind)
			if r, ok := recorded[c.ID]; ok && kind.Live && si < a.Session.Step {
				kept = append(kept, r)
				continue
			}
			checks = append(checks, c)
		}
	} else {
		step, _, err := a.StepOf(stepID)
		if err != nil {
			return nil, err
		}
		res.Step, checks = step.ID, step.Checks
	}
	res.Checked = teaching.Evaluate(ctx, env, checks)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	merged := teaching.Merge(previous, res.Checked, a.Lab.Checks())
	if len(kept) > 0 {
		res.Checked = teaching.Merge(kept, res.Checked, a.Lab.Checks())
	}
	if res.Step != "" {
		res.Done, _ = teaching.StepDone(res.Step, res.Checked)
		cur := a.Lab.Steps[min(a.Session.Step, len(a.Lab.Steps)-1)]
		if res.Done && cur.ID == res.Step && a.Session.Step < len(a.Lab.Steps)-1 {
			a.Session.Step++
			res.Advanced = true
		}
	}
	rep := teaching.NewReport(a.Lab, a.Facts, answers, merged)
	rep.LabName, rep.Version = a.Session.LabName, m.Version
	rep.Current = a.Lab.Steps[min(a.Session.Step, len(a.Lab.Steps)-1)].ID
	for _, s := range a.Lab.Steps {
		if r, ok := runs[s.ID]; ok {
			rep.Runs = append(rep.Runs, r)
		}
	}
	res.Report = rep
	if err := rep.ForStudent().WriteFiles(ws); err != nil {
		return nil, err
	}
	return res, m.save(a)
}
