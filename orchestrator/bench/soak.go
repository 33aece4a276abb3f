package bench

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/orchestrator/runner"
	"github.com/ftlab/ftlab/orchestrator/scenario"
)

// DefaultSoakRuns is how many runs a soak makes unless told otherwise.
const DefaultSoakRuns = 30

// SoakOptions say what a soak runs.
type SoakOptions struct {
	Scenario string // scenario file (e.g. scenarios/demo.yaml)
	Runs     int    // back-to-back runs (default DefaultSoakRuns)
	// Rate is the full link rate the scenario runs at: a fixed rate
	// needs no calibration (0 keeps the file's own, which must not be
	// auto).
	Rate   uint64
	Agents runner.AgentStarter // default runner.InProcessAgents
	Log    io.Writer
}

// SoakSample is what the process and the machine hold after one run (the
// baseline before the first), counting only what this soak's labs could
// leave: namespaces and mounts under its own prefix and run directory.
type SoakSample struct {
	Run        int           `json:"run"` // 0: before the first
	Status     string        `json:"status,omitempty"`
	Duration   time.Duration `json:"duration_ns,omitempty"`
	Namespaces int           `json:"namespaces"` // ip netns, this soak's prefix
	Mounts     int           `json:"mounts"`     // /proc/self/mounts: its netns binds and bpffs
	Pins       int           `json:"pins"`       // files left in its run directory (bpffs pins, records)
	FDs        int           `json:"fds"`        // /proc/self/fd
	Goroutines int           `json:"goroutines"`
	Threads    int           `json:"threads"`  // /proc/self/status
	Children   int           `json:"children"` // processes whose parent is this one
	HeapAlloc  uint64        `json:"heap_alloc"`
	HeapObjs   uint64        `json:"heap_objects"`
}

// SoakReport is a whole soak: a sample after every run and what grew.
type SoakReport struct {
	Machine  Machine      `json:"machine"`
	Scenario string       `json:"scenario"`
	Rate     uint64       `json:"rate_bps,omitempty"`
	Samples  []SoakSample `json:"samples"`
	// Leaks lists what grew: empty if nothing did.
	Leaks []string `json:"leaks"`
}

// heapNoise is how much the Go heap may grow over a soak before it counts
// as a leak: a tenth of it, and at least 8 MiB (the runtime's own caches,
// result buffers of the last run).
func heapNoise(base uint64) uint64 { return max(base/10, 8<<20) }

// Soak runs a scenario opt.Runs times back to back in this process, each
// run building and taking down its labs, and samples after every run what
// a leak would grow: namespaces, mounts, bpffs pins and run-directory
// files, file descriptors, goroutines, threads, child processes and the
// Go heap. Results go to a temporary directory, removed after each run.
func Soak(ctx context.Context, opt SoakOptions) (rep *SoakReport, err error) {
	if opt.Runs <= 0 {
		opt.Runs = DefaultSoakRuns
	}
	if opt.Agents == nil {
		opt.Agents = runner.InProcessAgents
	}
	sc, err := scenario.LoadWith(opt.Scenario, scenario.Options{Rate: opt.Rate})
	if err != nil {
		return nil, err
	}
	if sc.NeedsRate() {
		return nil, fmt.Errorf("soak: %s says rate: auto; give it a rate (a soak must not calibrate)", opt.Scenario)
	}
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "ftsoak-")
	if err != nil {
		return nil, err
	}
	store := &lab.Store{Dir: filepath.Join(tmp, "run"), Prefix: "ftsoak" + hex.EncodeToString(b[:]) + "-"}
	defer func() {
		_, cerr := store.Cleanup(true)
		err = errors.Join(err, cerr, RemovePrefix(store.Prefix), os.RemoveAll(tmp))
	}()
	if err := os.MkdirAll(store.Dir, 0o755); err != nil {
		return nil, err
	}
	rep = &SoakReport{Machine: MachineInfo(), Scenario: opt.Scenario, Rate: opt.Rate}
	sample := func(run int) (SoakSample, error) {
		s, err := soakSample(store)
		s.Run = run
		return s, err
	}
	base, err := sample(0)
	if err != nil {
		return rep, err
	}
	rep.Samples = append(rep.Samples, base)
	results := filepath.Join(tmp, "results")
	for i := 1; i <= opt.Runs; i++ {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		t0 := time.Now()
		dir, sum, rerr := runner.Run(ctx, sc, runner.Options{Store: store, ResultsRoot: results, Agents: opt.Agents})
		status := "complete"
		switch {
		case sum == nil:
			status = "error"
		case !sum.Complete:
			status = "incomplete"
		case rerr != nil:
			status = "complete, " + firstLine(rerr.Error())
		}
		if dir != "" {
			_ = os.RemoveAll(dir)
		}
		s, err := sample(i)
		if err != nil {
			return rep, err
		}
		s.Status, s.Duration = status, time.Since(t0)
		rep.Samples = append(rep.Samples, s)
		if opt.Log != nil {
			fmt.Fprintf(opt.Log, "soak: run %d/%d %s in %.1fs: ns %d, mounts %d, pins %d, fds %d, goroutines %d, heap %.1f MiB\n",
				i, opt.Runs, status, s.Duration.Seconds(), s.Namespaces, s.Mounts, s.Pins, s.FDs, s.Goroutines, float64(s.HeapAlloc)/(1<<20))
		}
		if rerr != nil && sum == nil {
			// The run could not even start (a fidelity verdict or a
			// failed message still gives a summary: the soak goes on).
			rep.Leaks = rep.judge()
			return rep, fmt.Errorf("soak: run %d: %w", i, rerr)
		}
	}
	rep.Leaks = rep.judge()
	return rep, nil
}

// judge lists what grew. Kernel objects must be back to the baseline
// after every run; the process's descriptors, goroutines and children
// must not grow after the first run (which fills caches: parsed eBPF
// objects, the toolchain's feature probes); the heap not beyond noise.
func (r *SoakReport) judge() []string {
	var leaks []string
	if len(r.Samples) < 2 {
		return nil
	}
	base, first := r.Samples[0], r.Samples[1]
	for _, s := range r.Samples[1:] {
		for _, c := range []struct {
			what      string
			got, want int
		}{
			{"namespaces", s.Namespaces, base.Namespaces},
			{"mounts", s.Mounts, base.Mounts},
			{"run-directory files and pins", s.Pins, base.Pins},
			{"file descriptors", s.FDs, first.FDs},
			{"goroutines", s.Goroutines, first.Goroutines},
			{"child processes", s.Children, base.Children},
		} {
			if c.got > c.want {
				leaks = append(leaks, fmt.Sprintf("run %d: %d %s, %d before", s.Run, c.got, c.what, c.want))
			}
		}
	}
	last := r.Samples[len(r.Samples)-1]
	if last.HeapAlloc > first.HeapAlloc+heapNoise(first.HeapAlloc) {
		leaks = append(leaks, fmt.Sprintf("Go heap grew from %.1f MiB after run 1 to %.1f MiB after run %d",
			float64(first.HeapAlloc)/(1<<20), float64(last.HeapAlloc)/(1<<20), last.Run))
	}
	return leaks
}

// soakSample reads what the process and the soak's store hold now, after
// a garbage collection.
func soakSample(store *lab.Store) (SoakSample, error) {
	var s SoakSample
	ns, err := nsutil.List(store.Prefix)
	if err != nil {
		return s, err
	}
	s.Namespaces = len(ns)
	if s.Mounts, err = countMounts(store); err != nil {
		return s, err
	}
	_ = filepath.WalkDir(store.Dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			s.Pins++
		}
		return nil
	})
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return s, err
	}
	s.FDs = len(fds)
	s.Goroutines = runtime.NumGoroutine()
	s.Threads = threads()
	s.Children = children()
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	s.HeapAlloc, s.HeapObjs = m.HeapAlloc, m.HeapObjects
	return s, nil
}

// countMounts counts this process's mounts that belong to the soak: its
// namespaces' bind mounts and anything under its run directory.
func countMounts(store *lab.Store) (int, error) {
	f, err := os.Open("/proc/self/mounts")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		mp := fields[1]
		if strings.HasPrefix(mp, filepath.Join(nsutil.Dir, store.Prefix)) || strings.HasPrefix(mp, store.Dir+"/") {
			n++
		}
	}
	return n, sc.Err()
}

// threads is the process's thread count.
func threads() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// children counts the processes whose parent is this one.
func children() int {
	n := 0
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join("/proc/self/task", t.Name(), "children"))
		if err == nil {
			n += len(strings.Fields(string(b)))
		}
	}
	return n
}

// Markdown writes the soak as a table, then what grew.
func (r *SoakReport) Markdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# ftlab bench soak\n\n- Machine: %s\n- Go: %s\n- Date: %s\n- Scenario: %s", r.Machine.Info, r.Machine.Go, r.Machine.Date.Format(time.RFC3339), r.Scenario)
	if r.Rate > 0 {
		fmt.Fprintf(&b, " at %s", units.FormatRate(r.Rate))
	}
	fmt.Fprintf(&b, ", %d runs back to back in one process\n\n", len(r.Samples)-1)
	b.WriteString("| run | status | seconds | namespaces | mounts | run-dir files | fds | goroutines | threads | children | heap MiB | heap objects |\n")
	b.WriteString("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range r.Samples {
		run, status, secs := strconv.Itoa(s.Run), s.Status, fmt.Sprintf("%.1f", s.Duration.Seconds())
		if s.Run == 0 {
			run, status, secs = "before", "", ""
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %d | %d | %d | %d | %d | %.1f | %d |\n", run, status, secs,
			s.Namespaces, s.Mounts, s.Pins, s.FDs, s.Goroutines, s.Threads, s.Children, float64(s.HeapAlloc)/(1<<20), s.HeapObjs)
	}
	if len(r.Leaks) == 0 {
		b.WriteString("\nNo leak: namespaces, mounts and run-directory files back to the baseline after every run; descriptors, goroutines and children flat after the first run; the heap within noise.\n")
	} else {
		b.WriteString("\nGrew:\n")
		for _, l := range r.Leaks {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
