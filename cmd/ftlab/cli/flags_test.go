package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/orchestrator/bench"
	"github.com/ftlab/ftlab/orchestrator/calibrate"
	"github.com/ftlab/ftlab/orchestrator/check"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/orchestrator/report"
	"github.com/ftlab/ftlab/orchestrator/runner"
	"github.com/ftlab/ftlab/orchestrator/scenario"
	"github.com/ftlab/ftlab/switchd"
)

// parse gives args to a command carrying only the flags add adds, as
// cobra would, and returns the command (for Changed).
func parse(t *testing.T, add func(*cobra.Command), args ...string) *cobra.Command {
	t.Helper()
	cmd := &cobra.Command{Use: "x"}
	add(cmd)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return cmd
}

// errText is err's message, "" for none.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestRateFlagsOptions(t *testing.T) {
	defaults := calibrate.Options{Min: calibrate.DefaultMin, Max: calibrate.DefaultMax,
		Precision: calibrate.DefaultPrecision, Confirm: calibrate.DefaultConfirm}
	for _, tt := range []struct {
		name string
		args []string
		want calibrate.Options
		err  string
	}{
		{"defaults", nil, defaults, ""},
		{"bounds", []string{"--min-rate", "2Mbit", "--max-rate", "1Gbit", "--start-rate", "50Mbit", "--precision", "0.1", "--confirm", "3"},
			calibrate.Options{Min: 2 * units.Mbit, Max: units.Gbit, Start: 50 * units.Mbit, Precision: 0.1, Confirm: 3}, ""},
		{"zero rate", []string{"--min-rate", "0bit"}, calibrate.Options{}, "--min-rate: must be greater than 0"},
		{"every bad rate", []string{"--min-rate", "x", "--start-rate", "y"}, calibrate.Options{}, "--min-rate: "},
		{"precision", []string{"--precision", "1.5"}, calibrate.Options{}, "--precision: 1.5 is outside (0, 1]"},
		{"confirm", []string{"--confirm", "-1"}, calibrate.Options{}, "--confirm: -1 is negative"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var f rateFlags
			parse(t, f.add, tt.args...)
			got, err := f.options()
			if !strings.Contains(errText(err), tt.err) || (tt.err == "") != (err == nil) {
				t.Fatalf("err = %v, want %q", err, tt.err)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreUnexported(calibrate.Options{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	var f rateFlags
	parse(t, f.add, "--min-rate", "x", "--start-rate", "y")
	if _, err := f.options(); !strings.Contains(errText(err), "--start-rate") {
		t.Errorf("two bad rates: %v, want both named", err)
	}
}

func TestRunRate(t *testing.T) {
	for _, tt := range []struct {
		rate        string
		recalibrate bool
		want        calibrate.RunRate
		err         string
	}{
		{"", false, calibrate.RunRate{}, ""},
		{"auto", true, calibrate.RunRate{Auto: true, Recalibrate: true}, ""},
		{" AUTO ", false, calibrate.RunRate{Auto: true}, ""},
		{"50Mbit", false, calibrate.RunRate{Rate: 50 * units.Mbit}, ""},
		{"0Mbit", false, calibrate.RunRate{}, "--rate: must be greater than 0; or auto"},
		{"fast", false, calibrate.RunRate{}, "; or auto"},
	} {
		got, err := runRate(tt.rate, tt.recalibrate)
		if !strings.Contains(errText(err), tt.err) || (tt.err == "") != (err == nil) {
			t.Errorf("%q: err = %v, want %q", tt.rate, err, tt.err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); err == nil && diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.rate, diff)
		}
	}
}

func TestRunFlagsOptions(t *testing.T) {
	store := &lab.Store{Dir: "/run/x", Prefix: "t-"}
	b := BuildInfo{Version: "v1", Commit: "abc"}
	ignore := cmpopts.IgnoreFields(runner.Options{}, "Agents")
	for _, tt := range []struct {
		name        string
		args        []string
		run, calib  runner.Options
		rate        string
		quiet, json bool
	}{
		{"defaults", nil,
			runner.Options{Store: store, LabName: "run", ResultsRoot: "results", Version: "v1", Commit: "abc", Lanes: 1},
			runner.Options{Store: store, LabName: "run", ResultsRoot: "results", Version: "v1", Commit: "abc", Lanes: 1}, "", false, false},
		{"reuse and strict: not for calibration trials", []string{"-n", "mine", "--lab", "up", "--results", "r", "--strict", "--rate", "auto", "-q", "--json"},
			runner.Options{Store: store, LabName: "mine", ReuseLab: "up", ResultsRoot: "r", Version: "v1", Commit: "abc", Strict: true, Lanes: 1},
			runner.Options{Store: store, LabName: "mine", ResultsRoot: "r", Version: "v1", Commit: "abc", Lanes: 1}, "auto", true, true},
		{"lanes: not for calibration trials", []string{"--lanes", "3"},
			runner.Options{Store: store, LabName: "run", ResultsRoot: "results", Version: "v1", Commit: "abc", Lanes: 3},
			runner.Options{Store: store, LabName: "run", ResultsRoot: "results", Version: "v1", Commit: "abc", Lanes: 1}, "", false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var f runFlags
			parse(t, f.add, tt.args...)
			run, calib := f.options(store, runner.InProcessAgents, b)
			if diff := cmp.Diff(tt.run, run, ignore); diff != "" {
				t.Errorf("run (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.calib, calib, ignore); diff != "" {
				t.Errorf("calibration (-want +got):\n%s", diff)
			}
			if run.Agents == nil || calib.Agents == nil {
				t.Error("no agents")
			}
			if f.rate != tt.rate || f.quiet != tt.quiet || f.asJSON != tt.json {
				t.Errorf("rate %q quiet %v json %v", f.rate, f.quiet, f.asJSON)
			}
		})
	}
}

func TestCheckFlagsOptions(t *testing.T) {
	store := &lab.Store{Dir: "/run/x", Prefix: "t-"}
	var f checkFlags
	parse(t, func(cmd *cobra.Command) {
		cmd.Flags().StringVar(&f.dir, "dir", "scenarios/paper", "")
		cmd.Flags().StringVar(&f.results, "results", "results/paper", "")
		cmd.Flags().BoolVar(&f.quick, "quick", false, "")
		cmd.Flags().IntVar(&f.lanes, "lanes", defaultCheckLanes, "")
	}, "--results", "out", "--quick", "--lanes", "2")
	got := f.options(store, runner.InProcessAgents, BuildInfo{Version: "v"})
	want := check.Options{Dir: "scenarios/paper", Quick: true, Runner: runner.Options{Store: store, LabName: "check", ResultsRoot: "out", Version: "v", Lanes: 2}}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(runner.Options{}, "Agents"), cmpopts.IgnoreFields(check.Options{}, "Load", "Before", "Failed", "Done")); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestBenchFlagsOptions(t *testing.T) {
	add := func(f *benchFlags) func(*cobra.Command) {
		return func(cmd *cobra.Command) {
			cmd.Flags().StringVar(&f.ks, "k", "4,8,16", "")
			cmd.Flags().StringVar(&f.ccs, "cc", "", "")
			cmd.Flags().BoolVar(&f.quick, "quick", false, "")
			cmd.Flags().IntVar(&f.reps, "repetitions", 0, "")
		}
	}
	for _, tt := range []struct {
		args []string
		want bench.Options
		err  string
	}{
		{nil, bench.Options{}, ""},
		{[]string{"--k", "4, 8", "--quick", "--repetitions", "2"}, bench.Options{K: []int{4, 8}, Quick: true, Repetitions: 2}, ""},
		{[]string{"--k", "4,5"}, bench.Options{}, `--k: "5" is not an even fat-tree size`},
		{[]string{"--k", ""}, bench.Options{}, `--k: "" is not`},
		{[]string{"--repetitions", "-1"}, bench.Options{}, "--repetitions: -1 is negative"},
		{[]string{"--cc", "mprdma, swift"}, bench.Options{CC: []string{"mprdma", "swift"}}, ""},
		{[]string{"--cc", "mprdma,cubic"}, bench.Options{}, `--cc: cc: unknown congestion control "cubic"`},
	} {
		var f benchFlags
		cmd := parse(t, add(&f), tt.args...)
		got, err := f.options(cmd.Flags().Changed("k"), io.Discard)
		if !strings.Contains(errText(err), tt.err) || (tt.err == "") != (err == nil) {
			t.Errorf("%v: err = %v, want %q", tt.args, err, tt.err)
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(bench.Options{}, "Log")); err == nil && diff != "" {
			t.Errorf("%v (-want +got):\n%s", tt.args, diff)
		}
	}
}

func TestUpFlagsOptions(t *testing.T) {
	def := switchd.DefaultPolicyParams()
	dp := switchd.Config{DataPlane: switchd.DataPlaneBPF, Mode: switchd.ModeLineRate, PipeSize: def.POfan.Pipe,
		AckThreshold: int(def.Ofan.AckThreshold), Seed: 1, ConvergenceDelay: switchd.DefaultConvergenceDelay,
		EdgePolicy: "ecmp", AggPolicy: "ecmp"}
	with := func(change func(*switchd.Config)) switchd.Config {
		c := dp
		change(&c)
		return c
	}
	for _, tt := range []struct {
		args []string
		want lab.UpOptions
		err  string
	}{
		{nil, lab.UpOptions{TopologyFile: "t.yaml", DataPlane: dp}, ""},
		{[]string{"-n", "k8", "--workers", "3", "--mode", "shaped", "--policy", "edge=ofan", "--trim", "--seed", "9", "--convergence-delay", "1s"},
			lab.UpOptions{TopologyFile: "t.yaml", Workers: 3, DataPlane: with(func(c *switchd.Config) {
				c.Mode, c.EdgePolicy, c.AggPolicy, c.Trim, c.Seed, c.ConvergenceDelay = switchd.ModeShaped, "ofan", "ofan", true, 9, time.Second
			})}, ""},
		{[]string{"--policy", "pofan", "--dataplane", "kernel"}, lab.UpOptions{TopologyFile: "t.yaml", DataPlane: with(func(c *switchd.Config) {
			c.EdgePolicy, c.AggPolicy, c.DataPlane = "pofan", "pofan", switchd.DataPlaneKernel
		})}, ""},
		{[]string{"-n", "Bad-Name"}, lab.UpOptions{}, "Bad-Name"},
		{[]string{"--policy", "core=ofan"}, lab.UpOptions{}, `unknown layer "core"`},
	} {
		var f upFlags
		parse(t, f.add, tt.args...)
		got, err := f.options("t.yaml")
		if !strings.Contains(errText(err), tt.err) || (tt.err == "") != (err == nil) {
			t.Errorf("%v: err = %v, want %q", tt.args, err, tt.err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); err == nil && diff != "" {
			t.Errorf("%v (-want +got):\n%s", tt.args, diff)
		}
	}
}

// TestSourceOf: bench calibrate calibrates a scenario file as it is, and a
// topology file with the workload flags, which a scenario refuses.
func TestSourceOf(t *testing.T) {
	dir := t.TempDir()
	topo := filepath.Join(dir, "k4.yaml")
	scn := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(topo, []byte("kind: fattree\nk: 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(scn, []byte("topology: k4.yaml\nworkload: {kind: permutation}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	none := func(string) bool { return false }
	w := calibrate.Workload{Kind: "tornado", Size: "64KiB", Transport: "rss", Policy: "ofan"}
	src, err := sourceOf(topo, w, none)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := src(scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := sc.Cells[0].Config
	if sc.Name != "k4-tornado" || cfg.Workload.Kind != "tornado" || cfg.Transport != "rss" || cfg.Policy.Edge() != "ofan" {
		t.Errorf("topology's scenario %s: %+v", sc.Name, cfg)
	}
	if src, err = sourceOf(scn, w, none); err != nil {
		t.Fatal(err)
	}
	if sc, err = src(scenario.Options{}); err != nil || sc.Cells[0].Config.Workload.Kind != "permutation" {
		t.Errorf("scenario as it is: %v", err)
	}
	if _, err := sourceOf(scn, w, func(f string) bool { return f == "size" }); !strings.Contains(errText(err), "--size is for calibrating a topology file") {
		t.Errorf("workload flag with a scenario: %v", err)
	}
}

func TestStoreOf(t *testing.T) {
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	def := lab.DefaultStore()
	for _, tt := range []struct {
		vars map[string]string
		want *lab.Store
		err  string
	}{
		{nil, def, ""},
		{map[string]string{"FTLAB_RUN_DIR": "/tmp/r", "FTLAB_PREFIX": "rp-"}, &lab.Store{Dir: "/tmp/r", Prefix: "rp-"}, ""},
		{map[string]string{"FTLAB_PREFIX": "no spaces"}, nil, "FTLAB_PREFIX: "},
	} {
		got, err := storeOf(env(tt.vars))
		if !strings.Contains(errText(err), tt.err) || (tt.err == "") != (err == nil) {
			t.Errorf("%v: err = %v, want %q", tt.vars, err, tt.err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%v (-want +got):\n%s", tt.vars, diff)
		}
	}
}

// TestInterrupted: a stopped run says so, with what it kept and where;
// one that was not stopped says nothing more.
func TestInterrupted(t *testing.T) {
	if err := interrupted(nil, "results/x/1", nil); err != nil {
		t.Errorf("not stopped: %v", err)
	}
	sum := &report.Summary{Fidelity: report.FidelitySummary{Runs: make([]report.RunVerdict, 3)}}
	err := interrupted(context.Canceled, "results/x/1", sum)
	if err == nil || !strings.Contains(err.Error(), "run interrupted") || !strings.Contains(err.Error(), "3 runs that finished are kept in results/x/1") {
		t.Errorf("stopped after 3 runs: %v", err)
	}
	if err := interrupted(context.Canceled, "", nil); err == nil || !strings.Contains(err.Error(), "before it wrote any results") {
		t.Errorf("stopped before any results: %v", err)
	}
}
