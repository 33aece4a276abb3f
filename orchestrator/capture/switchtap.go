package capture

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/ftlab/ftlab/bpf"
	"github.com/ftlab/ftlab/switchd"
)

// ErrBusy says another capture is reading a switch's tap.
var ErrBusy = errors.New("another capture is reading this switch")

// staleCheck is how often a capture checks that the switch's data plane
// is still the one whose tap it reads: `ftlab run --lab` reinstalls it
// for every cell, and the capture follows.
const staleCheck = 50 * time.Millisecond

// switchTap reads one switch's tap for the captured ports of that switch.
type switchTap struct {
	node    string
	dir     string        // the lab's plane
	sw      int           // the switch's index in it
	ports   map[int]*Port // captured ports by number
	all     map[int]*Port // every port of the switch, for Peer
	snaplen int
	clock   monoClock

	lock     *os.File // held for the whole capture, across reinstalls
	mu       sync.Mutex
	stopping bool // stop was called: drain and return
	closed   bool
	cur      *tapHandle
	lostN    uint64 // of the handles already closed
	reopens  int
}

// tapHandle is one armed tap of one data plane instance.
type tapHandle struct {
	tap *bpf.Tap
	id  ebpf.MapID
}

func openSwitchTap(l Lab, node string, ports, all map[int]*Port, snaplen int, clock monoClock) (*switchTap, error) {
	lock, err := lockSwitch(l.RunDir, node)
	if err != nil {
		return nil, err
	}
	sw, ok := switchd.SwitchIndex(l.Topo, node)
	if !ok {
		lock.Close()
		return nil, fmt.Errorf("capture: %s is not a switch", node)
	}
	s := &switchTap{node: node, dir: switchd.PlaneDir(l.PinRoot), sw: sw, ports: ports, all: all, snaplen: snaplen, clock: clock, lock: lock}
	h, err := s.arm()
	if err != nil {
		lock.Close()
		return nil, err
	}
	s.cur = h
	return s, nil
}

// lockSwitch takes the switch's capture lock, an flock on a file in the
// lab's run directory: it lives exactly as long as this process holds it.
// (Not on a file in the lab's bpffs: an open file there keeps the whole
// bpffs instance, and with it every pinned attachment, alive after the
// data plane is removed, and the next install finds the ports busy.)
func lockSwitch(runDir, node string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(runDir, "capture-"+node+".lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("capture: %s: lock: %w", node, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("capture: %s: %w; stop it first (one capture per switch, any number of its ports)", node, ErrBusy)
		}
		return nil, fmt.Errorf("capture: %s: lock: %w", node, err)
	}
	return f, nil
}

// arm opens the tap of the switch's installed data plane and arms it for
// the ports.
func (s *switchTap) arm() (*tapHandle, error) {
	cfgPin := filepath.Join(s.dir, "maps", "tap_cfg")
	id, err := pinnedMapID(cfgPin)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("capture: %s: its data plane has no capture tap (not installed, or by an older ftlab: reinstall it)", s.node)
	}
	if err != nil {
		return nil, fmt.Errorf("capture: %s: %w", s.node, err)
	}
	tap, err := bpf.OpenTap(s.dir, s.sw)
	if err != nil {
		return nil, fmt.Errorf("capture: %s: %w", s.node, err)
	}
	h := &tapHandle{tap: tap, id: id}
	cfg := bpf.TapConfig{SnapLen: s.snaplen}
	for p := range s.ports {
		cfg.In = append(cfg.In, p)
		cfg.Out = append(cfg.Out, p)
	}
	// A capture killed before it could disarm left records behind.
	discard(tap)
	if err := tap.Start(cfg); err != nil {
		h.close()
		return nil, fmt.Errorf("capture: %s: %w", s.node, err)
	}
	return h, nil
}

func pinnedMapID(path string) (ebpf.MapID, error) {
	m, err := ebpf.LoadPinnedMap(path, nil)
	if err != nil {
		return 0, err
	}
	defer m.Close()
	info, err := m.Info()
	if err != nil {
		return 0, err
	}
	id, _ := info.ID()
	return id, nil
}

// discard drops whatever the ring holds.
func discard(t *bpf.Tap) {
	var rec bpf.TapRecord
	for t.Pending() > 0 {
		t.SetDeadline(time.Now())
		if t.Read(&rec) != nil {
			break
		}
	}
	t.SetDeadline(time.Time{})
}

// close disarms and releases one handle, returning what it lost.
func (h *tapHandle) close() (uint64, error) {
	lost, err := h.tap.Lost()
	return lost, errors.Join(err, h.tap.Close())
}

func (s *switchTap) run(out chan<- *Frame) error {
	var rec bpf.TapRecord
	next := time.Now().Add(staleCheck)
	for {
		s.mu.Lock()
		h, stopping := s.cur, s.stopping
		s.mu.Unlock()
		switch {
		case h == nil && stopping:
			return nil
		case h == nil || !stopping && time.Now().After(next):
			s.follow(h)
			next = time.Now().Add(staleCheck)
			continue
		case !stopping:
			h.tap.SetDeadline(next)
		}
		err := h.tap.Read(&rec)
		switch {
		case errors.Is(err, bpf.ErrTapDrained):
			return nil // stop disarmed the tap, and every record is read
		case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, os.ErrClosed):
			continue
		case err != nil:
			return fmt.Errorf("capture: %s: %w", s.node, err)
		}
		p := s.ports[rec.Port]
		if p == nil {
			continue // a port not asked for
		}
		f := &Frame{Port: p, Time: s.clock.wall(rec.Mono), Len: rec.Len, Data: append([]byte(nil), rec.Data...),
			Dir: rec.Dir, Verdict: rec.Verdict, Cause: rec.Cause, Flags: rec.Flags, Peer: s.all[rec.Peer]}
		f.decode()
		out <- f
	}
}

// follow checks that h still reads the switch's installed data plane; if
// the data plane was reinstalled (or h is nil after a failed attempt) it
// arms the new one. While the switch has none, it waits. Frames of the
// new data plane before it is armed (at most staleCheck) are not seen.
func (s *switchTap) follow(h *tapHandle) {
	if h != nil {
		if id, err := pinnedMapID(filepath.Join(s.dir, "maps", "tap_cfg")); err == nil && id == h.id {
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return
	}
	if s.cur != nil {
		lost, _ := s.cur.close() // its maps are already gone: errors say nothing
		s.lostN += lost
		s.cur = nil
	}
	if nh, err := s.arm(); err == nil {
		s.cur = nh
		s.reopens++
	} // else not installed (yet): try again at the next check
}

// stop disarms the tap; run then returns once it has read every record
// the programs queued.
func (s *switchTap) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return
	}
	s.stopping = true
	if s.cur != nil {
		_ = s.cur.tap.Stop()
		if err := s.cur.tap.Drain(); err != nil {
			// Cannot wake the reader: close, losing what is queued.
			lost, _ := s.cur.close()
			s.lostN += lost
			s.cur = nil
		}
	}
}

// lost returns the records the switch's ring had no room for (final
// after close), charged to the first captured port of the switch.
func (s *switchTap) lost() (*Port, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var first *Port
	for n, p := range s.ports {
		if first == nil || n < first.Port {
			first = p
		}
	}
	return first, s.lostN
}

// close releases the tap and the lock, after run returned; lost is final
// after it.
func (s *switchTap) close() error {
	s.stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var err error
	if s.cur != nil {
		var lost uint64
		lost, err = s.cur.close()
		s.lostN += lost
		s.cur = nil
	}
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
