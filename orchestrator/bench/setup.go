package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/orchestrator/fabric"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/switchd"
)

// setupLab is the lab name the setup section uses in its own store.
const setupLab = "bench"

// settle waits until the kernel has destroyed every namespace deleted so
// far (nsutil.Drain), so that one measurement does not pay for the last.
func settle(ctx context.Context) error {
	_, _, err := fabric.Settle(ctx, lab.CleanupTimeout)
	return err
}

// setupSample is one repetition of the setup section for one k.
type setupSample struct {
	bareUp, bareDown                      float64 // bare namespaces + veths; delete + kernel cleanup
	lineUp, shapedUp, afterDown, shapedDn float64 // ftlab up / down, seconds
	cell                                  float64 // the next scenario cell on the same lab (Reprogram)
}

// Setup measures what a user waits for, against the bare fabric built in
// the same run: `ftlab up` with the eBPF data plane in line-rate and in
// shaped mode (what `ftlab run` builds), an up right after a down, and a
// down with the kernel's cleanup of the namespaces. It goes through
// lab.Store, exactly as the CLI does.
func Setup(ctx context.Context, opt Options) (*Section, error) {
	ks, reps := opt.K, opt.repetitions()
	if len(ks) == 0 {
		ks = []int{8}
	}
	if opt.Quick && len(opt.K) == 0 {
		ks = []int{4}
	}
	sec := &Section{Name: "setup", Method: fmt.Sprintf(
		"Seconds of `ftlab up` (fabric and eBPF data plane, through lab.Store as the CLI does) and `ftlab down` of a k-ary fat tree, "+
			"against the same namespaces and veth pairs made bare, one after another, and deleted, in the same run. "+
			"Every figure but \"right after a down\" starts once the kernel has destroyed the namespaces of the one before (nsutil.Drain); "+
			"teardown figures include that wait. The next cell is lab.Store.Reprogram of the shaped lab for another policy and seed, as `ftlab run` does between cells. "+
			"Median of %d repetition(s).", reps)}
	for _, k := range ks {
		topo, err := topology.NewFatTree(k)
		if err != nil {
			return sec, err
		}
		var samples []setupSample
		for range reps {
			sm, err := setupOnce(ctx, topo)
			if err != nil {
				return sec, fmt.Errorf("k=%d: %w", k, err)
			}
			samples = append(samples, sm)
			opt.logf("bench: setup k=%d: bare %.3fs, up line rate %.3fs, shaped %.3fs, next cell %.3fs, after a down %.3fs, down %.3fs (bare %.3fs)",
				k, sm.bareUp, sm.lineUp, sm.shapedUp, sm.cell, sm.afterDown, sm.shapedDn, sm.bareDown)
		}
		col := func(f func(setupSample) float64) []float64 {
			out := make([]float64, len(samples))
			for i, s := range samples {
				out[i] = f(s)
			}
			return out
		}
		bareUp := col(func(s setupSample) float64 { return s.bareUp })
		const bare = "bare namespaces+veths"
		sec.Rows = append(sec.Rows,
			rowOf(fmt.Sprintf("k=%d ftlab up, eBPF line rate", k), "s", col(func(s setupSample) float64 { return s.lineUp }), bareUp, bare),
			rowOf(fmt.Sprintf("k=%d ftlab up, shaped (as ftlab run builds it)", k), "s", col(func(s setupSample) float64 { return s.shapedUp }), bareUp, bare),
			rowOf(fmt.Sprintf("k=%d ftlab up, shaped, right after a down", k), "s", col(func(s setupSample) float64 { return s.afterDown }), bareUp, bare),
			rowOf(fmt.Sprintf("k=%d next scenario cell on the same lab (reprogrammed, shaped)", k), "s", col(func(s setupSample) float64 { return s.cell }), bareUp, bare),
			rowOf(fmt.Sprintf("k=%d ftlab down, shaped, with kernel cleanup", k), "s", col(func(s setupSample) float64 { return s.shapedDn }),
				col(func(s setupSample) float64 { return s.bareDown }), "bare delete + kernel cleanup"))
	}
	return sec, nil
}

// setupOnce takes one sample: the bare baseline, then a line-rate and a
// shaped lab, then a shaped one built right after the last down.
func setupOnce(ctx context.Context, topo *topology.Topology) (sm setupSample, err error) {
	if err := settle(ctx); err != nil {
		return sm, err
	}
	_, _, err = onePrefix(func(s *scope) (time.Duration, time.Duration, error) {
		up, down, err := BareUpDown(ctx, topo, s.name)
		if err != nil {
			return 0, 0, err
		}
		sm.bareUp, sm.bareDown = up.Seconds(), down.Seconds()
		return 0, 0, nil
	})
	if err != nil {
		return sm, fmt.Errorf("bare: %w", err)
	}
	// BareUpDown's delete time leaves out the kernel's cleanup; the
	// baseline of a down that waits for it must not.
	t0 := time.Now()
	if err := settle(ctx); err != nil {
		return sm, err
	}
	sm.bareDown += time.Since(t0).Seconds()
	_, _, err = onePrefix(func(s *scope) (time.Duration, time.Duration, error) {
		dir, err := os.MkdirTemp("", "ftbench-run-")
		if err != nil {
			return 0, 0, err
		}
		s.dirs = append(s.dirs, dir)
		store := &lab.Store{Dir: dir, Prefix: s.prefix}
		defer store.Cleanup(true) // whatever an error left
		// cell, if set, reprograms the lab as the runner does for the next
		// cell of a matrix (another policy and seed) before it goes down.
		upDown := func(mode string, settled bool, cell *float64) (up, down float64, err error) {
			if settled {
				if err := settle(ctx); err != nil {
					return 0, 0, err
				}
			}
			dp := switchd.Config{DataPlane: switchd.DataPlaneBPF, Mode: mode}
			st, err := store.Up(ctx, setupLab, topo, lab.UpOptions{DataPlane: dp, Owned: true})
			if err != nil {
				return 0, 0, fmt.Errorf("up %s: %w", mode, err)
			}
			if cell != nil {
				next := dp
				next.EdgePolicy, next.AggPolicy, next.Seed = "ofan", "ofan", 2
				rt := time.Now()
				if _, err := store.Reprogram(ctx, setupLab, next, nil); err != nil {
					return 0, 0, fmt.Errorf("reprogram: %w", err)
				}
				*cell = time.Since(rt).Seconds()
			}
			t0 := time.Now()
			c, err := store.TakeDown(setupLab)
			if err != nil {
				return 0, 0, fmt.Errorf("down %s: %w", mode, err)
			}
			if !c.Done {
				return 0, 0, errors.New("the kernel did not finish destroying the namespaces in time")
			}
			return st.SetupTime().Seconds(), time.Since(t0).Seconds(), nil
		}
		if sm.lineUp, _, err = upDown(switchd.ModeLineRate, true, nil); err != nil {
			return 0, 0, err
		}
		if sm.shapedUp, _, err = upDown(switchd.ModeShaped, true, &sm.cell); err != nil {
			return 0, 0, err
		}
		sm.afterDown, sm.shapedDn, err = upDown(switchd.ModeShaped, false, nil)
		return 0, 0, err
	})
	return sm, err
}
