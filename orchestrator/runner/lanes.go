package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/orchestrator/results"
	"github.com/ftlab/ftlab/orchestrator/scenario"
	"github.com/ftlab/ftlab/switchd"
)

// A scenario's runs go through lanes: each lane is a lab and takes the
// next run in the scenario's order (cell by cell, repetition by
// repetition) whenever it is free, reprogramming its lab when the run is
// of another cell than its last (cellLabs). One lane runs everything one
// after another, as ftlab always did. Several make use of a machine that
// one run leaves mostly idle: an emulated fabric slowed to the machine's
// pace (time-dilated) keeps a run's CPU well below the cores while its
// wall time is the emulated rate's. Each run still gets its own fidelity
// verdict, taken on the machine as the lanes share it.

// laneHooks are told what the lanes do; they are called from the lanes'
// goroutines.
type laneHooks struct {
	building func(ci int)
	starting func(ci, ri int)
	finished func(ci, ri int, r *results.Run)
	retried  func(ci, ri int, r *results.Run) // a try that does not count
}

// lanesResult is how the lanes ended: the cell whose run failed or whose
// lab could not be had (the first such, when several lanes failed), and
// the errors of taking the labs down.
type lanesResult struct {
	cell  string
	err   error
	close error
}

// lane is one lab runs go on.
type lane struct {
	name  string
	reuse bool // the lab is up already and stays up (ReuseLab, LaneLabs)
}

// lanesOf are the lanes opt asks for.
func lanesOf(opt Options) ([]lane, error) {
	if opt.ReuseLab != "" {
		out := []lane{{opt.ReuseLab, true}}
		for _, n := range opt.LaneLabs {
			out = append(out, lane{n, true})
		}
		return out, nil
	}
	if opt.Lanes <= 1 {
		return []lane{{opt.LabName, false}}, nil
	}
	names, err := LaneNames(opt.Store, opt.LabName, opt.Lanes)
	if err != nil {
		return nil, err
	}
	out := make([]lane, len(names))
	for i, n := range names {
		out[i] = lane{n, false}
	}
	return out, nil
}

// maxLaneTries bounds the names LaneNames tries.
const maxLaneTries = 200

// LaneNames returns n lab names for lanes of base: base, then base2,
// base3, ..., leaving out any whose port-mark tag (switchd.MarkTag) an
// earlier one or a lab already in the store has, since labs up at the
// same time must have different tags.
func LaneNames(store *lab.Store, base string, n int) ([]string, error) {
	used := map[uint32]string{}
	existing, err := store.List()
	if err != nil {
		return nil, err
	}
	for _, name := range existing {
		used[switchd.MarkTag(store.PinRoot(name))] = name
	}
	var out []string
	for i := 1; len(out) < n && i <= maxLaneTries; i++ {
		name := base
		if i > 1 {
			name = fmt.Sprintf("%s%d", base, i)
		}
		if err := lab.ValidateName(name); err != nil {
			return nil, fmt.Errorf("lanes of %q: %w", base, err)
		}
		tag := switchd.MarkTag(store.PinRoot(name))
		if other, ok := used[tag]; ok && other != name {
			continue
		}
		used[tag] = name
		out = append(out, name)
	}
	if len(out) < n {
		return nil, fmt.Errorf("lanes of %q: only %d lab names with port marks of their own", base, len(out))
	}
	return out, nil
}

// CellSeed seeds a cell's data plane: its first run's seed (1 without
// runs).
func CellSeed(cell *scenario.Cell) uint64 {
	if len(cell.Runs) > 0 {
		return cell.Runs[0].Seed
	}
	return 1
}

// runLanes runs every run of sc on opt's lanes until all ran, ctx ends, a
// run fails or a lab cannot be had (the lanes then finish the runs they
// are on and stop).
func runLanes(ctx context.Context, sc *scenario.Scenario, opt Options, hooks laneHooks) lanesResult {
	var res lanesResult
	lanes, err := lanesOf(opt)
	if err != nil {
		res.err = err
		if len(sc.Cells) > 0 {
			res.cell = sc.Cells[0].Name
		}
		return res
	}
	type item struct{ ci, ri int }
	var items []item
	for ci, c := range sc.Cells {
		for ri := range c.Runs {
			items = append(items, item{ci, ri})
		}
	}
	var (
		mu     sync.Mutex
		next   int
		closes []error
	)
	take := func() (item, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(items) || res.err != nil || ctx.Err() != nil {
			return item{}, false
		}
		next++
		return items[next-1], true
	}
	fail := func(cell string, err error) {
		mu.Lock()
		defer mu.Unlock()
		if res.err == nil {
			res.cell, res.err = cell, err
		}
	}
	var wg sync.WaitGroup
	for _, ln := range lanes {
		wg.Go(func() {
			o := opt
			if ln.reuse { // no ftlab send on the lab's hosts meanwhile
				o.ReuseLab = ln.name
				release, err := o.Store.LockTraffic(ln.name)
				if err != nil {
					fail(sc.Cells[0].Name, err)
					return
				}
				defer release()
			} else {
				o.LabName, o.ReuseLab = ln.name, ""
			}
			labs := &cellLabs{opt: o}
			defer func() {
				if err := labs.close(); err != nil {
					mu.Lock()
					closes = append(closes, err)
					mu.Unlock()
				}
			}()
			cur := -1
			var st *lab.State
			var watches dequeueWatches
			defer watches.reset()
			for {
				it, ok := take()
				if !ok {
					return
				}
				cell := sc.Cells[it.ci]
				if it.ci != cur {
					watches.reset()
					hooks.building(it.ci)
					var err error
					if st, err = labs.forCell(ctx, cell.Config, CellSeed(cell)); err != nil {
						fail(cell.Name, err)
						return
					}
					cur = it.ci
				}
				hooks.starting(it.ci, it.ri)
				r := retryDisturbed(ctx, o.RetryDisturbed, func() *results.Run {
					return runOnce(ctx, st, o, cell, cell.Runs[it.ri], &watches)
				}, func(r *results.Run) { hooks.retried(it.ci, it.ri, r) })
				hooks.finished(it.ci, it.ri, r)
				if r.Status == results.StatusFailed {
					fail(cell.Name, errors.New(r.Error))
					return
				}
			}
		})
	}
	wg.Wait()
	res.close = errors.Join(closes...)
	return res
}

// retryDisturbed runs run, and again while its run completed with a WARN
// the hypervisor disturbed (fidelity.Report.Disturbed), at most n more
// times, handing each try that does not count to retried; it returns the
// try that counts.
func retryDisturbed(ctx context.Context, n int, run func() *results.Run, retried func(*results.Run)) *results.Run {
	r := run()
	for try := 0; try < n && ctx.Err() == nil && r.Status == results.StatusComplete && r.Fidelity.Disturbed(); try++ {
		retried(r)
		r = run()
	}
	return r
}
