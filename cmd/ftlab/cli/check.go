package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/orchestrator/check"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/orchestrator/runner"
	"github.com/ftlab/ftlab/orchestrator/scenario"
)

// checkFlags are ftlab check's flags.
type checkFlags struct {
	dir, results, rate  string
	asJSON, recalibrate bool
}

// options are the checks' options for the flags: each check's scenarios
// run on a lab named check.
func (f *checkFlags) options(store *lab.Store, agents runner.AgentStarter, b BuildInfo) check.Options {
	return check.Options{Dir: f.dir, Runner: runner.Options{Store: store, LabName: "check", ResultsRoot: f.results,
		Agents: agents, Version: b.Version, Commit: b.Commit}}
}

func (a *app) checkCommand() *cobra.Command {
	var f checkFlags
	cmd := &cobra.Command{
		Use:   "check [name...]",
		Short: "Run the paper checks: does a paper's claim hold in ftlab, scaled down?",
		Long: `check runs the scenarios under scenarios/paper/ and, for each check (ofan,
ordered-chaos, psn-path, rss-asymmetry; all when none is named), prints the
paper's claim, how it was scaled down, ftlab's measurement, whether the claim
HOLDS or DOES NOT HOLD, and the runs' fidelity verdict. A claim that does not
hold is a finding and exits 0; only a check that could not run is an error.

The paper scenarios run at rates calibrated on a 2-vCPU machine; --rate auto
runs each at the rate this machine sustains with an OK fidelity verdict
(calibrating it once), --rate R at R.`,
		Annotations: rootOnly(),
		RunE: func(cmd *cobra.Command, args []string) error {
			checks, err := check.Lookup(args)
			if err != nil {
				return err
			}
			if agentStarter == nil {
				return fmt.Errorf("this ftlab has no host agents built in")
			}
			opt := f.options(a.store, agentStarter, Build())
			rf := defaultRateFlags()
			opt.Load = func(path string) (*scenario.Scenario, error) {
				return a.loadForRun(cmd.Context(), path, f.rate, f.recalibrate, &rf, opt.Runner)
			}
			if !f.asJSON {
				opt.Before = func(c, sc string) { fmt.Fprintf(a.stderr, "check %s: running %s\n", c, sc) }
			}
			opt.Failed = func(c string, err error) { fmt.Fprintf(a.stderr, "check %s: %v\n", c, err) }
			start := time.Now()
			out, failed := check.RunAll(cmd.Context(), checks, opt)
			errs := make([]string, len(failed))
			for i, err := range failed {
				errs[i] = err.Error()
			}
			if f.asJSON {
				if err := a.printJSON(struct {
					Results []check.Result `json:"results"`
					Errors  []string       `json:"errors,omitempty"`
				}{out, errs}); err != nil {
					return err
				}
			} else {
				writeChecks(a.stdout, out)
				fmt.Fprintf(a.stdout, "\n%d checks in %s\n", len(out), time.Since(start).Round(time.Second))
			}
			if len(errs) > 0 {
				return fmt.Errorf("%d of %d checks could not be evaluated", len(errs), len(checks))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&f.dir, "dir", "scenarios/paper", "directory holding the paper scenarios")
	cmd.Flags().StringVar(&f.results, "results", "results/paper", "directory under which each scenario's results are written")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print the results as JSON")
	cmd.Flags().StringVar(&f.rate, "rate", "", "run every scenario at this full link rate instead of its own; auto: at its calibrated rate (calibrating first where there is none)")
	cmd.Flags().BoolVar(&f.recalibrate, "recalibrate", false, "with rate: auto, calibrate again even if this machine has a calibration")
	return cmd
}

// writeChecks prints the summary table, then each check in full.
func writeChecks(w io.Writer, rs []check.Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tPAPER\tVERDICT\tFIDELITY")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, r.Paper, verdictWord(r.Holds), r.Fidelity)
	}
	_ = tw.Flush()
	for _, r := range rs {
		fmt.Fprintf(w, "\n== %s: %s\n", r.Name, verdictWord(r.Holds))
		fmt.Fprintf(w, "  paper's claim: %s (%s)\n", r.Claim, r.Paper)
		fmt.Fprintf(w, "  scale-down:    %s\n", r.ScaleDown)
		fmt.Fprintf(w, "  link rate:     %s\n", strings.Join(r.Rates, ", "))
		if r.Note != "" {
			fmt.Fprintf(w, "  how judged:    %s\n", r.Note)
		}
		fmt.Fprintf(w, "  measured:      %s\n", strings.ReplaceAll(r.Measurement, " | ", "\n                 "))
		fmt.Fprintf(w, "  fidelity:      %s\n", r.Fidelity)
		if r.RunError != "" {
			fmt.Fprintf(w, "  run reported:  %s\n", r.RunError)
		}
		fmt.Fprintf(w, "  results:       %s\n", strings.Join(r.Dirs, ", "))
	}
}

func verdictWord(holds bool) string {
	if holds {
		return "HOLDS"
	}
	return "DOES NOT HOLD"
}
