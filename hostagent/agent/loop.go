package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ftlab/ftlab/hostagent/clock"
)

// Loop is a real-time event loop: a clock.Clock whose timers, posted
// functions and socket reads all run on one OS thread, the way clock.Loop
// runs them on one goroutine. One Loop serves any number of agents (the
// hosts of a lab share one loop per core, see Pool): a socket keeps the
// network namespace it was opened in, so one thread can poll the sockets
// of many namespaces.
//
// It exists because Go's runtime sleeps at least a millisecond for any
// timer shorter than that, which would stretch every pacing gap and every
// sub-millisecond RTO to 1 ms. The loop sleeps in epoll_pwait2(2) with a
// nanosecond timeout (timer slack 1 ns) and can spin through waits shorter
// than its spin setting.
//
// A wake-up costs tens of microseconds of CPU on a VM, more than the work
// it does for one packet, so the loop batches: with a quantum Q set
// (SetQuantum: a fraction of a packet time), a wait for a timer is
// stretched to cover every timer due within Q after it, and after a
// wake-up that received datagrams the sockets are left alone for Q, so
// that arrivals in that time are read in one batch (interrupt moderation,
// as a NIC does). A timer thus runs at most Q (plus the kernel's wake-up
// latency) late, an arrival is read at most Q after it came, and a busy
// loop wakes about once per Q instead of once per packet. Each iteration
// runs posted functions, due timers and ready sockets' reads, then the
// idle hooks (the conns' Flush: one sendmmsg per host per iteration).
//
// Time is CLOCK_MONOTONIC in nanoseconds, the same in every process and
// namespace of the machine, so records from different agents share a time
// base.
type Loop struct {
	spin    time.Duration
	quantum time.Duration

	base   time.Time  // a time.Time reading (monotonic) ...
	offset clock.Time // ... and CLOCK_MONOTONIC at that reading

	heap timerHeap
	seq  uint64

	mu       sync.Mutex
	posted   []func()
	closed   bool // by Close: posts are dropped
	npost    atomic.Int32
	sleeping atomic.Bool
	kicked   atomic.Bool
	efd      int

	// epAll watches the wake-up descriptor and every watched socket,
	// epPost the wake-up descriptor only (waits while sockets are held off).
	epAll, epPost int
	watches       []*Watch // by slot; nil: free
	idle          []*Hook
	events        []unix.EpollEvent
	nready        int
	holdUntil     clock.Time

	agents  int          // slots open
	tid     atomic.Int64 // the thread Run runs on
	started atomic.Bool
	exited  chan struct{} // closed when Run returns
	after   sync.Mutex    // serializes Do's calls once Run returned
	stats   LoopStats
}

// LoopStats count what the loop did.
type LoopStats struct {
	Iterations uint64 `json:"iterations"`
	Sleeps     uint64 `json:"sleeps"`      // waits with a timeout or none
	Spins      uint64 `json:"spins"`       // waits spent spinning
	Holdoffs   uint64 `json:"holdoffs"`    // waits with the sockets held off
	Timers     uint64 `json:"timers"`      // timer callbacks run
	Posted     uint64 `json:"posted"`      // posted functions run
	Reads      uint64 `json:"reads"`       // read callbacks run
	LateMaxNs  int64  `json:"late_max_ns"` // worst lateness of a timer callback
	LateSumNs  int64  `json:"late_sum_ns"` // sum of timer lateness (mean = sum/timers)
	// CPUNs is the loop thread's CPU time; WaitNs its time runnable but
	// waiting for a CPU (other work on the machine, or too many threads).
	CPUNs  int64 `json:"cpu_ns"`
	WaitNs int64 `json:"wait_ns"`
}

// Watch is a descriptor the loop reads when it is readable.
type Watch struct {
	l    *Loop
	slot int
	gen  int32
	fd   int
	read func() (more bool)
}

// Hook is a function the loop calls at the end of every iteration.
type Hook struct {
	l *Loop
	f func()
}

var _ clock.Clock = (*Loop)(nil)

// maxEvents is how many ready descriptors one wait returns at most; the
// rest are reported by the next.
const maxEvents = 64

// NewLoop returns a loop. Close it when done.
func NewLoop() (l *Loop, err error) {
	l = &Loop{efd: -1, epAll: -1, epPost: -1, exited: make(chan struct{}), events: make([]unix.EpollEvent, maxEvents)}
	defer func() {
		if err != nil {
			l.Close()
		}
	}()
	if l.efd, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		return nil, err
	}
	for _, ep := range []*int{&l.epAll, &l.epPost} {
		if *ep, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
			return nil, err
		}
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: -1}
		if err = unix.EpollCtl(*ep, unix.EPOLL_CTL_ADD, l.efd, &ev); err != nil {
			return nil, err
		}
	}
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	l.base, l.offset = time.Now(), clock.Time(ts.Nano())
	return l, nil
}

// Close releases the loop's descriptors (not the watched ones). The loop
// must not be running.
func (l *Loop) Close() error {
	// Posts can still come from other goroutines (a command reader Serve
	// did not wait for, the kick of Run's context after it returned): they
	// must find the loop closed rather than write to a descriptor number
	// the process may already have given to something else.
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	var errs []error
	for _, fd := range []*int{&l.efd, &l.epAll, &l.epPost} {
		if *fd >= 0 {
			errs = append(errs, unix.Close(*fd))
			*fd = -1
		}
	}
	return errors.Join(errs...)
}

// Now is CLOCK_MONOTONIC.
func (l *Loop) Now() clock.Time { return l.offset + clock.Time(time.Since(l.base)) }

// Stats returns the loop's counters (loop goroutine only).
func (l *Loop) Stats() LoopStats {
	s := l.stats
	s.CPUNs, s.WaitNs = l.schedstat()
	return s
}

// schedstat reads the loop thread's CPU time and its time spent runnable
// but waiting for a CPU, from /proc (0, 0 if it cannot).
func (l *Loop) schedstat() (cpu, wait int64) {
	tid := l.tid.Load()
	if tid == 0 {
		return 0, 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/schedstat", tid))
	if err != nil {
		return 0, 0
	}
	_, _ = fmt.Sscan(string(b), &cpu, &wait)
	return cpu, wait
}

// Agents is the number of agents on the loop (its open slots; loop
// goroutine only).
func (l *Loop) Agents() int { return l.agents }

// Done is closed when Run has returned.
func (l *Loop) Done() <-chan struct{} { return l.exited }

// SetSpin makes the loop spin through waits up to d instead of sleeping;
// with several agents on one loop the longest asked for holds. Loop
// goroutine, or before Run.
func (l *Loop) SetSpin(d time.Duration) { l.spin = max(l.spin, d) }

// SetQuantum sets the batching quantum (see Loop); with several agents on
// one loop the shortest asked for holds. d <= 0 asks for none and changes
// nothing. Loop goroutine, or before Run.
func (l *Loop) SetQuantum(d time.Duration) {
	if d > 0 && (l.quantum == 0 || d < l.quantum) {
		l.quantum = d
	}
}

// Quantum is the batching quantum in effect (0: none).
func (l *Loop) Quantum() time.Duration { return l.quantum }

// Watch makes the loop call read whenever fd is readable; read reports
// whether it may have left data behind (a full batch), so the loop does
// not hold the sockets off. Loop goroutine, or before Run.
func (l *Loop) Watch(fd int, read func() (more bool)) (*Watch, error) {
	slot := -1
	for i, w := range l.watches {
		if w == nil {
			slot = i
			break
		}
	}
	if slot < 0 {
		slot = len(l.watches)
		l.watches = append(l.watches, nil)
	}
	l.seq++
	w := &Watch{l: l, slot: slot, gen: int32(l.seq), fd: fd, read: read}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(slot), Pad: w.gen}
	if err := unix.EpollCtl(l.epAll, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return nil, err
	}
	l.watches[slot] = w
	return w, nil
}

// Close stops watching (loop goroutine). Close the descriptor after.
func (w *Watch) Close() {
	if w.l == nil {
		return
	}
	_ = unix.EpollCtl(w.l.epAll, unix.EPOLL_CTL_DEL, w.fd, nil)
	w.l.watches[w.slot] = nil
	w.l = nil
}

// OnIdle makes the loop call f at the end of every iteration, before it
// waits. Loop goroutine, or before Run.
func (l *Loop) OnIdle(f func()) *Hook {
	h := &Hook{l: l, f: f}
	l.idle = append(l.idle, h)
	return h
}

// Close removes the hook (loop goroutine).
func (h *Hook) Close() {
	if h.l == nil {
		return
	}
	for i, x := range h.l.idle {
		if x == h {
			h.l.idle = append(h.l.idle[:i], h.l.idle[i+1:]...)
			break
		}
	}
	h.l = nil
}

// AfterFunc runs f on the loop after d. Loop goroutine only.
func (l *Loop) AfterFunc(d time.Duration, f func()) clock.Timer {
	t := &loopTimer{l: l, f: f, idx: -1, slack: -1}
	l.schedule(t, l.Now().Add(max(d, 0)))
	return t
}

// Post queues f to run on the loop soon. Safe from any goroutine, also
// during and after Close. A loop that has returned from Run never runs it.
func (l *Loop) Post(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.posted = append(l.posted, f)
	l.npost.Add(1)
	// The kick is written under mu, so Close cannot close the eventfd
	// between the check and the write.
	if l.sleeping.Load() && l.kicked.CompareAndSwap(false, true) {
		var one = [8]byte{1}
		_, _ = unix.Write(l.efd, one[:])
	}
}

// Do runs f on the loop and waits for it to return; if the loop has
// returned from Run (or returns before it gets to f), f runs on the
// caller instead, one such call at a time, as if on the loop.
func (l *Loop) Do(f func()) {
	done := make(chan struct{})
	var once sync.Once
	run := func() { once.Do(f) }
	l.Post(func() { run(); close(done) })
	select {
	case <-done:
	case <-l.exited:
		l.after.Lock()
		defer l.after.Unlock()
		run()
	}
}

// Run runs the loop on a locked OS thread until ctx is done and returns
// ctx.Err(). A loop runs once.
func (l *Loop) Run(ctx context.Context) error {
	if !l.started.CompareAndSwap(false, true) {
		return errors.New("agent: loop already ran")
	}
	defer close(l.exited)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	l.tid.Store(int64(unix.Gettid()))

	// Nanosecond timer slack for this thread's sleeps.
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	stop := context.AfterFunc(ctx, func() { l.Post(func() {}) })
	defer stop()

	var batch []func()
	busy := true // nothing known yet: look at once
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
		more, got := l.dispatch()
		for _, h := range l.idle {
			h.f()
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		now := l.Now()
		if got && !more && l.quantum > 0 {
			l.holdUntil = now.Add(l.quantum)
		}
		if err := l.wait(now, busy || more); err != nil {
			return err
		}
		busy = false
	}
}

// dispatch runs the read callbacks of the descriptors the last wait found
// readable. more: one may have left data behind; got: any ran.
func (l *Loop) dispatch() (more, got bool) {
	for _, ev := range l.events[:l.nready] {
		if ev.Fd < 0 {
			var buf [8]byte
			_, _ = unix.Read(l.efd, buf[:])
			l.kicked.Store(false)
			continue
		}
		if int(ev.Fd) >= len(l.watches) {
			continue
		}
		w := l.watches[ev.Fd]
		if w == nil || w.gen != ev.Pad {
			continue // closed since the wait
		}
		l.stats.Reads++
		got = true
		if w.read() {
			more = true
		}
	}
	l.nready = 0
	return more, got
}

// wait sleeps until the next (coalesced) timer, a posted function or, once
// the hold-off is over, a readable socket; busy: do not sleep at all.
func (l *Loop) wait(now clock.Time, busy bool) error {
	ep := l.epAll
	wake, forever := clock.Time(0), true
	if t := l.heap.peek(); t != nil {
		wake, forever = l.heap.coalesce(l.quantum), false
	}
	if now < l.holdUntil && !busy {
		ep = l.epPost
		if forever || l.holdUntil < wake {
			wake, forever = l.holdUntil, false
		}
		l.stats.Holdoffs++
	}
	timeout := time.Duration(-1) // none
	switch {
	case busy || l.npost.Load() > 0:
		timeout = 0
	case !forever:
		timeout = max(wake.Sub(now), 0)
	}
	if timeout > 0 && timeout <= l.spin {
		l.stats.Spins++
		l.spinUntil(now.Add(timeout))
		return nil
	}
	if timeout != 0 {
		l.sleeping.Store(true)
		if l.npost.Load() > 0 {
			timeout = 0
		} else {
			l.stats.Sleeps++
		}
	}
	n, err := epollWait(ep, l.events, timeout)
	l.sleeping.Store(false)
	if err != nil && err != unix.EINTR {
		return err
	}
	l.nready = max(n, 0)
	return nil
}

// spinUntil polls without sleeping until deadline, a posted function or a
// readable descriptor.
func (l *Loop) spinUntil(deadline clock.Time) {
	for l.Now() < deadline && l.npost.Load() == 0 {
		if n, _ := epollWait(l.epAll, l.events, 0); n > 0 {
			l.nready = n
			return
		}
	}
}

// epollWait is epoll_pwait2: a wait with a nanosecond timeout (negative:
// none).
func epollWait(ep int, events []unix.EpollEvent, timeout time.Duration) (int, error) {
	var tsp *unix.Timespec
	if timeout >= 0 {
		ts := unix.NsecToTimespec(int64(timeout))
		tsp = &ts
	}
	n, _, e := unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(ep), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)),
		uintptr(unsafe.Pointer(tsp)), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// runTimers runs every timer that is due, in deadline order (ties in the
// order they were scheduled).
func (l *Loop) runTimers() {
	now := l.Now()
	for t := l.heap.peek(); t != nil && t.at <= now; t = l.heap.peek() {
		l.heap.remove(t)
		late := int64(now - t.at)
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
	l     *Loop
	slot  *Slot         // the agent's share it belongs to; nil: the loop's own
	slack time.Duration // how late coalescing may run it; -1: the loop's quantum
	at    clock.Time
	seq   uint64
	idx   int // in the heap; -1 when not pending
	f     func()
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
	if t.slot == nil || !t.slot.closed {
		t.l.schedule(t, t.l.Now().Add(max(d, 0)))
	}
	return was
}
