package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/orchestrator/check"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/orchestrator/runner"
	"github.com/ftlab/ftlab/orchestrator/scenario"
)

// checkFlags are ftlab check's flags.
type checkFlags struct {
	dir, results, rate                  string
	asJSON, recalibrate, quick, require bool
	lanes, retries                      int
}

// options are the checks' options for the flags: every scenario runs on
// a lab named check, built once per fabric.
func (f *checkFlags) options(store *lab.Store, agents runner.AgentStarter, b BuildInfo) check.Options {
	return check.Options{Dir: f.dir, Quick: f.quick, Runner: runner.Options{Store: store, LabName: "check", ResultsRoot: f.results,
		Agents: agents, Version: b.Version, Commit: b.Commit, Lanes: f.lanes,
		RetryDisturbed: f.retries}}
}

// defaultCheckLanes is how many runs ftlab check runs at once by default:
// one. Two lanes halved the full check's time on the 2-core project
// machine (18 min against 35) but took the fidelity the verdicts rest on
// with them: the incast's and tornado's WARN runs doubled, and every run
// of the scenarios that keep a core busy on their own (Ofan with
// congestion control, PSN-PATH) was WARN (docs/paper-checks.md, "Lanes").
const defaultCheckLanes = 1

// defaultCheckRetries is how many times ftlab check runs a run again by
// default when the hypervisor disturbed it (--retry-disturbed): a claim
// rests on OK runs only, and on a shared VM a seed lost to the
// neighbours' load is a seed the claim's percentile lacks.
const defaultCheckRetries = 1

// errClaims is --require's failure: the report is printed, the exit code
// says not every claim holds.
var errClaims = errors.New("not every claim holds")

func (a *app) checkCommand() *cobra.Command {
	var f checkFlags
	cmd := &cobra.Command{
		Use:   "check [name...]",
		Short: "Run the paper checks: do the papers' claims hold in ftlab, in the papers' regime?",
		Long: `check runs the scenarios under scenarios/paper/, each a paper's setup in its
regime (the same BDP in packets, congestion control, timers and comparison
set, time-dilated: docs/regime.md), and for each check (ofan, ordered-chaos,
psn-path, rss-asymmetry; all when none is named) prints every claim with the
paper's number, ftlab's number, their ratio, the rule it is judged by, the
fidelity of the runs it rests on and its verdict: HOLDS, DOES NOT HOLD,
INCONCLUSIVE (too few seeds whose compared runs are all OK, or too little
data) or NO DATA. A seed with a run whose fidelity is not OK is left out of
every cell the claim compares.
It writes report.md (a section per check, with figures as PNG and SVG) and
checks.json under results/paper/check-<time>/. docs/paper-checks.md explains
each check and its findings.

A claim that does not hold is a finding and exits 0, unless --require, which
exits non-zero unless every claim holds. --quick runs a reduced version of
every check (one seed, fewer cells, small messages, at the scenarios' own
rates) to show that the pipeline works; its claims are mostly INCONCLUSIVE.

The paper scenarios run at fixed rates chosen for a 2-core machine; --rate
auto runs each at the rate this machine sustains with an OK fidelity verdict
(calibrating it once), --rate R at R.

Progress goes to stderr: a bar per scenario on a terminal, a line per finished
cell (its verdicts, its retries, the time left) anywhere else.`,
		Annotations: rootOnly(),
		RunE: func(cmd *cobra.Command, args []string) error {
			checks, err := check.Lookup(args)
			if err != nil {
				return err
			}
			if agentStarter == nil {
				return fmt.Errorf("this ftlab has no host agents built in")
			}
			if f.quick && (f.rate != "" || f.recalibrate) {
				return fmt.Errorf("--quick runs the reduced scenarios at their own rates: leave out --rate and --recalibrate")
			}
			opt := f.options(a.store, agentStarter, Build())
			opt.Runner.Notice = a.notice
			rf := defaultRateFlags()
			opt.Load = func(path string) (*scenario.Scenario, error) {
				return a.loadForRun(cmd.Context(), path, f.rate, f.recalibrate, &rf, opt.Runner)
			}
			// Each scenario's runs get a progress of their own: a bar on a
			// terminal, else a line per cell (the incast has 448 runs).
			tell, finish := func(runner.Progress) {}, func() {}
			if !f.asJSON {
				opt.Runner.Progress = func(p runner.Progress) { tell(p) }
				opt.Before = func(c, sc string) {
					finish()
					fmt.Fprintf(a.stderr, "check %s: running %s\n", c, sc)
					tell, finish = a.progress(fmt.Sprintf("check %s: %s", c, sc), everyCell)
				}
				opt.Done = func(r check.Result) {
					finish()
					tell, finish = func(runner.Progress) {}, func() {}
					fmt.Fprintf(a.stderr, "check %s: %s (%.0f s)\n", r.Name, r.Verdict, r.Seconds)
				}
			}
			opt.Failed = func(c string, err error) {
				finish()
				fmt.Fprintf(a.stderr, "check %s: %v\n", c, err)
			}
			rep, err := check.RunAll(cmd.Context(), checks, opt)
			finish()
			if rep == nil {
				return err
			}
			if f.asJSON {
				if perr := a.printJSON(rep); perr != nil {
					return perr
				}
			} else {
				check.WriteText(a.stdout, rep)
			}
			switch {
			case err != nil:
				return err
			case rep.Interrupted != "":
				return fmt.Errorf("%s; the report of the checks that finished is in %s", rep.Interrupted, rep.Dir)
			case len(rep.Errors) > 0:
				return fmt.Errorf("%d of %d checks could not be evaluated", len(rep.Errors), len(checks))
			case f.require && !rep.Holds():
				return errClaims
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&f.dir, "dir", "scenarios/paper", "directory holding the paper scenarios")
	cmd.Flags().StringVar(&f.results, "results", "results/paper", "directory under which each scenario's results and the checks' report are written")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print the report as JSON (checks.json's content)")
	cmd.Flags().BoolVar(&f.quick, "quick", false, "run a reduced version of every check: the pipeline, not the claims")
	cmd.Flags().BoolVar(&f.require, "require", false, "exit non-zero unless every claim holds")
	cmd.Flags().StringVar(&f.rate, "rate", "", "run every scenario at this full link rate instead of its own; auto: at its calibrated rate (calibrating first where there is none)")
	cmd.Flags().BoolVar(&f.recalibrate, "recalibrate", false, "with rate: auto, calibrate again even if this machine has a calibration")
	cmd.Flags().IntVar(&f.retries, "retry-disturbed", defaultCheckRetries, retryDisturbedUsage)
	cmd.Flags().IntVar(&f.lanes, "lanes", defaultCheckLanes, "runs at once, each on a lab of its own (check, check2, ...); every run's fidelity verdict is taken as they share the machine")
	return cmd
}
