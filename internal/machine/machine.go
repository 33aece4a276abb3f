// Package machine describes the machine ftlab runs on: what results,
// benchmarks and calibrations record, and what a calibration is valid
// for.
package machine

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Info is the machine's CPU, size and kernel.
type Info struct {
	CPU      string `json:"cpu"`
	Cores    int    `json:"cores"`
	MemBytes uint64 `json:"mem_bytes"`
	Kernel   string `json:"kernel"`
}

// Read reads the CPU model (/proc/cpuinfo), core count, memory
// (/proc/meminfo) and kernel release. Unknown parts are "unknown" or 0.
func Read() Info {
	m := Info{CPU: "unknown", Kernel: "unknown", Cores: runtime.NumCPU()}
	scan("/proc/cpuinfo", func(k, v string) bool {
		if k == "model name" {
			m.CPU = v
			return false
		}
		return true
	})
	scan("/proc/meminfo", func(k, v string) bool {
		if k == "MemTotal" {
			if kb, err := strconv.ParseUint(strings.TrimSuffix(v, " kB"), 10, 64); err == nil {
				m.MemBytes = kb << 10
			}
			return false
		}
		return true
	})
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		m.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	return m
}

// String is a one-line description: "AMD EPYC 7B13, 2 cores, 23.4 GiB, Linux 6.8.0".
func (m Info) String() string {
	return m.CPU + ", " + strconv.Itoa(m.Cores) + " cores, " +
		strconv.FormatFloat(float64(m.MemBytes)/(1<<30), 'f', 1, 64) + " GiB, Linux " + m.Kernel
}

// scan calls f with each "key: value" line of a /proc file until f
// returns false.
func scan(path string, f func(k, v string) bool) {
	file, err := os.Open(path)
	if err != nil {
		return
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && !f(strings.TrimSpace(k), strings.TrimSpace(v)) {
			return
		}
	}
}
