package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ftlab/ftlab/internal/machine"
	"github.com/ftlab/ftlab/orchestrator/fidelity"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/orchestrator/scenario"
	"github.com/ftlab/ftlab/switchd"
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

// RunMeta is run.json: what was run, on what, and how every run went.
type RunMeta struct {
	Format      int                `json:"format"`
	Version     string             `json:"ftlab_version"`
	Commit      string             `json:"ftlab_commit"`
	Kernel      string             `json:"kernel"`
	CPU         string             `json:"cpu"`
	Cores       int                `json:"cores"`
	Started     time.Time          `json:"started"`
	Finished    time.Time          `json:"finished,omitempty"`
	Complete    bool               `json:"complete"`
	Interrupted string             `json:"interrupted,omitempty"`
	Scenario    *scenario.Scenario `json:"scenario"`
	Runs        []*RunResult       `json:"runs"`
	// Fidelity is the worst verdict of the runs; Strict says whether WARN
	// failed the scenario.
	Fidelity fidelity.Verdict `json:"fidelity,omitempty"`
	Strict   bool             `json:"strict,omitempty"`
}

const runFormat = 1

// Run executes every cell and repetition of sc and writes the results to
// a new directory under opt.ResultsRoot, which it returns. The results of
// every finished run are kept, also when ctx is cancelled or a run fails;
// run.json then says the scenario is incomplete and why.
func Run(ctx context.Context, sc *scenario.Scenario, opt Options) (dir string, sum *Summary, err error) {
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
		dir, err = opt.Dir, makeDir(opt.Dir)
	} else {
		dir, err = newResultsDir(filepath.Join(opt.ResultsRoot, sc.Name), start.UTC().Format("20060102-150405"))
	}
	if err != nil {
		return "", nil, err
	}
	w, err := newWriter(dir)
	if err != nil {
		return "", nil, err
	}
	defer w.close()
	m := machine.Read()
	meta := &RunMeta{
		Format: runFormat, Version: opt.Version, Commit: opt.Commit, Kernel: m.Kernel, CPU: m.CPU,
		Cores: m.Cores, Started: start.UTC(), Scenario: sc, Strict: opt.Strict,
	}
	total := 0
	for _, c := range sc.Cells {
		total += len(c.Runs)
	}
	byCell := map[string][]runRows{}
	subflows := map[string][]subflowRow{}
	done := 0
	progress := func(p Progress) {
		if opt.Progress != nil {
			p.Cells, p.Done, p.Total, p.Elapsed = len(sc.Cells), done, total, time.Since(start)
			opt.Progress(p)
		}
	}
	var runErr error
cells:
	for ci, cell := range sc.Cells {
		progress(Progress{Cell: ci + 1, CellName: cell.Name, Status: "building", Runs: len(cell.Runs)})
		err := runCell(ctx, cell, opt, func(r *RunResult, ri int) {
			done++
			meta.Runs = append(meta.Runs, r)
			byCell[cell.Name] = append(byCell[cell.Name], rowsOf(r))
			subflows[cell.Name] = append(subflows[cell.Name], subflowRowsOf(r)...)
			if werr := w.addRun(r); werr != nil && runErr == nil {
				runErr = werr
			}
			_ = writeJSON(dir, RunFile, meta)
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
	meta.Finished = time.Now().UTC()
	meta.Complete = meta.Interrupted == "" && done == total
	if !meta.Complete && meta.Interrupted == "" {
		meta.Interrupted = fmt.Sprintf("%d of %d runs finished", done, total)
	}
	meta.Fidelity = overallFidelity(meta.Runs)
	fidErr := fidelityError(meta)
	sum = summaryOf(meta, byCell)
	err = errors.Join(runErr, fidErr, writeJSON(dir, RunFile, meta), writeJSON(dir, SummaryFile, sum), writeReportFile(dir, meta, sum),
		writePlots(dir, plotCells(sum), byCell), writePathsPlot(dir, pathCells(meta, sum), subflows))
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return dir, sum, err
}

// Settling: how long settledStats waits at most, and how often it looks.
const (
	maxSettle   = 3 * time.Second
	settleEvery = 20 * time.Millisecond
)

// settledStats reads the switch ports' counters once the fabric has
// drained after the agents stopped: with packets still queued in a slow
// link's qdisc, a packet its sender counted and its receiver had not yet
// seen would look lost. It waits until no qdisc holds a packet twice in a
// row (the second look also lets a packet between a dequeue and the
// peer's ingress arrive), at most maxSettle, and returns the last read.
func settledStats(ctl *switchd.Lab) ([]switchd.PortStats, error) {
	deadline := time.Now().Add(maxSettle)
	empty := 0
	for {
		ports, err := ctl.Stats()
		if err != nil {
			return nil, err
		}
		queued := false
		for _, p := range ports {
			if p.Qdisc != nil && p.Qdisc.BacklogPkts > 0 {
				queued = true
				break
			}
		}
		if queued {
			empty = 0
		} else if empty++; empty == 2 {
			return ports, nil
		}
		if time.Now().After(deadline) {
			return ports, nil
		}
		time.Sleep(settleEvery)
	}
}

// newResultsDir creates a new results directory named after the start
// time under parent; two runs started in the same second get name and
// name-2, never one directory.
func newResultsDir(parent, name string) (string, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("results: %w", err)
	}
	for i := 1; ; i++ {
		dir := filepath.Join(parent, name)
		if i > 1 {
			dir += fmt.Sprintf("-%d", i)
		}
		switch err := os.Mkdir(dir, 0o755); {
		case err == nil:
			return dir, nil
		case !errors.Is(err, os.ErrExist) || i >= 1000:
			return "", fmt.Errorf("results: %w", err)
		}
	}
}

// makeDir creates dir, which must not exist yet: results are never
// written over.
func makeDir(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return nil
}

func writeReportFile(dir string, meta *RunMeta, sum *Summary) error {
	f, err := os.Create(filepath.Join(dir, ReportFile))
	if err != nil {
		return err
	}
	defer f.Close()
	if err := writeReport(f, meta, sum); err != nil {
		return err
	}
	if err := writePlotLinks(f); err != nil {
		return err
	}
	return writePathsLink(f, pathCells(meta, sum))
}

// runCell builds the cell's lab, runs its repetitions and takes the lab
// down again, whatever happens.
func runCell(ctx context.Context, cell *scenario.Cell, opt Options, finished func(*RunResult, int), starting func(int)) (err error) {
	cfg := cell.Config
	seed := uint64(1)
	if len(cell.Runs) > 0 {
		seed = cell.Runs[0].Seed
	}
	var st *lab.State
	if opt.ReuseLab != "" {
		if st, err = reuseLab(ctx, opt, cfg, seed); err != nil {
			return err
		}
	} else {
		st, err = opt.Store.Up(ctx, opt.LabName, cfg.Topo(), lab.UpOptions{
			TopologyFile: cfg.Topology.Source, DataPlane: dataPlaneOf(cfg, seed),
		})
		if err != nil {
			return fmt.Errorf("build lab: %w", err)
		}
		defer func() {
			if derr := opt.Store.Down(opt.LabName); derr != nil {
				err = errors.Join(err, fmt.Errorf("take lab down: %w", derr))
			}
		}()
	}
	paths := newPathMap(cfg, seed)
	for ri, run := range cell.Runs {
		if ctx.Err() != nil {
			return nil
		}
		starting(ri)
		r := runOnce(ctx, st, opt, cell, run)
		r.paths = paths
		finished(r, ri)
		if r.Status == StatusFailed {
			return errors.New(r.Error)
		}
	}
	return nil
}

// runOnce runs one repetition: agents up, messages released on time and
// after their dependencies, faults injected, until every message is
// delivered, the cell's timeout passes or ctx ends.
func runOnce(ctx context.Context, st *lab.State, opt Options, cell *scenario.Cell, run *scenario.Run) *RunResult {
	r := &RunResult{Cell: cell.Name, Repetition: run.Repetition, Seed: run.Seed, Bound: run.Bound, Started: time.Now().UTC()}
	ctl := opt.Store.Control(st)
	fail := func(err error) *RunResult {
		r.Status, r.Error = StatusFailed, err.Error()
		return r
	}
	if err := ctl.ResetStats(); err != nil {
		return fail(err)
	}
	// The links' real queues are measured in shaped mode; a kernel that
	// cannot (no raw tracepoints) still runs, with the verdict saying so.
	var dq *switchd.DequeueWatch
	if cell.Config.DataPlane == scenario.Shaped {
		var err error
		if dq, err = ctl.WatchDequeues(); err != nil {
			r.linksUnmeasured = err.Error()
		} else {
			defer dq.Close()
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	cpu := fidelity.NewSampler()
	cpu.Start()
	cpuStopped := false
	defer func() {
		if !cpuStopped {
			cpu.Stop()
		}
	}()
	agents, err := opt.Agents(runCtx, st, opt.Store, cell.Config, run)
	if err != nil {
		return fail(fmt.Errorf("start agents: %w", err))
	}
	msgs := make([]*MessageResult, len(run.Messages))
	waiting := make([]int, len(run.Messages)) // dependencies not yet delivered
	dependents := map[int][]int{}
	for i, m := range run.Messages {
		msgs[i] = &MessageResult{Message: m}
		waiting[i] = len(m.After)
		for _, d := range m.After {
			dependents[d] = append(dependents[d], i)
		}
	}
	r.Messages = msgs

	start := time.Now()
	var mono unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &mono) == nil {
		r.StartMonoNs = mono.Nano()
	}
	in := &injector{ctl: ctl, failed: map[int]bool{}}
	faults := make(chan FaultEvent, len(run.Timeline))
	go in.runTimeline(runCtx, start, run.Timeline, func(ev FaultEvent) { faults <- ev })

	// Releases: messages without dependencies at their start offsets;
	// dependents when the last of their dependencies is delivered (and
	// not before their own start offset).
	release := make(chan int, len(msgs))
	var timers []*time.Timer
	schedule := func(i int) {
		wait := time.Until(start.Add(run.Messages[i].Start))
		if wait <= 0 {
			release <- i
			return
		}
		timers = append(timers, time.AfterFunc(wait, func() { release <- i }))
	}
	for i := range msgs {
		if waiting[i] == 0 {
			schedule(i)
		}
	}
	defer func() {
		for _, t := range timers {
			t.Stop()
		}
	}()

	timeout := time.NewTimer(cell.Config.Timeout)
	defer timeout.Stop()
	delivered := 0
	var loopErr error
loop:
	for delivered < len(msgs) {
		select {
		case <-ctx.Done():
			r.Status = StatusInterrupted
			break loop
		case <-timeout.C:
			r.Status = StatusTimeout
			break loop
		case ev := <-faults:
			r.Faults = append(r.Faults, ev)
		case i := <-release:
			msgs[i].Released = time.Since(start)
			if err := agents.Send(run.Messages[i]); err != nil {
				loopErr = fmt.Errorf("send message %d: %w", i, err)
				break loop
			}
		case ev := <-agents.Events():
			switch ev.Kind {
			case EventError:
				loopErr = ev.Err
				break loop
			case EventSent:
				if ev.Msg >= 0 && ev.Msg < len(msgs) {
					msgs[ev.Msg].Sent = ev.Sent
				}
			case EventReceived:
				if ev.Msg < 0 || ev.Msg >= len(msgs) || msgs[ev.Msg].Received != nil {
					continue
				}
				m := msgs[ev.Msg]
				m.Received, m.Done = ev.Received, time.Since(start)
				delivered++
				for _, d := range dependents[ev.Msg] {
					if waiting[d]--; waiting[d] == 0 {
						schedule(d)
					}
				}
			}
		}
	}
	if delivered == len(msgs) {
		r.Status = StatusComplete
		for _, m := range msgs {
			r.CCT = max(r.CCT, m.Done)
		}
	}
	// Let the last acknowledgements reach their senders before stopping.
	drain := time.After(200 * time.Millisecond)
drainLoop:
	for r.Status == StatusComplete {
		select {
		case ev := <-agents.Events():
			if ev.Kind == EventSent && ev.Msg >= 0 && ev.Msg < len(msgs) {
				msgs[ev.Msg].Sent = ev.Sent
			}
		case <-drain:
			break drainLoop
		}
	}
	cancel()
	flows, stopErr := agents.Stop()
	cpuStats := cpu.Stop()
	cpuStopped = true
	r.Flows = flows
	r.Duration = time.Since(start)
	if ports, err := settledStats(ctl); err == nil {
		r.Ports = ports
		if dq != nil {
			loopErr = errors.Join(loopErr, dq.Fill(ports))
			hosts, err := dq.HostPorts()
			loopErr = errors.Join(loopErr, err)
			r.hostPorts = hosts
		}
	} else {
		loopErr = errors.Join(loopErr, err)
	}
	for len(faults) > 0 {
		r.Faults = append(r.Faults, <-faults)
	}
	if err := errors.Join(loopErr, stopErr); err != nil {
		return fail(err)
	}
	r.Fidelity = judge(r, cell, run, cpuStats)
	return r
}
