package agent

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ftlab/ftlab/hostagent/clock"
)

// Loop is the agent's real-time event loop: a clock.Clock whose timers,
// posted functions and socket reads all run on one OS thread, the way
// clock.Loop runs them on one goroutine. It exists because Go's runtime
// sleeps at least a millisecond for any timer shorter than that (its
// epoll wait has millisecond resolution), which would stretch every pacing
// gap and every sub-millisecond RTO to 1 ms. This loop sleeps in ppoll(2)
// with a nanosecond timeout and a timer slack of 1 ns, so it wakes within
// the kernel's wake-up latency (tens of microseconds on a VM), and can
// spin through waits shorter than Spin to do better.
//
// It also polls the readers' file descriptors itself, so a received batch
// is processed on the loop without a hand-off to another thread, and calls
// the idle hook (the conn's Flush) once per iteration, before it waits, so
// every iteration's sends leave in one sendmmsg.
//
// Time is CLOCK_MONOTONIC in nanoseconds, the same in every process and
// namespace of the machine, so records from different agents share a time
// base.
type Loop struct {
	// Spin: waits up to this long are spent polling instead of sleeping.
	Spin time.Duration
	// Idle runs on the loop before each wait.
	Idle func()

	base   time.Time  // a time.Time reading (monotonic) ...
	offset clock.Time // ... and CLOCK_MONOTONIC at that reading

	heap timerHeap
	seq  uint64

	mu       sync.Mutex
	posted   []func()
	npost    atomic.Int32
	sleeping atomic.Bool
	kicked   atomic.Bool
	efd      int

	readers []reader
	stats   LoopStats
}

// LoopStats count what the loop did.
type LoopStats struct {
	Iterations uint64 `json:"iterations"`
	Sleeps     uint64 `json:"sleeps"`      // waits in ppoll with a timeout or none
	Spins      uint64 `json:"spins"`       // waits spent spinning
	Timers     uint64 `json:"timers"`      // timer callbacks run
	Posted     uint64 `json:"posted"`      // posted functions run
	LateMaxNs  int64  `json:"late_max_ns"` // worst lateness of a timer callback
	LateSumNs  int64  `json:"late_sum_ns"` // sum of timer lateness (mean = sum/timers)
}

type reader struct {
	fd   int
	read func() (more bool)
}

var _ clock.Clock = (*Loop)(nil)

// NewLoop returns a loop. Close it when done.
func NewLoop() (*Loop, error) {
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return &Loop{efd: efd, base: time.Now(), offset: clock.Time(ts.Nano())}, nil
}

// Close releases the loop's wake-up descriptor. The loop must not be
// running.
func (l *Loop) Close() error { return unix.Close(l.efd) }

// Now is CLOCK_MONOTONIC.
func (l *Loop) Now() clock.Time { return l.offset + clock.Time(time.Since(l.base)) }

// Stats returns the loop's counters (loop goroutine only).
func (l *Loop) Stats() LoopStats { return l.stats }

// AddReader makes the loop call read whenever fd is readable (and again at
// once while read reports more). Loop goroutine, or before Run.
func (l *Loop) AddReader(fd int, read func() (more bool)) {
	l.readers = append(l.readers, reader{fd: fd, read: read})
}

// AfterFunc runs f on the loop after d. Loop goroutine only.
func (l *Loop) AfterFunc(d time.Duration, f func()) clock.Timer {
	t := &loopTimer{l: l, f: f, idx: -1}
	l.schedule(t, l.Now().Add(max(d, 0)))
	return t
}

// Post queues f to run on the loop soon. Safe from any goroutine.
func (l *Loop) Post(f func()) {
	l.mu.Lock()
	l.posted = append(l.posted, f)
	l.mu.Unlock()
	l.npost.Add(1)
	if l.sleeping.Load() && l.kicked.CompareAndSwap(false, true) {
		var one = [8]byte{1}
		_, _ = unix.Write(l.efd, one[:])
	}
}

// Run runs the loop on a locked OS thread until ctx is done and returns
// ctx.Err().
func (l *Loop) Run(ctx context.Context) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// Nanosecond timer slack for this thread's sleeps.
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	stop := context.AfterFunc(ctx, func() { l.Post(func() {}) })
	defer stop()

	pfds := make([]unix.PollFd, 1+len(l.readers))
	pfds[0] = unix.PollFd{Fd: int32(l.efd), Events: unix.POLLIN}
	for i, r := range l.readers {
		pfds[1+i] = unix.PollFd{Fd: int32(r.fd), Events: unix.POLLIN}
	}
	ready := make([]bool, len(l.readers))
	for i := range ready {
		ready[i] = true // nothing known: try once
	}
	var batch []func()
	for {
		l.stats.Iterations++
		if l.npost.Load() > 0 {
			l.mu.Lock()
			batch, l.posted = l.posted, batch[:0]
			l.npost.Store(0)
			l.mu.Unlock()
			for i, f := range batch {
				f()
				batch[i] = nil
			}
			l.stats.Posted += uint64(len(batch))
		}
		l.runTimers()
		busy := false
		for i, r := range l.readers {
			if ready[i] {
				ready[i] = r.read()
				busy = busy || ready[i]
			}
		}
		if l.Idle != nil {
			l.Idle()
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		timeout := time.Duration(-1) // none
		if busy || l.npost.Load() > 0 {
			timeout = 0
		} else if t := l.heap.peek(); t != nil {
			timeout = max(t.at.Sub(l.Now()), 0)
		}
		if timeout > 0 && timeout <= l.Spin {
			l.stats.Spins++
			l.spin(pfds, ready, l.Now().Add(timeout))
			continue
		}
		if timeout != 0 {
			l.sleeping.Store(true)
			if l.npost.Load() > 0 {
				timeout = 0
			} else {
				l.stats.Sleeps++
			}
		}
		var tsp *unix.Timespec
		if timeout >= 0 {
			ts := unix.NsecToTimespec(int64(timeout))
			tsp = &ts
		}
		n, err := unix.Ppoll(pfds, tsp, nil)
		l.sleeping.Store(false)
		if err != nil && err != unix.EINTR {
			return err
		}
		if n > 0 {
			l.noteReady(pfds, ready)
		}
	}
}

// spin polls without sleeping until deadline, a posted function or a
// readable descriptor.
func (l *Loop) spin(pfds []unix.PollFd, ready []bool, deadline clock.Time) {
	zero := unix.Timespec{}
	for l.Now() < deadline && l.npost.Load() == 0 {
		if n, _ := unix.Ppoll(pfds[1:], &zero, nil); n > 0 {
			l.noteReady(pfds, ready)
			return
		}
	}
}

func (l *Loop) noteReady(pfds []unix.PollFd, ready []bool) {
	if pfds[0].Revents != 0 {
		var buf [8]byte
		_, _ = unix.Read(l.efd, buf[:])
		l.kicked.Store(false)
		pfds[0].Revents = 0
	}
	for i := range ready {
		if pfds[1+i].Revents != 0 {
			ready[i] = true
			pfds[1+i].Revents = 0
		}
	}
}

// runTimers runs every timer that is due, in deadline order (ties in the
// order they were scheduled).
func (l *Loop) runTimers() {
	now := l.Now()
	for t := l.heap.peek(); t != nil && t.at <= now; t = l.heap.peek() {
		l.heap.remove(t)
		late := int64(l.Now() - t.at)
		l.stats.Timers++
		l.stats.LateSumNs += late
		l.stats.LateMaxNs = max(l.stats.LateMaxNs, late)
		t.f()
		now = l.Now()
	}
}

func (l *Loop) schedule(t *loopTimer, at clock.Time) {
	t.at = at
	l.seq++
	t.seq = l.seq
	l.heap.push(t)
}

// loopTimer is a pending or stopped call on a Loop.
type loopTimer struct {
	l   *Loop
	at  clock.Time
	seq uint64
	idx int // in the heap; -1 when not pending
	f   func()
}

func (t *loopTimer) Stop() bool {
	if t.idx < 0 {
		return false
	}
	t.l.heap.remove(t)
	return true
}

func (t *loopTimer) Reset(d time.Duration) bool {
	was := t.Stop()
	t.l.schedule(t, t.l.Now().Add(max(d, 0)))
	return was
}

// timerHeap is a binary min-heap of timers by (at, seq).
type timerHeap []*loopTimer

func (h timerHeap) less(i, j int) bool {
	return h[i].at < h[j].at || h[i].at == h[j].at && h[i].seq < h[j].seq
}

func (h timerHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].idx, h[j].idx = i, j
}

func (h timerHeap) peek() *loopTimer {
	if len(h) == 0 {
		return nil
	}
	return h[0]
}

func (h *timerHeap) push(t *loopTimer) {
	t.idx = len(*h)
	*h = append(*h, t)
	h.up(t.idx)
}

func (h *timerHeap) remove(t *loopTimer) {
	i, last := t.idx, len(*h)-1
	if i != last {
		h.swap(i, last)
	}
	(*h)[last] = nil
	*h = (*h)[:last]
	t.idx = -1
	if i != last {
		if !h.down(i) {
			h.up(i)
		}
	}
}

func (h timerHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

// down sifts i down and reports whether it moved.
func (h timerHeap) down(i int) bool {
	start := i
	for {
		c := 2*i + 1
		if c >= len(h) {
			break
		}
		if r := c + 1; r < len(h) && h.less(r, c) {
			c = r
		}
		if !h.less(c, i) {
			break
		}
		h.swap(i, c)
		i = c
	}
	return i != start
}
