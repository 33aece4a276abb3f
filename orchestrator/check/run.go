package check

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/orchestrator/fidelity"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/orchestrator/report/figure"
	"github.com/ftlab/ftlab/orchestrator/results"
	"github.com/ftlab/ftlab/orchestrator/runner"
	"github.com/ftlab/ftlab/orchestrator/scenario"
)

// Options configure RunAll.
type Options struct {
	Dir string // the paper scenarios directory
	// Runner runs the scenarios. Its LabName (default "check") is the lab
	// the checks build and reuse for every scenario of the same fabric;
	// ReuseLab is set by RunAll. Its ResultsRoot holds each scenario's
	// results directory and the checks' report directory.
	Runner runner.Options
	// Quick runs each check's reduced scenarios (Check.Quick) at their
	// own rates.
	Quick bool
	// Load loads a scenario file for a full run (default scenario.Load);
	// ftlab check passes its own for --rate and rate: auto.
	Load func(path string) (*scenario.Scenario, error)
	// Before is told about each scenario before it runs; Failed about each
	// check that could not be evaluated; Done about each result.
	Before func(check, scenario string)
	Failed func(check string, err error)
	Done   func(Result)
}

// Result is one check's outcome.
type Result struct {
	Check
	Quick   bool             `json:"quick"`
	Verdict Verdict          `json:"verdict"`
	Claims  []Claim          `json:"claims"`
	Runs    []ScenarioResult `json:"runs"`
	Figures []string         `json:"figures,omitempty"` // files in the report directory
	Tables  string           `json:"tables,omitempty"`  // markdown
	Seconds float64          `json:"seconds"`
	Skipped string           `json:"skipped,omitempty"` // scenarios that did not run
	Errors  []string         `json:"errors,omitempty"`  // figures that could not be drawn
}

// ScenarioResult is one scenario of a check as it ran: where its results
// are, at what rate and in what regime, and its runs' fidelity.
type ScenarioResult struct {
	File     string `json:"file"`
	Name     string `json:"name"`
	Dir      string `json:"results"`
	Cells    int    `json:"cells"`
	Runs     int    `json:"runs"`
	Seeds    int    `json:"seeds"`
	Rate     string `json:"rate"`
	Regime   string `json:"regime"`
	Delays   string `json:"delays"`
	Fidelity string `json:"fidelity"`
	// FidelityCounts: runs per verdict.
	FidelityCounts map[fidelity.Verdict]int `json:"fidelity_counts"`
	// Retried: tries run again because the hypervisor disturbed them
	// (runner Options.RetryDisturbed); not counted in FidelityCounts.
	Retried  int     `json:"retried,omitempty"`
	RunError string  `json:"run_error,omitempty"`
	Seconds  float64 `json:"seconds"`
	regime   scenario.Regime
}

// Report is what RunAll ran: every result, and the directory holding
// report.md, checks.json and the figures.
type Report struct {
	Dir      string    `json:"dir"`
	Quick    bool      `json:"quick"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	Results  []Result  `json:"results"`
	Errors   []string  `json:"errors,omitempty"`
	// Interrupted says why the checks stopped before the last one ran
	// (empty: they all ran); the checks that finished are in Results.
	Interrupted string `json:"interrupted,omitempty"`
}

// Verdict is the worst of the checks' verdicts (NO DATA without any).
func (r *Report) Verdict() Verdict {
	var claims []Claim
	for _, res := range r.Results {
		claims = append(claims, Claim{Verdict: res.Verdict})
	}
	return Combine(claims)
}

// Holds reports whether every claim of every check holds and every check
// could be evaluated: what ftlab check --require asks.
func (r *Report) Holds() bool {
	if len(r.Errors) > 0 || len(r.Results) == 0 {
		return false
	}
	for _, res := range r.Results {
		for _, c := range res.Claims {
			if c.Verdict != Holds {
				return false
			}
		}
	}
	return true
}

// RunAll runs the checks in order and writes their report. A check that
// cannot be evaluated is one of the report's errors, and the others still
// run, until ctx ends. The error is for a report that could not be
// written.
func RunAll(ctx context.Context, checks []Check, opt Options) (*Report, error) {
	if opt.Runner.LabName == "" {
		opt.Runner.LabName = "check"
	}
	if opt.Runner.ResultsRoot == "" {
		opt.Runner.ResultsRoot = "results/paper"
	}
	rep := &Report{Quick: opt.Quick, Started: time.Now().UTC()}
	dir, err := results.NewDir(opt.Runner.ResultsRoot, "check-"+rep.Started.Format("20060102-150405"))
	if err != nil {
		return nil, err
	}
	rep.Dir = dir
	labs := &labSet{store: opt.Runner.Store, name: opt.Runner.LabName, lanes: max(1, opt.Runner.Lanes), notice: opt.Runner.Notice}
	defer labs.close()
	for _, c := range checks {
		res, err := runOne(ctx, c, opt, labs, dir)
		if err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("check %s: %v", c.Name, err))
			if opt.Failed != nil {
				opt.Failed(c.Name, err)
			}
			if ctx.Err() != nil {
				rep.Interrupted = fmt.Sprintf("interrupted (%v) during check %s", ctx.Err(), c.Name)
				break
			}
			continue
		}
		rep.Results = append(rep.Results, res)
		if opt.Done != nil {
			opt.Done(res)
		}
	}
	rep.Finished = time.Now().UTC()
	if err := errors.Join(labs.close(), writeReport(rep)); err != nil {
		return rep, err
	}
	return rep, nil
}

// runOne runs a check's scenarios and evaluates its claims.
func runOne(ctx context.Context, c Check, opt Options, labs *labSet, reportDir string) (Result, error) {
	start := time.Now()
	res := Result{Check: c, Quick: opt.Quick}
	in := Inputs{}
	var skipped []string
	for _, f := range c.Scenarios {
		red, reduced := c.Quick[f]
		if opt.Quick && red.Skip {
			skipped = append(skipped, f+" (left out by --quick)")
			continue
		}
		path := filepath.Join(opt.Dir, f)
		var sc *scenario.Scenario
		var err error
		switch {
		case opt.Quick && reduced:
			sc, err = loadReduced(path, red.Patch, scenario.Options{})
		case opt.Load != nil:
			sc, err = opt.Load(path)
		default:
			sc, err = scenario.Load(path)
		}
		if err != nil {
			return res, err
		}
		if opt.Before != nil {
			opt.Before(c.Name, sc.Name)
		}
		sr, d, err := runScenario(ctx, f, sc, opt.Runner, labs)
		if err != nil {
			return res, fmt.Errorf("%s: %w", path, err)
		}
		res.Runs = append(res.Runs, sr)
		in[f] = d
	}
	res.Skipped = strings.Join(skipped, ", ")
	ev := c.Evaluate(in)
	res.Claims, res.Tables = ev.Claims, ev.Tables
	res.Verdict = Combine(ev.Claims)
	for _, f := range ev.Figures {
		f.Name = c.Name + "-" + f.Name
		files, err := figure.Write(reportDir, f)
		if err != nil {
			res.Errors = append(res.Errors, err.Error())
		}
		for _, file := range files {
			res.Figures = append(res.Figures, filepath.Base(file))
		}
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// runScenario runs one scenario on the checks' lab and reads back what it
// recorded.
func runScenario(ctx context.Context, file string, sc *scenario.Scenario, ro runner.Options, labs *labSet) (ScenarioResult, *Data, error) {
	start := time.Now()
	sr := ScenarioResult{File: file, Name: sc.Name, Cells: len(sc.Cells), Seeds: len(sc.Seeds), FidelityCounts: map[fidelity.Verdict]int{}}
	if len(sc.Cells) == 0 {
		return sr, nil, errors.New("no cells")
	}
	cfg := sc.Cells[0].Config
	sr.Rate, sr.regime = RateOf(sc), cfg.Regime
	sigma := 0
	for _, c := range sc.Cells {
		sigma = max(sigma, sigmaOf(c.Config))
	}
	sr.Regime = cfg.Regime.Describe(sigma)
	sr.Delays = delays(cfg.Topo())
	if err := labs.forScenario(ctx, sc); err != nil {
		return sr, nil, err
	}
	ro.ReuseLab, ro.LaneLabs = labs.names[0], labs.names[1:]
	dir, sum, err := runner.Run(ctx, sc, ro)
	sr.Dir = dir
	if sum == nil {
		if err == nil {
			err = errors.New("no summary")
		}
		return sr, nil, err
	}
	if ctx.Err() != nil {
		return sr, nil, fmt.Errorf("interrupted (%w): the runs that finished are kept in %s", ctx.Err(), dir)
	}
	if err != nil {
		sr.RunError = err.Error()
	}
	d, rerr := DataOf(file, sc, dir)
	if rerr != nil {
		return sr, nil, rerr
	}
	worstV := fidelity.OK
	for _, r := range d.Runs {
		v := fidelity.FAIL
		if r.Meta.Fidelity != nil {
			v = r.Meta.Fidelity.Verdict
		}
		sr.FidelityCounts[v]++
		worstV = fidelity.Worst(worstV, v)
		sr.Runs++
	}
	sr.Fidelity, sr.Retried = string(worstV), sum.Fidelity.Retried
	sr.Seconds = time.Since(start).Seconds()
	return sr, d, nil
}

// sigmaOf is the cell's RSS sigma (0 without RSS).
func sigmaOf(cfg *scenario.Config) int {
	if cfg.RSS != nil {
		return cfg.RSS.Sigma
	}
	return 0
}

// RateOf says at what rate a scenario's fabric runs: "50Mbit (the
// topology's)", or scenario.RateInfo.Describe.
func RateOf(sc *scenario.Scenario) string {
	if len(sc.Cells) == 0 || sc.Cells[0].Config.Topo() == nil {
		return "?"
	}
	cfg := sc.Cells[0].Config
	if r := cfg.Rate; r != nil && r.FullBps != 0 {
		return r.Describe()
	}
	return units.FormatRate(cfg.Topo().FullRate()) + " (the topology's)"
}

// labSet is the labs the checks run on, one per lane (runner.Options.Lanes):
// built for the first scenario and reused by every following one on the
// same fabric (their data planes are reprogrammed per cell as needed),
// rebuilt when the fabric changes.
type labSet struct {
	store  *lab.Store
	name   string
	lanes  int
	notice func(string) // runner.Options.Notice
	names  []string     // the labs that are up
	shape  string       // their fabric; "" when none is up
}

func (l *labSet) forScenario(ctx context.Context, sc *scenario.Scenario) error {
	cfg := sc.Cells[0].Config
	t := cfg.Topo()
	shape := shapeOf(t)
	if l.shape == shape {
		return nil
	}
	if err := l.close(); err != nil {
		return err
	}
	seed := runner.CellSeed(sc.Cells[0])
	names, err := runner.LaneNames(l.store, l.name, l.lanes)
	if err != nil {
		return err
	}
	l.shape = shape
	for _, name := range names {
		// The lab is the check's: a check killed before it could take
		// it down leaves a leftover that plain ftlab cleanup, or the next
		// check, removes.
		opt := lab.UpOptions{TopologyFile: cfg.Topology.Source, DataPlane: runner.DataPlaneOf(cfg, seed), Owned: true,
			Reclaim: true, Reclaimed: runner.Reclaimed(l.notice)}
		if _, err := l.store.Up(ctx, name, t, opt); err != nil {
			return errors.Join(fmt.Errorf("build lab %s: %w", name, err), l.close())
		}
		l.names = append(l.names, name)
	}
	return nil
}

func (l *labSet) close() error {
	var errs []error
	for _, name := range l.names {
		if err := l.store.Down(name); err != nil {
			errs = append(errs, fmt.Errorf("take lab %s down: %w", name, err))
		}
	}
	l.names, l.shape = nil, ""
	return errors.Join(errs...)
}

// shapeOf is what a lab's namespaces and veths are: nodes, addresses,
// links and MTUs (rates, buffers, delays are the data plane's).
func shapeOf(t *topology.Topology) string {
	var b strings.Builder
	for _, n := range t.Nodes {
		fmt.Fprintf(&b, "%s=%s;", n.Name, n.Addr)
	}
	for _, l := range t.Links {
		fmt.Fprintf(&b, "%s/%d;", l.Name, l.MTU)
	}
	return b.String()
}
