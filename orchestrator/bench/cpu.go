package bench

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// cpuSample is CPU time consumed so far by the measured work: this
// process (user + system, which includes softirq work its syscalls and
// BPF test runs trigger inline) plus every ksoftirqd thread (softirq work
// deferred to them). /proc/stat's softirq column is not added: with
// tick-based accounting a tick in softirq within a task would be counted
// twice.
type cpuSample struct {
	at  time.Time
	cpu time.Duration
}

// userHZ is the unit of /proc/PID/stat times.
const userHZ = 10 * time.Millisecond

func sampleCPU() cpuSample {
	s := cpuSample{at: time.Now(), cpu: processCPU()}
	for _, pid := range ksoftirqdPIDs() {
		b, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 13 {
			continue
		}
		ut, _ := strconv.ParseUint(f[11], 10, 64)
		st, _ := strconv.ParseUint(f[12], 10, 64)
		s.cpu += time.Duration(ut+st) * userHZ
	}
	return s
}

// processCPU is this process's user + system time so far.
func processCPU() time.Duration {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ksoftirqdPIDs() []string {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if comm, err := os.ReadFile("/proc/" + e.Name() + "/comm"); err == nil && strings.HasPrefix(string(comm), "ksoftirqd/") {
			out = append(out, e.Name())
		}
	}
	return out
}

// cpuUse is the difference of two samples: wall time and CPU time.
type cpuUse struct{ wall, cpu time.Duration }

func (a cpuSample) to(b cpuSample) cpuUse { return cpuUse{wall: b.at.Sub(a.at), cpu: b.cpu - a.cpu} }
