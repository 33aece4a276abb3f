package calibrate

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/orchestrator/fidelity"
	"github.com/ftlab/ftlab/orchestrator/report"
	"github.com/ftlab/ftlab/orchestrator/runner"
	"github.com/ftlab/ftlab/orchestrator/scenario"
)

const testScenario = `name: calib
topology: {kind: fattree, k: 4, links: {rate: 100Mbit}}
rate: auto
workload: {kind: permutation, size: 64KiB}
compare:
  transport: [rss, rss+pfld]
`

func loader(t *testing.T) Loader {
	return func(rate uint64) (*scenario.Scenario, error) {
		return scenario.ParseWith(filepath.Join(t.TempDir(), "calib.yaml"), []byte(testScenario), scenario.Options{Rate: rate})
	}
}

// machineLimit fakes trials on a machine whose runs are OK up to limit,
// except at rates listed in flaky, which fail their first trial.
func machineLimit(limit uint64, flaky ...uint64) (func(context.Context, *scenario.Scenario, runner.Options) (*report.Summary, error), *[]uint64) {
	var tried []uint64
	failedOnce := map[uint64]bool{}
	return func(_ context.Context, sc *scenario.Scenario, _ runner.Options) (*report.Summary, error) {
		rate := sc.Cells[0].Config.Topo().FullRate()
		tried = append(tried, rate)
		v := fidelity.OK
		if rate > limit {
			v = fidelity.WARN
		}
		for _, f := range flaky {
			if f == rate && !failedOnce[rate] {
				failedOnce[rate] = true
				v = fidelity.WARN
			}
		}
		for _, c := range sc.Cells {
			if len(c.Runs) != 1 {
				return nil, errors.New("a trial must run one seed")
			}
		}
		rv := report.RunVerdict{Verdict: v}
		if v != fidelity.OK {
			rv.Reasons = []string{"WARN: CPU saturated"}
		}
		return summaryOf(sc, rv), nil
	}, &tried
}

// summaryOf is a trial's summary: every cell ran once, complete, and got
// rv's verdict.
func summaryOf(sc *scenario.Scenario, rv report.RunVerdict) *report.Summary {
	sum := &report.Summary{Scenario: sc.Name}
	for _, c := range sc.Cells {
		sum.Cells = append(sum.Cells, report.CellSummary{Cell: c.Name, Runs: 1, CompleteRuns: 1})
		rv.Cell = c.Name
		sum.Fidelity.Runs = append(sum.Fidelity.Runs, rv)
	}
	sum.Fidelity.Verdict = rv.Verdict
	return sum
}

// fake is a faked machine's trial runner and the rates it was tried at.
type fake struct {
	run   func(context.Context, *scenario.Scenario, runner.Options) (*report.Summary, error)
	tried *[]uint64
}

// aimsBetter runs the search on aimed and on blind from opt: aimed must
// find limit (within the precision below it) in fewer trials than blind.
func aimsBetter(t *testing.T, opt Options, limit uint64, aimed, blind fake) {
	t.Helper()
	opt.run, opt.Dir = aimed.run, t.TempDir()
	res, err := Search(context.Background(), loader(t), opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.RateBps > limit || float64(res.RateBps)*(1+opt.Precision) < float64(limit) {
		t.Errorf("found %s, want within %.0f%% below %s (tried %v)", units.FormatRate(res.RateBps), 100*opt.Precision, units.FormatRate(limit), *aimed.tried)
	}
	opt.run, opt.Dir = blind.run, t.TempDir()
	if _, err := Search(context.Background(), loader(t), opt); err != nil {
		t.Fatal(err)
	}
	if len(*aimed.tried) >= len(*blind.tried) {
		t.Errorf("aimed search took %d trials %v, blind %d %v", len(*aimed.tried), *aimed.tried, len(*blind.tried), *blind.tried)
	}
	t.Logf("aimed: %v; blind: %v", *aimed.tried, *blind.tried)
}

func TestSearchFindsTheLimit(t *testing.T) {
	for _, tt := range []struct {
		name  string
		limit uint64
		start uint64
	}{
		{"up from below", 37 * units.Mbit, 5 * units.Mbit},
		{"down from above", 37 * units.Mbit, 100 * units.Mbit},
		{"at max", 20 * units.Gbit, 1 * units.Gbit},
	} {
		t.Run(tt.name, func(t *testing.T) {
			run, tried := machineLimit(tt.limit)
			opt := Options{Dir: t.TempDir(), Start: tt.start, Max: 10 * units.Gbit, Precision: 0.1, Confirm: 1, run: run}
			res, err := Search(context.Background(), loader(t), opt)
			if err != nil {
				t.Fatal(err)
			}
			want := min(tt.limit, opt.Max)
			if res.RateBps > want || float64(res.RateBps) < float64(want)/1.1/1.1 {
				t.Errorf("found %s, want at most %s and within 10%% (trials at %v)", units.FormatRate(res.RateBps), units.FormatRate(want), *tried)
			}
			if n := len(res.Trials); n != len(*tried) || n > 15 {
				t.Errorf("%d trials recorded, %d run", n, len(*tried))
			}
			last := res.Trials[len(res.Trials)-1]
			if !last.OK || last.RateBps != res.RateBps {
				t.Errorf("the last trial must confirm the result: %+v", last)
			}
			for _, tr := range res.Trials {
				if tr.OK != (tr.RateBps <= tt.limit) {
					t.Errorf("trial at %s judged OK=%v", units.FormatRate(tr.RateBps), tr.OK)
				}
				if !tr.OK && len(tr.Reasons) != 2 {
					t.Errorf("trial at %s has reasons %q, want one per cell", units.FormatRate(tr.RateBps), tr.Reasons)
				}
			}
		})
	}
}

func TestSearchStepsDownWhenNotConfirmed(t *testing.T) {
	// 40 Mbit/s passes its first trial and fails its confirmation.
	run, tried := machineLimit(45*units.Mbit, 0)
	first := true
	noisy := func(ctx context.Context, sc *scenario.Scenario, ro runner.Options) (*report.Summary, error) {
		sum, err := run(ctx, sc, ro)
		if sc.Cells[0].Config.Topo().FullRate() == 40*units.Mbit {
			if !first {
				sum.Fidelity.Verdict = fidelity.WARN
				sum.Fidelity.Runs[0].Verdict = fidelity.WARN
			}
			first = false
		}
		return sum, err
	}
	opt := Options{Dir: t.TempDir(), Start: 10 * units.Mbit, Max: 40 * units.Mbit, Precision: 0.1, Confirm: 1, run: noisy}
	res, err := Search(context.Background(), loader(t), opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.RateBps >= 40*units.Mbit || res.RateBps < 30*units.Mbit {
		t.Errorf("found %s after an unconfirmed 40Mbit, want just below it (trials at %v)", units.FormatRate(res.RateBps), *tried)
	}
}

func TestSearchAsksADisturbedTrialAgain(t *testing.T) {
	// The machine is OK up to 45 Mbit/s; 40 Mbit/s passes its first
	// trial and fails the next (its confirmation) or the next two, every
	// run's steal being steal. Under the hypervisor's heavy hand a WARN
	// contradiction is asked once more; without it, for a FAIL, or when
	// the repeat fails too, the search steps down as it always did.
	for _, tt := range []struct {
		name       string
		steal      float64
		verdict    fidelity.Verdict // of the failing trials at 40 Mbit/s
		fails      int              // trials at 40 Mbit/s after the first that fail
		want40     bool
		wantRepeat int
	}{
		{"steal, repeat OK", 0.30, fidelity.WARN, 1, true, 1},
		{"steal, repeat WARN", 0.30, fidelity.WARN, 2, false, 1},
		{"little steal", fidelity.DisturbedSteal / 2, fidelity.WARN, 1, false, 0},
		{"steal, FAIL", 0.30, fidelity.FAIL, 1, false, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			run, tried := machineLimit(45 * units.Mbit)
			at40 := 0
			noisy := func(ctx context.Context, sc *scenario.Scenario, ro runner.Options) (*report.Summary, error) {
				sum, err := run(ctx, sc, ro)
				if sc.Cells[0].Config.Topo().FullRate() == 40*units.Mbit {
					if at40 > 0 && at40 <= tt.fails {
						sum.Fidelity.Verdict = tt.verdict
						for i := range sum.Fidelity.Runs {
							sum.Fidelity.Runs[i].Verdict = tt.verdict
						}
					}
					at40++
				}
				for i := range sum.Fidelity.Runs {
					sum.Fidelity.Runs[i].Steal = tt.steal
				}
				return sum, err
			}
			opt := Options{Dir: t.TempDir(), Start: 10 * units.Mbit, Max: 40 * units.Mbit, Precision: 0.1, Confirm: 1, run: noisy}
			res, err := Search(context.Background(), loader(t), opt)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.RateBps == 40*units.Mbit; got != tt.want40 {
				t.Errorf("found %s, want 40Mbit: %v (trials at %v)", units.FormatRate(res.RateBps), tt.want40, *tried)
			}
			repeated := 0
			for _, tr := range res.Trials {
				if tr.Repeated {
					repeated++
					if tr.RateBps != 40*units.Mbit || tr.OK {
						t.Errorf("trial %d at %s (OK %v) asked again; only the failed 40Mbit confirmation should be", tr.N, units.FormatRate(tr.RateBps), tr.OK)
					}
				}
				if tr.Steal != tt.steal {
					t.Errorf("trial %d: steal %v, want %v", tr.N, tr.Steal, tt.steal)
				}
			}
			if repeated != tt.wantRepeat {
				t.Errorf("%d trials asked again, want %d (trials at %v)", repeated, tt.wantRepeat, *tried)
			}
			if note := strings.Contains(res.Summary(), "hypervisor took"); note != (tt.steal >= fidelity.DisturbedSteal) {
				t.Errorf("summary %q: steal note %v, want %v", res.Summary(), note, tt.steal >= fidelity.DisturbedSteal)
			}
		})
	}
}

func TestSearchNoRate(t *testing.T) {
	run, _ := machineLimit(0)
	opt := Options{Dir: t.TempDir(), Start: 8 * units.Mbit, Min: 2 * units.Mbit, run: run}
	res, err := Search(context.Background(), loader(t), opt)
	if !errors.Is(err, ErrNoRate) {
		t.Fatalf("error %v, want ErrNoRate", err)
	}
	if len(res.Trials) != 3 { // 8, 4, 2
		t.Errorf("%d trials, want 3 (8, 4 and 2 Mbit/s)", len(res.Trials))
	}
}

func TestKeyLeavesTheRateOut(t *testing.T) {
	fromText := func(text string) Loader {
		return func(rate uint64) (*scenario.Scenario, error) {
			return scenario.ParseWith(filepath.Join(t.TempDir(), "calib.yaml"), []byte(text), scenario.Options{Rate: rate})
		}
	}
	fixed := strings.Replace(testScenario, "rate: auto", "rate: 25Mbit", 1)
	other := testScenario + "host: {window: 32KiB}\n"
	key := func(l Loader, version string) string {
		k, err := Key(l, version)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	auto, fix := key(loader(t), "v1"), key(fromText(fixed), "v1")
	if auto != fix {
		t.Errorf("keys differ with the rate: auto %s, fixed 25Mbit %s", auto, fix)
	}
	if key(fromText(other), "v1") == auto || key(loader(t), "v2") == auto {
		t.Error("key does not change with the scenario or the version")
	}
}

func TestCache(t *testing.T) {
	dir := t.TempDir()
	c, err := OpenCache(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.Lookup("k") != nil {
		t.Fatal("empty cache has an entry")
	}
	if err := c.Put(&Result{Key: "k", RateBps: 5}); err != nil {
		t.Fatal(err)
	}
	if err := c.Put(&Result{Key: "k", RateBps: 7}); err != nil {
		t.Fatal(err)
	}
	c2, err := OpenCache(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r := c2.Lookup("k"); r == nil || r.RateBps != 7 || len(c2.Entries) != 1 {
		t.Errorf("reopened cache: %+v", c2.Entries)
	}
}

func TestRoundRate(t *testing.T) {
	for in, want := range map[float64]uint64{17_320_508: 17_000_000, 1_414_213: 1_400_000, 99_600_000: 100_000_000, 0.2: 1} {
		if got := roundRate(in); got != want {
			t.Errorf("roundRate(%v) = %d, want %d", in, got, want)
		}
	}
}

// TestSearchGoesOnAfterAFail: a FAIL verdict fails its run (runner.Run
// returns ErrFidelity with the results) but is an answer, not an error.
func TestSearchGoesOnAfterAFail(t *testing.T) {
	run, _ := machineLimit(6 * units.Mbit)
	failing := func(ctx context.Context, sc *scenario.Scenario, ro runner.Options) (*report.Summary, error) {
		sum, err := run(ctx, sc, ro)
		if sum != nil && sum.Fidelity.Verdict != fidelity.OK {
			sum.Fidelity.Verdict = fidelity.FAIL
			return sum, fmt.Errorf("%w: FAIL", runner.ErrFidelity)
		}
		return sum, err
	}
	opt := Options{Dir: t.TempDir(), Start: 8 * units.Mbit, Precision: 0.5, run: failing}
	res, err := Search(context.Background(), loader(t), opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.RateBps > 6*units.Mbit || res.RateBps < 4*units.Mbit {
		t.Errorf("found %s, want at most 6Mbit", units.FormatRate(res.RateBps))
	}
	// Any other error ends the search.
	broken := func(context.Context, *scenario.Scenario, runner.Options) (*report.Summary, error) {
		return nil, errors.New("lab down")
	}
	if _, err := Search(context.Background(), loader(t), Options{Dir: t.TempDir(), Start: 8 * units.Mbit, run: broken}); err == nil {
		t.Error("a broken trial did not end the search")
	}
}

// busyMachine fakes a machine whose cores are busy in proportion to the
// rate, and whose runs are OK while at most 80% busy.
func busyMachine(perMbit float64) fake {
	var tried []uint64
	return fake{func(_ context.Context, sc *scenario.Scenario, _ runner.Options) (*report.Summary, error) {
		rate := sc.Cells[0].Config.Topo().FullRate()
		tried = append(tried, rate)
		busy := min(1, perMbit*float64(rate)/1e6)
		v := fidelity.OK
		if busy > 0.8 {
			v = fidelity.WARN
		}
		return summaryOf(sc, report.RunVerdict{Verdict: v, CPUBusy: busy}), nil
	}, &tried}
}

// TestSearchAimsByLoad: with the cores' load of each trial known, the
// search jumps close to the answer instead of doubling, and finds the
// same limit in fewer trials than a search that cannot see the load.
func TestSearchAimsByLoad(t *testing.T) {
	blind, blindTried := machineLimit(80 * units.Mbit)
	opt := Options{Start: 10 * units.Mbit, Max: 10 * units.Gbit, Precision: 0.25, Confirm: 1}
	// 1% of the cores per Mbit/s: OK up to 80 Mbit/s.
	aimsBetter(t, opt, 80*units.Mbit, busyMachine(0.01), fake{blind, blindTried})
}

// overMachine fakes the demo on the project's machine: the cores are
// about half busy at any rate (wake-ups, not packets, cost the most), and
// a figure the verdict limits grows with the rate, WARN above limit.
// tell: the trials report how far past the limit they were.
func overMachine(limit uint64, tell bool) fake {
	var tried []uint64
	return fake{func(_ context.Context, sc *scenario.Scenario, _ runner.Options) (*report.Summary, error) {
		rate := sc.Cells[0].Config.Topo().FullRate()
		tried = append(tried, rate)
		over := float64(rate) / float64(limit)
		rv := report.RunVerdict{Verdict: fidelity.OK, CPUBusy: 0.5 + 0.004*float64(rate)/1e6}
		if over > 1 {
			rv.Verdict, rv.Reasons = fidelity.WARN, []string{"WARN: senders lost time"}
			if tell {
				rv.Over = over
			}
		}
		return summaryOf(sc, rv), nil
	}, &tried}
}

// TestSearchAimsByOver: when the load says little (the cores half busy at
// any rate), how far a trial was past its limit takes the search down in
// fewer trials than the load alone, to the same answer.
func TestSearchAimsByOver(t *testing.T) {
	const limit = 6 * units.Mbit
	opt := Options{Start: 25 * units.Mbit, Precision: 0.25, Confirm: 1}
	aimsBetter(t, opt, limit, overMachine(limit, true), overMachine(limit, false))
}

// TestSearchStepsAboveAnAimedRate: an OK rate found by aiming down from a
// trial past its limit is usually just below the limit, so the search
// tries one precision step above it before bisecting, and ends there in
// four trials (25, 9, 11 Mbit/s and the confirmation at 9) where the
// middle took six.
func TestSearchStepsAboveAnAimedRate(t *testing.T) {
	const limit = 9 * units.Mbit
	m := overMachine(limit, true)
	opt := Options{Dir: t.TempDir(), Start: 25 * units.Mbit, Precision: 0.25, Confirm: 1, run: m.run}
	res, err := Search(context.Background(), loader(t), opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.RateBps > limit || float64(res.RateBps)*1.25 < float64(limit) {
		t.Errorf("found %s, want within 25%% below %s (tried %v)", units.FormatRate(res.RateBps), units.FormatRate(limit), *m.tried)
	}
	if len(*m.tried) > 4 {
		t.Errorf("%d trials %v, want at most 4", len(*m.tried), *m.tried)
	}
	for in, want := range map[uint64]uint64{7_500_000: 9_300_000, 9_000_000: 11_000_000, 80_000_000: 100_000_000} {
		if got := stepAbove(in, 0.25); got != want {
			t.Errorf("stepAbove(%d) = %d, want %d", in, got, want)
		}
	}
}

// TestCodeOf: the cache key names the code: a dev build by its commit, a
// release by its version.
func TestCodeOf(t *testing.T) {
	for _, c := range []struct {
		o    runner.Options
		want string
	}{
		{runner.Options{Version: "v1.2.3", Commit: "unknown"}, "v1.2.3"},
		{runner.Options{Version: "v1.2.3"}, "v1.2.3"},
		{runner.Options{Version: "dev", Commit: "abc123"}, "dev abc123"},
	} {
		if got := codeOf(c.o); got != c.want {
			t.Errorf("codeOf(%+v) = %q, want %q", c.o, got, c.want)
		}
	}
	if codeOf(runner.Options{Version: "dev", Commit: "a"}) == codeOf(runner.Options{Version: "dev", Commit: "b"}) {
		t.Error("dev builds of two commits share a cache key")
	}
}
