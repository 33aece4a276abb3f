package capture

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ftlab/ftlab/bpf"
	"github.com/ftlab/ftlab/switchd"
)

// ErrBusy says another capture is reading a switch's tap.
var ErrBusy = errors.New("another capture is reading this switch")

// switchTap reads one switch's tap for the captured ports of that switch.
type switchTap struct {
	node  string
	tap   *bpf.Tap
	lock  *os.File
	ports map[int]*Port // captured ports by number
	all   map[int]*Port // every port of the switch, for Peer
	clock monoClock
	lost  uint64 // read at close
}

// openSwitchTap takes the switch's capture lock (an flock on its pinned
// tap configuration, so it lives exactly as long as this process holds
// it) and arms the tap for ports.
func openSwitchTap(pinRoot, node string, ports, all map[int]*Port, snaplen int, clock monoClock) (*switchTap, error) {
	dir := switchd.SwitchPinDir(pinRoot, node)
	lock, err := os.Open(filepath.Join(dir, "maps", "tap_cfg"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("capture: %s: its data plane has no capture tap (installed by an older ftlab?): reinstall it (ftlab down, up)", node)
	}
	if err != nil {
		return nil, fmt.Errorf("capture: %s: %w", node, err)
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		lock.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("capture: %s: %w; stop it first (one capture per switch, any number of its ports)", node, ErrBusy)
		}
		return nil, fmt.Errorf("capture: %s: lock: %w", node, err)
	}
	tap, err := bpf.OpenTap(dir)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("capture: %s: %w", node, err)
	}
	st := &switchTap{node: node, tap: tap, lock: lock, ports: ports, all: all, clock: clock}
	cfg := bpf.TapConfig{SnapLen: snaplen}
	for p := range ports {
		cfg.In = append(cfg.In, p)
		cfg.Out = append(cfg.Out, p)
	}
	// A capture killed before it could disarm left records behind.
	st.discard()
	if err := tap.Start(cfg); err != nil {
		st.close()
		return nil, fmt.Errorf("capture: %s: %w", node, err)
	}
	return st, nil
}

// discard drops whatever the ring holds.
func (s *switchTap) discard() {
	var rec bpf.TapRecord
	for s.tap.Pending() > 0 {
		s.tap.SetDeadline(time.Now())
		if s.tap.Read(&rec) != nil {
			break
		}
	}
	s.tap.SetDeadline(time.Time{})
}

func (s *switchTap) run(out chan<- *Frame) error {
	var rec bpf.TapRecord
	for {
		if err := s.tap.Read(&rec); err != nil {
			if errors.Is(err, os.ErrClosed) {
				return nil
			}
			return fmt.Errorf("capture: %s: %w", s.node, err)
		}
		p := s.ports[rec.Port]
		if p == nil {
			continue // armed by an earlier capture, or a port not asked for
		}
		f := &Frame{Port: p, Time: s.clock.wall(rec.Mono), Len: rec.Len, Data: append([]byte(nil), rec.Data...),
			Dir: rec.Dir, Verdict: rec.Verdict, Cause: rec.Cause, Flags: rec.Flags, Peer: s.all[rec.Peer]}
		f.decode()
		out <- f
	}
}

// close disarms the tap, reads what it lost and releases the lock.
func (s *switchTap) close() error {
	lost, err := s.tap.Lost()
	s.lost = lost
	err = errors.Join(err, s.tap.Close())
	return errors.Join(err, s.lock.Close())
}

// monoClock turns CLOCK_MONOTONIC readings (the programs' bpf_ktime_get_ns)
// into wall-clock times.
type monoClock struct {
	wall0 time.Time
	mono0 time.Duration
}

func newMonoClock() (monoClock, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return monoClock{}, err
	}
	return monoClock{wall0: time.Now(), mono0: time.Duration(ts.Nano())}, nil
}

func (c monoClock) wall(mono time.Duration) time.Time { return c.wall0.Add(mono - c.mono0) }
