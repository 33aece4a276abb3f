package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

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

// source loads the scenario a calibration is about.
type source func(scenario.Options) (*scenario.Scenario, error)

func fileSource(path string) source {
	return func(o scenario.Options) (*scenario.Scenario, error) { return scenario.LoadWith(path, o) }
}

// workloadFlags describe a scenario for calibrating a topology file.
type workloadFlags struct {
	workload, size, transport, policy string
}

// isTopologyFile tells a topology file (kind: at the top) from a scenario.
func isTopologyFile(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var top map[string]any
	if yaml.Unmarshal(data, &top) != nil {
		return false
	}
	_, kind := top["kind"]
	_, topo := top["topology"]
	return kind && !topo
}

// topologySource makes the scenario "this topology, this workload" that
// calibrating a topology file measures. Its problems are reported as in
// a file named after the topology.
func topologySource(path string, w workloadFlags) (source, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	doc, err := yaml.Marshal(map[string]any{
		"name":      name + "-" + w.workload,
		"topology":  abs,
		"workload":  map[string]string{"kind": w.workload, "size": w.size},
		"transport": w.transport,
		"policy":    w.policy,
	})
	if err != nil {
		return nil, err
	}
	file := strings.TrimSuffix(abs, filepath.Ext(abs)) + ".calibrate.yaml"
	return func(o scenario.Options) (*scenario.Scenario, error) { return scenario.ParseWith(file, doc, o) }, nil
}

// calibration runs a calibration of the scenario src loads, telling its
// trials on stderr, and keeps it in the cache (unless noCache).
func (a *app) calibration(ctx context.Context, src source, f *rateFlags, ro runner.Options, noCache bool) (*calibrate.Result, string, error) {
	opt, err := f.options()
	if err != nil {
		return nil, "", err
	}
	base, err := src(scenario.Options{})
	if err != nil {
		return nil, "", err
	}
	root := ro.ResultsRoot
	if root == "" {
		root = "results"
	}
	opt.Dir = filepath.Join(root, base.Name, "calibrate-"+time.Now().UTC().Format("20060102-150405"))
	opt.Runner = ro
	opt.Trial = func(t calibrate.Trial) {
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
		fmt.Fprintln(a.stderr)
	}
	var cache *calibrate.Cache
	if !noCache {
		dir, err := calibrate.CacheDir()
		if err != nil {
			return nil, "", err
		}
		if cache, err = calibrate.OpenCache(dir); err != nil {
			return nil, "", err
		}
	}
	load := func(rate uint64) (*scenario.Scenario, error) {
		return src(scenario.Options{Rate: rate, RateSource: "calibration trial"})
	}
	res, err := calibrate.Calibrate(ctx, load, opt, cache)
	return res, opt.Dir, err
}

func (a *app) calibrateCommand() *cobra.Command {
	var rf rateFlags
	var wf workloadFlags
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
			ro := runner.Options{Store: a.store, LabName: name, ResultsRoot: results, Agents: agentStarter, Version: b.Version, Commit: b.Commit}
			src := fileSource(args[0])
			if isTopologyFile(args[0]) {
				var err error
				if src, err = topologySource(args[0], wf); err != nil {
					return err
				}
			} else {
				for _, f := range []string{"workload", "size", "transport", "policy"} {
					if cmd.Flags().Changed(f) {
						return fmt.Errorf("--%s is for calibrating a topology file; %s is a scenario (edit it instead)", f, args[0])
					}
				}
			}
			fmt.Fprintf(a.stderr, "calibrating %s\n", args[0])
			res, dir, err := a.calibration(ctx, src, &rf, ro, noCache)
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
	cmd.Flags().StringVar(&wf.workload, "workload", "permutation", "with a topology file: the workload kind")
	cmd.Flags().StringVar(&wf.size, "size", "1MiB", "with a topology file: the message size")
	cmd.Flags().StringVar(&wf.transport, "transport", "rss+pfld", "with a topology file: the transport")
	cmd.Flags().StringVar(&wf.policy, "policy", "ecmp", "with a topology file: the switch policy")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the calibration as JSON")
	return cmd
}

// loadForRun loads a scenario for ftlab run and ftlab check: at --rate
// when it gives a rate; a scenario saying rate: auto (or any scenario,
// with --rate auto) at its cached calibration, calibrated first when
// there is none (or recalibrate is set).
func (a *app) loadForRun(ctx context.Context, path, rate string, recalibrate bool, rf *rateFlags, ro runner.Options) (*scenario.Scenario, error) {
	auto := strings.EqualFold(strings.TrimSpace(rate), "auto")
	if rate != "" && !auto {
		v, err := rateFlag("rate", rate)
		if err != nil {
			return nil, fmt.Errorf("%w; or auto", err)
		}
		return scenario.LoadWith(path, scenario.Options{Rate: v, RateSource: "--rate"})
	}
	sc, err := scenario.Load(path)
	if err != nil || !(auto || sc.NeedsRate()) {
		return sc, err
	}
	dir, err := calibrate.CacheDir()
	if err != nil {
		return nil, err
	}
	cache, err := calibrate.OpenCache(dir)
	if err != nil {
		return nil, err
	}
	key, err := calibrate.Key(func(rate uint64) (*scenario.Scenario, error) {
		return scenario.LoadWith(path, scenario.Options{Rate: rate})
	}, ro.Version)
	if err != nil {
		return nil, err
	}
	res := cache.Lookup(key)
	if res == nil || recalibrate {
		fmt.Fprintf(a.stderr, "%s runs at rate: auto and this machine has no calibration for it: calibrating first (once; kept in %s)\n", sc.Name, cache.Path())
		if res, _, err = a.calibration(ctx, fileSource(path), rf, ro, false); err != nil {
			return nil, fmt.Errorf("rate: auto: %w", err)
		}
		fmt.Fprintf(a.stderr, "calibrated: %s\n", res.Summary())
	}
	return scenario.LoadWith(path, scenario.Options{Rate: res.RateBps,
		RateSource: fmt.Sprintf("calibration of %s on this machine (%s)", res.Finished.Format("2006-01-02 15:04"), cache.Path())})
}
