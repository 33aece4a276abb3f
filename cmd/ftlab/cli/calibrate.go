package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/orchestrator/calibrate"
	"github.com/ftlab/ftlab/orchestrator/runner"
	"github.com/ftlab/ftlab/orchestrator/scenario"
)

// rateFlags are the options of a calibration, shared by bench calibrate
// and run (which calibrates a rate: auto scenario it has no rate for).
type rateFlags struct {
	min, max, start string
	precision       float64
	confirm         int
}

// defaultRateFlags are the calibration defaults, for commands that
// calibrate without offering the flags.
func defaultRateFlags() rateFlags {
	return rateFlags{min: units.FormatRate(calibrate.DefaultMin), max: units.FormatRate(calibrate.DefaultMax),
		precision: calibrate.DefaultPrecision, confirm: calibrate.DefaultConfirm}
}

func (f *rateFlags) add(cmd *cobra.Command) {
	d := defaultRateFlags()
	cmd.Flags().StringVar(&f.min, "min-rate", d.min, "calibration: the lowest rate tried")
	cmd.Flags().StringVar(&f.max, "max-rate", d.max, "calibration: the highest rate tried")
	cmd.Flags().StringVar(&f.start, "start-rate", "", "calibration: the first rate tried (default: the scenario's own rate)")
	cmd.Flags().Float64Var(&f.precision, "precision", d.precision, "calibration: stop when the lowest rate that is not OK is within this fraction above the highest OK one")
	cmd.Flags().IntVar(&f.confirm, "confirm", d.confirm, "calibration: more trials at the found rate that must be OK too")
}

// rateFlag parses the rate given to --flag; "" is 0 (not given).
func rateFlag(flag, s string) (uint64, error) {
	if s == "" {
		return 0, nil
	}
	v, err := units.ParseRate(s)
	if err == nil && v == 0 {
		err = fmt.Errorf("must be greater than 0")
	}
	if err != nil {
		return 0, fmt.Errorf("--%s: %w", flag, err)
	}
	return v, nil
}

func (f *rateFlags) options() (calibrate.Options, error) {
	var o calibrate.Options
	var errs [3]error
	o.Min, errs[0] = rateFlag("min-rate", f.min)
	o.Max, errs[1] = rateFlag("max-rate", f.max)
	o.Start, errs[2] = rateFlag("start-rate", f.start)
	if err := errors.Join(errs[:]...); err != nil {
		return o, err
	}
	if f.precision <= 0 || f.precision > 1 {
		return o, fmt.Errorf("--precision: %g is outside (0, 1]", f.precision)
	}
	if f.confirm < 0 {
		return o, fmt.Errorf("--confirm: %d is negative", f.confirm)
	}
	o.Precision, o.Confirm = f.precision, f.confirm
	return o, nil
}

// calibrationOptions are a calibration's options from its flags, its
// trials run with ro and told on stderr.
func (a *app) calibrationOptions(f *rateFlags, ro runner.Options) (calibrate.Options, error) {
	opt, err := f.options()
	if err != nil {
		return opt, err
	}
	opt.Runner, opt.Trial = ro, a.printTrial
	return opt, nil
}

// printTrial tells one calibration trial on stderr.
func (a *app) printTrial(t calibrate.Trial) {
	verdict := string(t.Verdict)
	if verdict == "" {
		verdict = "-"
	}
	fmt.Fprintf(a.stderr, "  trial %d at %s: %s in %s", t.N, units.FormatRate(t.RateBps), verdict, t.Elapsed.Round(100*time.Millisecond))
	if !t.OK && len(t.Reasons) > 0 {
		fmt.Fprintf(a.stderr, ", not OK: %s", t.Reasons[0])
		if len(t.Reasons) > 1 {
			fmt.Fprintf(a.stderr, " (and %d more)", len(t.Reasons)-1)
		}
	}
	if t.Repeated { // its last reason says why it is asked again
		fmt.Fprintf(a.stderr, "; %s", t.Reasons[len(t.Reasons)-1])
	}
	fmt.Fprintln(a.stderr)
}

// workloadFlagNames are the flags describing the scenario of a topology
// file.
var workloadFlagNames = []string{"workload", "size", "transport", "policy"}

// sourceOf is what bench calibrate calibrates: the scenario file at path,
// or the scenario of a topology file with the workload flags, which are
// refused with a scenario (changed says which flags were given).
func sourceOf(path string, w calibrate.Workload, changed func(flag string) bool) (calibrate.Source, error) {
	if calibrate.IsTopologyFile(path) {
		return calibrate.TopologySource(path, w)
	}
	for _, f := range workloadFlagNames {
		if changed(f) {
			return nil, fmt.Errorf("--%s is for calibrating a topology file; %s is a scenario (edit it instead)", f, path)
		}
	}
	return calibrate.FileSource(path), nil
}

func (a *app) calibrateCommand() *cobra.Command {
	var rf rateFlags
	var wf calibrate.Workload
	var name, results string
	var asJSON, noCache bool
	cmd := &cobra.Command{
		Use:   "calibrate <scenario.yaml | topology.yaml>",
		Short: "Find the highest link rate this machine runs a scenario at with an OK fidelity verdict",
		Long: `calibrate runs the scenario's cells (its first seed) at one full link rate per
trial - the rate of the fabric's fastest link, every other link keeping its
ratio to it - and searches for the highest rate at which every run completes
with an OK fidelity verdict: doubling or halving from --start-rate, then
bisecting to --precision, then confirming. Below that rate the emulated network,
not this machine's CPU, sets the numbers.

The answer is kept in a cache ($FTLAB_CACHE_DIR, or ~/.cache/ftlab) for this
machine, this ftlab and this scenario (its rate left out): scenarios saying
rate: auto then run at it. Every trial's results and a report.md are written to
results/<scenario>/calibrate-<time>/.

Given a topology file instead of a scenario, calibrate measures the scenario
of that topology with --workload, --size, --transport and --policy (and every
other setting at its default).`,
		Args:        cobra.ExactArgs(1),
		Annotations: rootOnly(),
		RunE: func(cmd *cobra.Command, args []string) error {
			if agentStarter == nil {
				return fmt.Errorf("this ftlab has no host agents built in")
			}
			ctx := cmd.Context()
			b := Build()
			ro := runner.Options{Store: a.store, LabName: name, ResultsRoot: results, Agents: agentStarter, Version: b.Version, Commit: b.Commit,
				Notice: a.notice}
			src, err := sourceOf(args[0], wf, cmd.Flags().Changed)
			if err != nil {
				return err
			}
			opt, err := a.calibrationOptions(&rf, ro)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stderr, "calibrating %s\n", args[0])
			res, dir, err := calibrate.Run(ctx, src, opt, noCache)
			if res != nil {
				if asJSON {
					if jerr := a.printJSON(res); jerr != nil {
						return jerr
					}
				} else if err == nil {
					fmt.Fprintf(a.stdout, "%s\nreport: %s\n", res.Summary(), filepath.Join(dir, calibrate.ReportFile))
				} else {
					fmt.Fprintf(a.stdout, "report: %s\n", filepath.Join(dir, calibrate.ReportFile))
				}
			}
			return err
		},
	}
	rf.add(cmd)
	cmd.Flags().StringVarP(&name, "name", "n", "calib", "lab name used for the trials' fabrics")
	cmd.Flags().StringVar(&results, "results", "results", "directory under which results/<scenario>/calibrate-<time>/ is written")
	cmd.Flags().BoolVar(&noCache, "no-cache", false, "do not keep the answer for rate: auto")
	cmd.Flags().StringVar(&wf.Kind, "workload", "permutation", "with a topology file: the workload kind")
	cmd.Flags().StringVar(&wf.Size, "size", "1MiB", "with a topology file: the message size")
	cmd.Flags().StringVar(&wf.Transport, "transport", "rss+pfld", "with a topology file: the transport")
	cmd.Flags().StringVar(&wf.Policy, "policy", "ecmp", "with a topology file: the switch policy")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the calibration as JSON")
	return cmd
}

// runRate parses --rate (and --recalibrate) of ftlab run and ftlab check:
// a rate, auto, or nothing (the scenario's own).
func runRate(rate string, recalibrate bool) (calibrate.RunRate, error) {
	r := calibrate.RunRate{Recalibrate: recalibrate, Auto: strings.EqualFold(strings.TrimSpace(rate), "auto")}
	if rate != "" && !r.Auto {
		v, err := rateFlag("rate", rate)
		if err != nil {
			return r, fmt.Errorf("%w; or auto", err)
		}
		r.Rate = v
	}
	return r, nil
}

// loadForRun loads a scenario for ftlab run and ftlab check at the rate
// --rate says (calibrate.ForRun), calibrating with rf and ro where it must.
func (a *app) loadForRun(ctx context.Context, path, rate string, recalibrate bool, rf *rateFlags, ro runner.Options) (*scenario.Scenario, error) {
	r, err := runRate(rate, recalibrate)
	if err != nil {
		return nil, err
	}
	opt, err := a.calibrationOptions(rf, ro)
	if err != nil {
		return nil, err
	}
	return calibrate.ForRun(ctx, path, r, opt, a.stderr)
}
