package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/orchestrator/fidelity"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/orchestrator/report"
	"github.com/ftlab/ftlab/orchestrator/runner"
)

// agentStarter starts the host agents of a run: in-process agents that
// speak the hostagent control protocol over pipes.
var agentStarter runner.AgentStarter = runner.InProcessAgents

// runFlags are ftlab run's flags.
type runFlags struct {
	name, reuse, results, rate         string
	quiet, asJSON, strict, recalibrate bool
	lanes, retries                     int
	calibration                        rateFlags
}

func (f *runFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.name, "name", "n", "run", "lab name used for each cell's fabric")
	cmd.Flags().StringVar(&f.reuse, "lab", "", "run every cell on this lab, which is up with the scenario's topology (its data plane is reprogrammed per cell; the lab stays up)")
	cmd.Flags().StringVar(&f.results, "results", "results", "directory under which results/<scenario>/<timestamp>/ is written")
	cmd.Flags().BoolVarP(&f.quiet, "quiet", "q", false, "no progress bar and no report on stdout; print only the results directory")
	cmd.Flags().BoolVar(&f.strict, "strict", false, "fail the scenario (non-zero exit) when its fidelity verdict is WARN, not only FAIL")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print the results directory and summary as JSON")
	cmd.Flags().StringVar(&f.rate, "rate", "", "run at this full link rate (the fastest link's; the others keep their ratio) instead of the scenario's; auto: the calibrated rate")
	cmd.Flags().BoolVar(&f.recalibrate, "recalibrate", false, "for rate: auto, calibrate again even if this machine has a calibration")
	cmd.Flags().IntVar(&f.lanes, "lanes", 1, "runs at once, each on a lab of its own (the --name lab, then name2, ...; with --lab, one lane); every run's fidelity verdict is taken as they share the machine")
	cmd.Flags().IntVar(&f.retries, "retry-disturbed", 0, retryDisturbedUsage)
	f.calibration.add(cmd)
}

// retryDisturbedUsage is the help of run's and check's --retry-disturbed.
var retryDisturbedUsage = fmt.Sprintf("run a run again, with the same seed, when its verdict is WARN while the hypervisor took %.0f%% of the cores or more (steal), at most this many times; the last try counts, the others are kept in run.json (retried)", 100*fidelity.DisturbedSteal)

// options are the runner's options for the flags, and those of the
// calibration trials the run may have to make first: on labs of their
// own, never --strict.
func (f *runFlags) options(store *lab.Store, agents runner.AgentStarter, b BuildInfo) (run, calib runner.Options) {
	run = runner.Options{Store: store, LabName: f.name, ReuseLab: f.reuse, ResultsRoot: f.results, Agents: agents,
		Version: b.Version, Commit: b.Commit, Strict: f.strict, Lanes: f.lanes, RetryDisturbed: f.retries}
	calib = run
	calib.ReuseLab, calib.Strict, calib.Lanes, calib.RetryDisturbed = "", false, 1, 0
	return run, calib
}

func (a *app) runCommand() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run <scenario.yaml>",
		Short: "Run a scenario: every cell of its matrix, every repetition",
		Long: `run builds each cell's fabric, runs the workload with the cell's switch policy and
transport, injects the faults on schedule, and writes run.json, flows.csv,
links.csv, summary.json and report.md under results/<scenario>/<timestamp>/. It
always takes down what it built, also on Ctrl-C; finished runs are kept and an
interrupted scenario is marked incomplete. Every run gets a fidelity verdict (OK,
WARN, FAIL: do its numbers reflect the emulated network or the machine?); a FAIL
fails the scenario, and so does a WARN with --strict.

A scenario saying rate: auto runs at the rate "ftlab bench calibrate" found for
it on this machine; without one, run calibrates first (once: the answer is
kept). --rate runs any scenario at another full link rate, the fabric's other
links keeping their ratio to the fastest.

Progress goes to stderr: a bar on a terminal, one line per finished run (with
its verdict) anywhere else. A run whose lab name is taken by a killed run's
leftover removes that lab first and says so.`,
		Args:        cobra.ExactArgs(1),
		Annotations: rootOnly(),
		RunE: func(cmd *cobra.Command, args []string) error {
			if agentStarter == nil {
				return fmt.Errorf("this ftlab has no host agents built in")
			}
			opt, calib := f.options(a.store, agentStarter, Build())
			opt.Notice, calib.Notice = a.notice, a.notice
			sc, err := a.loadForRun(cmd.Context(), args[0], f.rate, f.recalibrate, &f.calibration, calib)
			if err != nil {
				return err
			}
			var finish func()
			if !f.quiet && !f.asJSON {
				opt.Progress, finish = a.progress(sc.Name, everyRun)
			}
			dir, sum, err := runner.Run(cmd.Context(), sc, opt)
			if finish != nil {
				finish()
			}
			if f.asJSON {
				if jerr := a.printJSON(struct {
					Dir     string          `json:"dir"`
					Summary *report.Summary `json:"summary"`
					Error   string          `json:"error,omitempty"`
				}{dir, sum, errString(err)}); jerr != nil {
					return jerr
				}
			} else if dir != "" {
				if !f.quiet {
					if md, rerr := os.ReadFile(filepath.Join(dir, report.ReportFile)); rerr == nil {
						fmt.Fprintln(a.stdout, string(md))
					}
				}
				fmt.Fprintf(a.stdout, "results: %s\n", dir)
				if sum != nil {
					report.WriteVerdicts(a.stderr, sum.Fidelity)
				}
			}
			if ierr := interrupted(cmd.Context().Err(), dir, sum); ierr != nil {
				return ierr
			}
			return err
		},
	}
	f.add(cmd)
	return cmd
}

// interrupted is what ftlab run says when it was stopped (Ctrl-C, a
// signal): that the run did not finish, what it kept and where; nil when
// ctxErr is (it was not stopped).
func interrupted(ctxErr error, dir string, sum *report.Summary) error {
	if ctxErr == nil {
		return nil
	}
	if dir == "" {
		return fmt.Errorf("run interrupted (%v) before it wrote any results; the labs it built are down", ctxErr)
	}
	n := 0
	if sum != nil {
		n = len(sum.Fidelity.Runs)
	}
	return fmt.Errorf("run interrupted (%v): the %d runs that finished are kept in %s, whose run.json says it is incomplete; the labs it built are down", ctxErr, n, dir)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func (a *app) reportCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "report <results-dir>",
		Short: "Rebuild summary.json and report.md from a run's raw files",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := report.Rebuild(args[0]); err != nil {
				return err
			}
			data, err := os.ReadFile(filepath.Join(args[0], report.ReportFile))
			if err != nil {
				return err
			}
			_, err = a.stdout.Write(data)
			return err
		},
	}
}

func (a *app) compareCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "compare <results-dir> <results-dir>",
		Short: "Put two runs side by side, cell by cell",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			x, err := report.Load(args[0])
			if err != nil {
				return err
			}
			y, err := report.Load(args[1])
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(report.Compare(args[0], args[1], x, y))
			}
			report.WriteCompare(a.stdout, args[0], args[1], x, y)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print both runs' figures, cell by cell, as JSON")
	return cmd
}
