package fidelity

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// SampleInterval is how often the CPU sampler reads /proc/stat.
const SampleInterval = 100 * time.Millisecond

// SaturatedBusy is the share of all cores busy (anything but idle and
// iowait) from which a sample counts as the machine being saturated.
const SaturatedBusy = 0.95

// CPUStats are the CPU sampler's findings over a run.
type CPUStats struct {
	Cores   int `json:"cores"`
	Samples int `json:"samples"`
	// SaturatedFraction is the share of samples in which at least
	// SaturatedBusy of all cores were busy.
	SaturatedFraction float64 `json:"saturated_fraction"`
	MeanBusy          float64 `json:"mean_busy"`    // share of all cores' time busy
	MeanSoftirq       float64 `json:"mean_softirq"` // share of all cores' time in softirq (the data plane)
	// MeanSteal is the share of all cores' time the hypervisor gave to
	// other guests (steal): the machine's neighbours, not ftlab. It
	// counts as busy (the cores were not ftlab's to use).
	MeanSteal float64 `json:"mean_steal,omitempty"`
	// ProcessShare is the ftlab process's CPU time (in-process agents and
	// orchestrator) over the run's wall time times the cores.
	ProcessShare float64 `json:"process_share"`
}

// DisturbedSteal is the share of all cores' time the hypervisor may give
// other guests during a run (CPUStats.MeanSteal) before a WARN of that run
// counts as disturbed: its lateness may be the neighbours', not the
// emulation's. Disturbed runs may be run again (runner
// Options.RetryDisturbed), and calibration asks a disturbed trial that
// contradicts an earlier one again.
const DisturbedSteal = 0.10

// Disturbed reports whether r is a WARN with the hypervisor taking
// DisturbedSteal of the cores or more. A FAIL is never disturbed: it
// broke an invariant, whoever had the cores.
func (r *Report) Disturbed() bool {
	return r != nil && r.Verdict == WARN && r.CPU != nil && r.CPU.MeanSteal >= DisturbedSteal
}

// stealNote is ", the hypervisor took N%" when it took at least 1% of the
// cores' time, for the reasons of a verdict: the machine's neighbours, not
// ftlab's load, then made the run late.
func (c *CPUStats) stealNote() string {
	if c == nil || c.MeanSteal < 0.01 {
		return ""
	}
	return fmt.Sprintf(", the hypervisor took %.0f%% (steal)", 100*c.MeanSteal)
}

// cpuTimes are the summed jiffies of every cpuN line of /proc/stat.
type cpuTimes struct {
	total, idle, softirq, steal uint64
	cores                       int
}

// parseProcStat sums the per-CPU lines of /proc/stat.
func parseProcStat(data []byte) cpuTimes {
	var t cpuTimes
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 8 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		// user nice system idle iowait irq softirq steal [guest guest_nice]
		// (guest time is already in user and nice).
		var v [8]uint64
		for i := range v {
			if i+1 < len(f) {
				v[i], _ = strconv.ParseUint(f[i+1], 10, 64)
			}
		}
		for _, x := range v {
			t.total += x
		}
		t.idle += v[3] + v[4]
		t.softirq += v[6]
		t.steal += v[7]
		t.cores++
	}
	return t
}

// sample is one interval's shares.
type sample struct{ busy, softirq, steal float64 }

func between(a, b cpuTimes) (sample, bool) {
	if b.total <= a.total {
		return sample{}, false
	}
	d := float64(b.total - a.total)
	idle := float64(b.idle - a.idle)
	return sample{busy: 1 - idle/d, softirq: float64(b.softirq-a.softirq) / d, steal: float64(b.steal-a.steal) / d}, true
}

// summarize turns samples into CPUStats (without ProcessShare).
func summarize(samples []sample, cores int) CPUStats {
	s := CPUStats{Cores: cores, Samples: len(samples)}
	if len(samples) == 0 {
		return s
	}
	sat := 0
	for _, x := range samples {
		if x.busy >= SaturatedBusy {
			sat++
		}
		s.MeanBusy += x.busy
		s.MeanSoftirq += x.softirq
		s.MeanSteal += x.steal
	}
	n := float64(len(samples))
	s.SaturatedFraction, s.MeanBusy, s.MeanSoftirq, s.MeanSteal = float64(sat)/n, s.MeanBusy/n, s.MeanSoftirq/n, s.MeanSteal/n
	return s
}

// Sampler samples /proc/stat in the background between Start and Stop.
type Sampler struct {
	path     string
	interval time.Duration
	stop     chan struct{}
	done     chan struct{}
	mu       sync.Mutex
	samples  []sample
	cores    int
	start    time.Time
	rusage0  time.Duration
}

// NewSampler returns a sampler of /proc/stat every SampleInterval.
func NewSampler() *Sampler { return &Sampler{path: "/proc/stat", interval: SampleInterval} }

func (s *Sampler) read() (cpuTimes, bool) {
	data, err := os.ReadFile(s.path)
	if err != nil {
		return cpuTimes{}, false
	}
	t := parseProcStat(data)
	return t, t.cores > 0
}

func processCPU() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Start begins sampling.
func (s *Sampler) Start() {
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	s.start, s.rusage0 = time.Now(), processCPU()
	go func() {
		defer close(s.done)
		prev, ok := s.read()
		t := time.NewTicker(s.interval)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
			cur, cok := s.read()
			if ok && cok {
				if x, good := between(prev, cur); good {
					s.mu.Lock()
					s.samples, s.cores = append(s.samples, x), cur.cores
					s.mu.Unlock()
				}
			}
			prev, ok = cur, cok
		}
	}()
}

// Stop ends sampling and returns what it found; nil if it took no
// sample (no /proc/stat, or a run shorter than one interval).
func (s *Sampler) Stop() *CPUStats {
	if s.stop == nil {
		return nil
	}
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.samples) == 0 {
		return nil
	}
	st := summarize(s.samples, s.cores)
	if wall := time.Since(s.start); wall > 0 && s.cores > 0 {
		st.ProcessShare = float64(processCPU()-s.rusage0) / float64(wall) / float64(s.cores)
	}
	return &st
}
