package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ftlab/ftlab/orchestrator/runner"
	"github.com/ftlab/ftlab/orchestrator/scenario"
	"github.com/ftlab/ftlab/orchestrator/teaching"
)

// RunResult is what `ftlab lab run` did.
type RunResult struct {
	Step string
	Mode teaching.RunMode
	// Dir is the results directory of a measured run.
	Dir string
	// Run is the measured run as checks see it (verdict, summary).
	Run *teaching.Run
	// Delivered and Messages count a traffic run's messages.
	Delivered, Messages int
	Elapsed             time.Duration
}

// StepOf returns a step by id, or the session's current step for "".
func (a *Active) StepOf(id string) (*teaching.Step, int, error) {
	if id == "" {
		i := min(a.Session.Step, len(a.Lab.Steps)-1)
		return a.Lab.Steps[i], i, nil
	}
	s, i, ok := a.Lab.Step(id)
	if !ok {
		var ids []string
		for _, s := range a.Lab.Steps {
			ids = append(ids, s.ID)
		}
		return nil, 0, fmt.Errorf("lab %s has no step %q (steps: %v)", a.Lab.ID, id, ids)
	}
	return s, i, nil
}

// RunStep runs a step's scenario on the student's lab.
func (m *Manager) RunStep(ctx context.Context, a *Active, stepID string) (*RunResult, error) {
	step, _, err := a.StepOf(stepID)
	if err != nil {
		return nil, err
	}
	if step.Run == nil {
		return nil, fmt.Errorf("step %s has no scenario to run: its commands are %q", step.ID, step.Do)
	}
	sc, err := m.loadScenario(step.Run, a.Facts)
	if err != nil {
		return nil, err
	}
	if m.Agents == nil {
		return nil, errors.New("this ftlab has no host agents built in")
	}
	res := &RunResult{Step: step.ID, Mode: step.Run.Mode}
	start := time.Now()
	sr := teaching.SessionRun{Mode: step.Run.Mode, Started: start.UTC()}
	switch step.Run.Mode {
	case teaching.RunTraffic:
		res.Delivered, res.Messages, err = m.traffic(ctx, a, sc)
		res.Elapsed = time.Since(start)
		sr.Summary = fmt.Sprintf("%d/%d messages delivered in %.2f s", res.Delivered, res.Messages, res.Elapsed.Seconds())
		if err != nil {
			return res, err
		}
	default:
		rel := filepath.Join(teaching.RunsDir, step.ID, start.UTC().Format("20060102-150405.000"))
		res.Dir = filepath.Join(a.Session.Workspace, rel)
		_, _, runErr := runner.Run(ctx, sc, runner.Options{Store: m.Store, ReuseLab: a.Session.LabName, Dir: res.Dir,
			Agents: m.Agents, Version: m.Version, Commit: m.Commit, Progress: m.Progress})
		res.Elapsed = time.Since(start)
		// The runner reprogrammed the data plane per cell and leaves the
		// last cell's, with the faults its scenario set: give the lab its
		// own data plane back, with the variant's faults.
		if err := m.restore(ctx, a); err != nil {
			return res, errors.Join(runErr, err)
		}
		if res.Run, err = teaching.ReadRun(step.ID, res.Dir); err != nil {
			return res, errors.Join(runErr, err)
		}
		sr.Dir, sr.Verdict = rel, res.Run.Verdict
		// A fidelity FAIL or WARN is the checks' to judge
		// (inconclusive), not an error of the run; anything else is.
		if runErr != nil && res.Run.Verdict == "" {
			return res, runErr
		}
	}
	if a.Session.Runs == nil {
		a.Session.Runs = map[string]teaching.SessionRun{}
	}
	a.Session.Runs[step.ID] = sr
	return res, m.save(a)
}

// restore reinstalls the lab's own data plane (its policy, link rates and
// seed; every counter zeroed) and applies the variant's faults.
func (m *Manager) restore(ctx context.Context, a *Active) error {
	dp, err := dataPlane(a.Lab, a.Facts.Seed)
	if err != nil {
		return err
	}
	st, err := m.Store.Reprogram(ctx, a.Session.LabName, dp, a.Lab.Topo)
	if err != nil {
		return err
	}
	return m.impair(st, a.Facts)
}

// loadScenario loads a step's scenario, with the student's picks in place
// of {pick.NAME} and {addr.NAME}, and the student's seed in place of the
// file's when the step says so: every student gets their own workload and
// random faults, the same at every rerun.
func (m *Manager) loadScenario(r *teaching.StepRun, facts *teaching.Facts) (*scenario.Scenario, error) {
	raw, err := os.ReadFile(r.Scenario)
	if err != nil {
		return nil, err
	}
	data := []byte(facts.Expand("", string(raw)))
	if r.VariantSeed {
		if data, err = withSeed(data, facts.Seed%1_000_000+1); err != nil {
			return nil, fmt.Errorf("%s: %w", r.Scenario, err)
		}
	}
	return scenario.Parse(r.Scenario, data)
}

// withSeed replaces a scenario document's seed (and seeds) by one seed,
// written last so every other line keeps its number in error messages.
func withSeed(data []byte, seed uint64) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return data, nil // the scenario loader says what is wrong
	}
	top := doc.Content[0]
	var kept []*yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		if k := top.Content[i].Value; k == "seed" || k == "seeds" {
			continue
		}
		kept = append(kept, top.Content[i], top.Content[i+1])
	}
	top.Content = append(kept,
		&yaml.Node{Kind: yaml.ScalarNode, Value: "seed"},
		&yaml.Node{Kind: yaml.ScalarNode, Value: strconv.FormatUint(seed, 10), Tag: "!!int"})
	return yaml.Marshal(&doc)
}

// traffic sends the scenario's first run through the lab as it is:
// nothing is reprogrammed, so the variant's hidden faults stay in place,
// and the counters (zeroed first) are the run's. Messages are released at
// their start offsets and after their dependencies, as in a run.
func (m *Manager) traffic(ctx context.Context, a *Active, sc *scenario.Scenario) (delivered, total int, err error) {
	cell := sc.Cells[0]
	run := cell.Runs[0]
	st, err := m.Store.Get(a.Session.LabName)
	if err != nil {
		return 0, 0, err
	}
	if err := m.Store.Control(st).ResetStats(); err != nil {
		return 0, 0, err
	}
	agents, err := m.Agents(ctx, st, m.Store, cell.Config, run)
	if err != nil {
		return 0, 0, fmt.Errorf("start agents: %w", err)
	}
	defer func() {
		if _, serr := agents.Stop(); serr != nil && err == nil {
			err = serr
		}
	}()
	total = len(run.Messages)
	waiting := make([]int, total)
	dependents := map[int][]int{}
	for i, msg := range run.Messages {
		waiting[i] = len(msg.After)
		for _, d := range msg.After {
			dependents[d] = append(dependents[d], i)
		}
	}
	start := time.Now()
	release := make(chan int, total)
	schedule := func(i int) {
		time.AfterFunc(max(0, time.Until(start.Add(run.Messages[i].Start))), func() { release <- i })
	}
	for i := range run.Messages {
		if waiting[i] == 0 {
			schedule(i)
		}
	}
	done := make([]bool, total)
	timeout := time.NewTimer(cell.Config.Timeout)
	defer timeout.Stop()
	for delivered < total {
		select {
		case <-ctx.Done():
			return delivered, total, ctx.Err()
		case <-timeout.C:
			return delivered, total, fmt.Errorf("%d of %d messages delivered within %s", delivered, total, cell.Config.Timeout)
		case i := <-release:
			if err := agents.Send(run.Messages[i]); err != nil {
				return delivered, total, err
			}
		case ev := <-agents.Events():
			switch {
			case ev.Kind == runner.EventError:
				return delivered, total, ev.Err
			case ev.Kind == runner.EventReceived && ev.Msg >= 0 && ev.Msg < total && !done[ev.Msg]:
				done[ev.Msg] = true
				delivered++
				for _, d := range dependents[ev.Msg] {
					if waiting[d]--; waiting[d] == 0 {
						schedule(d)
					}
				}
			}
		}
	}
	return delivered, total, nil
}
