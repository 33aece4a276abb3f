package calibrate

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/ftlab/ftlab/orchestrator/fidelity"
	"github.com/ftlab/ftlab/orchestrator/scenario"
)

// Run calibrates the scenario src loads: unless opt.Dir is set, its trials
// and report go to a new directory <results root>/<scenario>/calibrate-<time>
// (the root is opt.Runner.ResultsRoot, default "results"), which it
// returns; the rate found is kept in this machine's cache (CacheDir)
// unless noCache.
func Run(ctx context.Context, src Source, opt Options, noCache bool) (*Result, string, error) {
	base, err := src(scenario.Options{})
	if err != nil {
		return nil, "", err
	}
	if opt.Dir == "" {
		root := opt.Runner.ResultsRoot
		if root == "" {
			root = "results"
		}
		opt.Dir = filepath.Join(root, base.Name, "calibrate-"+time.Now().UTC().Format("20060102-150405"))
	}
	var cache *Cache
	if !noCache {
		if cache, err = openCache(); err != nil {
			return nil, "", err
		}
	}
	load := func(rate uint64) (*scenario.Scenario, error) {
		return src(scenario.Options{Rate: rate, RateSource: "calibration trial"})
	}
	res, err := Calibrate(ctx, load, opt, cache)
	return res, opt.Dir, err
}

// RunRate says at what rate ForRun loads a scenario.
type RunRate struct {
	// Rate, if not 0, is the full link rate to run at (ftlab run --rate).
	Rate uint64
	// Auto runs at the calibrated rate whatever the file says, as rate:
	// auto does.
	Auto bool
	// Recalibrate calibrates again even when the cache has a calibration.
	Recalibrate bool
}

// ForRun loads the scenario file at path for a run: at r.Rate when it is
// given; a scenario saying rate: auto (or any, with r.Auto) at this
// machine's cached calibration of it, calibrating it first with opt when
// there is none (or r.Recalibrate), and keeping the answer. log is told
// when a calibration starts and what it found.
func ForRun(ctx context.Context, path string, r RunRate, opt Options, log io.Writer) (*scenario.Scenario, error) {
	if r.Rate != 0 {
		return scenario.LoadWith(path, scenario.Options{Rate: r.Rate, RateSource: "--rate"})
	}
	sc, err := scenario.Load(path)
	if err != nil || !(r.Auto || sc.NeedsRate()) {
		return sc, err
	}
	cache, err := openCache()
	if err != nil {
		return nil, err
	}
	key, err := Key(func(rate uint64) (*scenario.Scenario, error) {
		return scenario.LoadWith(path, scenario.Options{Rate: rate})
	}, codeOf(opt.Runner))
	if err != nil {
		return nil, err
	}
	res := cache.Lookup(key)
	if res == nil || r.Recalibrate {
		fmt.Fprintf(log, "%s runs at rate: auto and this machine has no calibration for it: calibrating first (once; kept in %s)\n", sc.Name, cache.Path())
		if res, _, err = Run(ctx, FileSource(path), opt, false); err != nil {
			return nil, fmt.Errorf("rate: auto: %w", err)
		}
		fmt.Fprintf(log, "calibrated: %s\n", res.Summary())
	}
	source := fmt.Sprintf("calibration of %s on this machine (%s)", res.Finished.Format("2006-01-02 15:04"), cache.Path())
	if st := res.Steal(); st >= fidelity.DisturbedSteal {
		source += fmt.Sprintf(", made while the hypervisor took %.0f%% of the cores: ftlab run --recalibrate when the machine is quieter", 100*st)
	}
	return scenario.LoadWith(path, scenario.Options{Rate: res.RateBps, RateSource: source})
}

// openCache opens this machine's cache.
func openCache() (*Cache, error) {
	dir, err := CacheDir()
	if err != nil {
		return nil, err
	}
	return OpenCache(dir)
}
