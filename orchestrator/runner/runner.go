package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/ftlab/ftlab/hostagent/netio"
	"github.com/ftlab/ftlab/internal/machine"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/orchestrator/report"
	"github.com/ftlab/ftlab/orchestrator/results"
	"github.com/ftlab/ftlab/orchestrator/scenario"
)

// Options configure a scenario run.
type Options struct {
	Store   *lab.Store
	LabName string // the lab each cell is built as; default "run"
	// ReuseLab, if set, runs every cell on this lab, which must be up
	// with the cells' topology: its data plane is reprogrammed for each
	// cell, and the lab is left up afterwards.
	ReuseLab    string
	ResultsRoot string // default "results"
	// Dir, if set, is the results directory itself, instead of a new
	// ResultsRoot/<scenario>/<time> (calibration trials use it).
	Dir     string
	Agents  AgentStarter
	Version string
	Commit  string
	// Strict makes a fidelity WARN fail the scenario, as a FAIL always does.
	Strict bool
	// Progress, if set, is told about every run as it starts and ends.
	Progress func(Progress)
	// Lanes is how many runs go at once, each on a lab of its own (0 or 1:
	// one after another). The labs are LabName and names derived from it
	// (LaneNames), or with ReuseLab that lab and LaneLabs. Lanes share the
	// machine, and each run's fidelity verdict says whether it kept up.
	Lanes int
	// LaneLabs are the labs of the further lanes with ReuseLab: up, with
	// the same fabric.
	LaneLabs []string
	// RetryDisturbed is how many times a run whose WARN was disturbed by
	// the hypervisor (fidelity.Report.Disturbed: it took
	// fidelity.DisturbedSteal of the cores or more) is run again, with
	// the same seed on the same lab; the last try counts, the others are
	// kept in run.json's retried. 0: never.
	RetryDisturbed int
	// Notice, if set, is told what a run did on its own that its user
	// should know: a leftover lab of its name (a killed run's) removed
	// before building the run's lab (lab.UpOptions.Reclaim).
	Notice func(string)
}

// Reclaimed is the lab.UpOptions.Reclaimed of a run's labs: it tells
// notice what was removed, nil when notice is.
func Reclaimed(notice func(string)) func(lab.CleanupAction) {
	if notice == nil {
		return nil
	}
	return func(a lab.CleanupAction) {
		notice(fmt.Sprintf("removed the leftover lab %s (%d namespaces) before building it again: %s", a.Lab, len(a.Namespaces), a.Reason))
	}
}

// Progress is one step of a scenario run.
type Progress struct {
	Cell, Cells int    // 1-based index of the current cell, and how many
	Run, Runs   int    // 1-based index of the current run in its cell
	Done, Total int    // runs finished and in all
	CellName    string // e.g. policy=ofan,transport=rss+pfld
	Status      string // "building", "running", "retrying", or the finished run's status
	Verdict     string // a finished run's fidelity verdict (OK, WARN, FAIL), if it has one
	Elapsed     time.Duration
}

// Run executes every cell and repetition of sc and writes the results to
// a new directory under opt.ResultsRoot, which it returns: the raw files
// of package results as each run finishes, then the report (package
// report) and its summary, which it returns too. The results of every
// finished run are kept, also when ctx is cancelled or a run fails;
// run.json then says the scenario is incomplete and why, and the report
// covers the runs that finished.
func Run(ctx context.Context, sc *scenario.Scenario, opt Options) (dir string, sum *report.Summary, err error) {
	if opt.LabName == "" {
		opt.LabName = "run"
	}
	if opt.ResultsRoot == "" {
		opt.ResultsRoot = "results"
	}
	if sc.NeedsRate() {
		return "", nil, fmt.Errorf("scenario %s says rate: auto and has no rate yet: calibrate it (ftlab bench calibrate) or give it one", sc.Name)
	}
	// Arrival stamping on before any lab is built, and for good: each
	// run's agents close their sockets, and with nothing asking for stamps
	// the kernel would stamp the next run's first arrivals when they are
	// read, not when they came (netio.HoldStamps).
	if err := netio.HoldStamps(); err != nil {
		return "", nil, err
	}
	start := time.Now()
	if opt.Dir != "" {
		dir, err = opt.Dir, results.MakeDir(opt.Dir)
	} else {
		dir, err = results.NewDir(filepath.Join(opt.ResultsRoot, sc.Name), start.UTC().Format("20060102-150405"))
	}
	if err != nil {
		return "", nil, err
	}
	w, err := results.NewWriter(dir)
	if err != nil {
		return "", nil, err
	}
	defer w.Close()
	m := machine.Read()
	meta := &results.Meta{
		Format: results.Format, Version: opt.Version, Commit: opt.Commit, Kernel: m.Kernel, CPU: m.CPU,
		Cores: m.Cores, Started: start.UTC(), Scenario: sc, Strict: opt.Strict,
	}
	set := &results.Set{Meta: meta}
	mw := results.NewMetaWriter(dir)
	total := 0
	for _, c := range sc.Cells {
		total += len(c.Runs)
	}
	var mu sync.Mutex // the results, progress and error below, for the lanes
	done := 0
	progress := func(p Progress) {
		if opt.Progress != nil {
			p.Cells, p.Done, p.Total, p.Elapsed = len(sc.Cells), done, total, time.Since(start)
			opt.Progress(p)
		}
	}
	var runErr error
	paths := make([]*pathMap, len(sc.Cells))
	lanesErr := runLanes(ctx, sc, opt, laneHooks{
		building: func(ci int) {
			mu.Lock()
			defer mu.Unlock()
			cell := sc.Cells[ci]
			progress(Progress{Cell: ci + 1, CellName: cell.Name, Status: "building", Runs: len(cell.Runs)})
		},
		starting: func(ci, ri int) {
			mu.Lock()
			defer mu.Unlock()
			cell := sc.Cells[ci]
			progress(Progress{Cell: ci + 1, CellName: cell.Name, Run: ri + 1, Runs: len(cell.Runs), Status: "running"})
		},
		finished: func(ci, ri int, r *results.Run) {
			mu.Lock()
			defer mu.Unlock()
			cell := sc.Cells[ci]
			if paths[ci] == nil {
				paths[ci] = newPathMap(cell.Config, CellSeed(cell))
			}
			rows := results.RowsOf(r, paths[ci].uplink)
			done++
			meta.Runs = append(meta.Runs, r)
			set.Runs = append(set.Runs, rows)
			if werr := w.Add(rows); werr != nil && runErr == nil {
				runErr = werr
			}
			_ = mw.Write(meta)
			p := Progress{Cell: ci + 1, CellName: cell.Name, Run: ri + 1, Runs: len(cell.Runs), Status: r.Status}
			if r.Fidelity != nil {
				p.Verdict = string(r.Fidelity.Verdict)
			}
			progress(p)
		},
		retried: func(ci, ri int, r *results.Run) {
			mu.Lock()
			defer mu.Unlock()
			meta.Retried = append(meta.Retried, r)
			_ = mw.Write(meta)
			cell := sc.Cells[ci]
			progress(Progress{Cell: ci + 1, CellName: cell.Name, Run: ri + 1, Runs: len(cell.Runs), Status: "retrying"})
		},
	})
	// Lanes finish runs out of order: the records go in the scenario's.
	order := map[string]int{}
	for ci, c := range sc.Cells {
		order[c.Name] = ci
	}
	inOrder := func(aCell string, aRep int, bCell string, bRep int) int {
		return cmp.Or(cmp.Compare(order[aCell], order[bCell]), cmp.Compare(aRep, bRep))
	}
	slices.SortStableFunc(meta.Runs, func(a, b *results.Run) int { return inOrder(a.Cell, a.Repetition, b.Cell, b.Repetition) })
	slices.SortStableFunc(set.Runs, func(a, b results.Rows) int { return inOrder(a.Cell, a.Repetition, b.Cell, b.Repetition) })
	slices.SortStableFunc(meta.Retried, func(a, b *results.Run) int { return inOrder(a.Cell, a.Repetition, b.Cell, b.Repetition) })
	switch {
	case ctx.Err() != nil:
		meta.Interrupted = "interrupted (" + ctx.Err().Error() + ")"
	case lanesErr.cell != "":
		meta.Interrupted = fmt.Sprintf("cell %s: %v", lanesErr.cell, lanesErr.err)
		runErr = errors.Join(runErr, lanesErr.err)
	}
	runErr = errors.Join(runErr, lanesErr.close)
	meta.Finished = time.Now().UTC()
	meta.Complete = meta.Interrupted == "" && done == total
	if !meta.Complete && meta.Interrupted == "" {
		meta.Interrupted = fmt.Sprintf("%d of %d runs finished", done, total)
	}
	meta.Fidelity = overallFidelity(meta.Runs)
	fidErr := fidelityError(meta)
	metaErr := mw.Write(meta)
	sum, repErr := report.Write(dir, set)
	err = errors.Join(runErr, fidErr, metaErr, repErr)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return dir, sum, err
}
