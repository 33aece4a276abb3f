package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

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
}

// Progress is one step of a scenario run.
type Progress struct {
	Cell, Cells int    // 1-based index of the current cell, and how many
	Run, Runs   int    // 1-based index of the current run in its cell
	Done, Total int    // runs finished and in all
	CellName    string // e.g. policy=ofan,transport=rss+pfld
	Status      string // "building", "running", or the finished run's status
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
	total := 0
	for _, c := range sc.Cells {
		total += len(c.Runs)
	}
	done := 0
	progress := func(p Progress) {
		if opt.Progress != nil {
			p.Cells, p.Done, p.Total, p.Elapsed = len(sc.Cells), done, total, time.Since(start)
			opt.Progress(p)
		}
	}
	var runErr error
	labs := &cellLabs{opt: opt}
cells:
	for ci, cell := range sc.Cells {
		progress(Progress{Cell: ci + 1, CellName: cell.Name, Status: "building", Runs: len(cell.Runs)})
		err := runCell(ctx, cell, opt, labs, func(r *results.Run, rows results.Rows, ri int) {
			done++
			meta.Runs = append(meta.Runs, r)
			set.Runs = append(set.Runs, rows)
			if werr := w.Add(rows); werr != nil && runErr == nil {
				runErr = werr
			}
			_ = results.WriteMeta(dir, meta)
			progress(Progress{Cell: ci + 1, CellName: cell.Name, Run: ri + 1, Runs: len(cell.Runs), Status: r.Status})
		}, func(ri int) {
			progress(Progress{Cell: ci + 1, CellName: cell.Name, Run: ri + 1, Runs: len(cell.Runs), Status: "running"})
		})
		switch {
		case ctx.Err() != nil:
			meta.Interrupted = "interrupted (" + ctx.Err().Error() + ")"
			break cells
		case err != nil:
			meta.Interrupted = fmt.Sprintf("cell %s: %v", cell.Name, err)
			runErr = err
			break cells
		}
	}
	runErr = errors.Join(runErr, labs.close())
	meta.Finished = time.Now().UTC()
	meta.Complete = meta.Interrupted == "" && done == total
	if !meta.Complete && meta.Interrupted == "" {
		meta.Interrupted = fmt.Sprintf("%d of %d runs finished", done, total)
	}
	meta.Fidelity = overallFidelity(meta.Runs)
	fidErr := fidelityError(meta)
	metaErr := results.WriteMeta(dir, meta)
	sum, repErr := report.Write(dir, set)
	err = errors.Join(runErr, fidErr, metaErr, repErr)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return dir, sum, err
}

// runCell gets the cell's lab (labs: built, or the last cell's
// reprogrammed) and runs its repetitions on it.
func runCell(ctx context.Context, cell *scenario.Cell, opt Options, labs *cellLabs, finished func(*results.Run, results.Rows, int), starting func(int)) error {
	cfg := cell.Config
	seed := uint64(1)
	if len(cell.Runs) > 0 {
		seed = cell.Runs[0].Seed
	}
	if opt.ReuseLab != "" { // no ftlab send on the lab's hosts meanwhile
		release, err := opt.Store.LockTraffic(opt.ReuseLab)
		if err != nil {
			return err
		}
		defer release()
	}
	st, err := labs.forCell(ctx, cfg, seed)
	if err != nil {
		return err
	}
	paths := newPathMap(cfg, seed)
	for ri, run := range cell.Runs {
		if ctx.Err() != nil {
			return nil
		}
		starting(ri)
		r := runOnce(ctx, st, opt, cell, run)
		finished(r, results.RowsOf(r, paths.uplink), ri)
		if r.Status == results.StatusFailed {
			return errors.New(r.Error)
		}
	}
	return nil
}
