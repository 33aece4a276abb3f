package lab

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// Owner is the process a lab belongs to (a run's lab belongs to its
// `ftlab run`): once it is gone the lab is a leftover. A process is its PID
// and its start time, so that another process given the same PID later is
// not taken for the owner.
type Owner struct {
	PID int `json:"pid"`
	// Start is the process's start time, clock ticks after boot
	// (/proc/<pid>/stat, field 22).
	Start uint64 `json:"start"`
}

// Self is the calling process as an Owner.
func Self() (Owner, error) {
	pid := os.Getpid()
	start, err := startTime(pid)
	if err != nil {
		return Owner{}, err
	}
	return Owner{PID: pid, Start: start}, nil
}

// Alive reports whether the owner is still running: a process with its
// PID exists and started when it did.
func (o Owner) Alive() bool {
	start, err := startTime(o.PID)
	return err == nil && start == o.Start
}

// startTime reads field 22 (starttime) of /proc/<pid>/stat. The second
// field, the command name in parentheses, may hold spaces and
// parentheses itself: the fields after it follow its last ')'.
func startTime(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	fields := bytes.Fields(b[i+1:])
	const startField = 22 - 3 // fields after the name start at field 3
	if len(fields) <= startField {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the name", pid, len(fields))
	}
	return strconv.ParseUint(string(fields[startField]), 10, 64)
}
