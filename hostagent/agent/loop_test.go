package agent_test

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ftlab/ftlab/hostagent/agent"
	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/internal/stats"
)

func newLoop(t *testing.T) (*agent.Loop, func(func())) {
	t.Helper()
	l, err := agent.NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- l.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != context.Canceled {
			t.Errorf("Run returned %v", err)
		}
		l.Close()
	})
	// do runs f on the loop and waits for it.
	do := func(f func()) {
		ch := make(chan struct{})
		l.Post(func() { f(); close(ch) })
		<-ch
	}
	return l, do
}

func TestLoopTimers(t *testing.T) {
	l, do := newLoop(t)
	var mu sync.Mutex
	var got []int
	rec := func(i int) func() {
		return func() { mu.Lock(); got = append(got, i); mu.Unlock() }
	}
	var stopped, reset clock.Timer
	do(func() {
		l.AfterFunc(3*time.Millisecond, rec(3))
		l.AfterFunc(time.Millisecond, rec(1))
		l.AfterFunc(time.Millisecond, rec(2)) // tie: scheduling order
		stopped = l.AfterFunc(2*time.Millisecond, rec(99))
		reset = l.AfterFunc(time.Hour, rec(4))
		l.AfterFunc(-time.Second, rec(0))
		if !stopped.Stop() || stopped.Stop() {
			t.Error("Stop results")
		}
		if !reset.Reset(4 * time.Millisecond) {
			t.Error("Reset of a pending timer reported not pending")
		}
	})
	time.Sleep(50 * time.Millisecond)
	do(func() {
		if reset.Reset(time.Millisecond) { // fired already: not pending
			t.Error("Reset of a fired timer reported pending")
		}
	})
	time.Sleep(30 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if want := []int{0, 1, 2, 3, 4, 4}; !slices.Equal(got, want) {
		t.Errorf("fired %v, want %v", got, want)
	}
}

// TestLoopPrecision: sub-millisecond timers fire well within a
// millisecond (Go's own timers take at least 1 ms for these), and the
// clock is CLOCK_MONOTONIC.
func TestLoopPrecision(t *testing.T) {
	l, do := newLoop(t)
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	if d := time.Duration(int64(l.Now()) - ts.Nano()); d < -time.Millisecond || d > time.Millisecond {
		t.Errorf("Now is %v off CLOCK_MONOTONIC", d)
	}
	const n = 200
	lates := make([]time.Duration, 0, n)
	done := make(chan struct{})
	var step func()
	step = func() {
		want := l.Now().Add(100 * time.Microsecond)
		l.AfterFunc(100*time.Microsecond, func() {
			lates = append(lates, l.Now().Sub(want))
			if len(lates) == n {
				close(done)
				return
			}
			step()
		})
	}
	do(step)
	<-done
	med := stats.Median(lates)
	t.Logf("100µs timers: late by p50 %v, p90 %v, max %v", med, stats.Quantile(lates, 0.9), slices.Max(lates))
	if med > 900*time.Microsecond {
		t.Errorf("median lateness %v: no better than Go's timers", med)
	}
}

func TestLoopPostAndReaders(t *testing.T) {
	l, err := agent.NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	read := 0
	if _, err := l.Watch(p[0], func() bool {
		var b [3]byte
		n, _ := unix.Read(p[0], b[:])
		if n > 0 {
			read += n
		}
		return n == len(b)
	}); err != nil {
		t.Fatal(err)
	}
	idle := 0
	l.OnIdle(func() { idle++ })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- l.Run(ctx) }()
	var wg sync.WaitGroup
	posted := 0
	for range 8 {
		wg.Go(func() {
			for range 100 {
				l.Post(func() { posted++ })
			}
		})
	}
	wg.Wait()
	if _, err := unix.Write(p[1], []byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	check := make(chan [3]int)
	deadline := time.Now().Add(2 * time.Second)
	for {
		l.Post(func() { check <- [3]int{posted, read, idle} })
		got := <-check
		if got[0] >= 800 && got[1] == 10 {
			if got[2] == 0 {
				t.Error("idle hook never ran")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("posted %d of 800, read %d of 10", got[0], got[1])
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatal(err)
	}
}

// TestLoopPostDuringClose: posts from other goroutines may race the
// loop's end and its Close (Serve does not wait for a blocked command
// reader, and Run's context kick can fire as Run returns): they must
// neither touch the closed wake-up descriptor (the race detector flags
// the read against Close's write) nor run, and Do still runs its function
// on the caller.
func TestLoopPostDuringClose(t *testing.T) {
	for range 20 {
		l, err := agent.NewLoop()
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- l.Run(ctx) }()
		var ran atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					l.Post(func() { ran.Add(1) })
					runtime.Gosched()
				}
			})
		}
		time.Sleep(time.Millisecond)
		cancel()
		if err := <-done; err != context.Canceled {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		before := ran.Load()
		time.Sleep(time.Millisecond) // posts after Close
		close(stop)
		wg.Wait()
		if n := ran.Load(); n != before {
			t.Fatalf("%d posted functions ran after Close", n-before)
		}
		called := false
		l.Do(func() { called = true })
		if !called {
			t.Fatal("Do after Close did not run its function")
		}
	}
}

// TestSlotClose: closing a slot cancels its pending timers, keeps its
// timers from being started or reset later, and drops its watches and
// hooks, while the loop goes on serving the others.
func TestSlotClose(t *testing.T) {
	l, do := newLoop(t)
	var mu sync.Mutex
	fired := map[string]int{}
	rec := func(name string) func() {
		return func() { mu.Lock(); fired[name]++; mu.Unlock() }
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	var gone, kept *agent.Slot
	do(func() {
		gone, kept = l.NewSlot(), l.NewSlot()
		gone.AfterFunc(20*time.Millisecond, rec("gone"))
		late := gone.AfterFunc(time.Hour, rec("gone-reset"))
		kept.AfterFunc(20*time.Millisecond, rec("kept"))
		if _, err := gone.Watch(p[0], func() bool { rec("gone-read")(); return false }); err != nil {
			t.Error(err)
		}
		gone.OnIdle(rec("gone-idle"))
		kept.OnIdle(rec("kept-idle"))
		if l.Agents() != 2 {
			t.Errorf("%d agents on the loop, want 2", l.Agents())
		}
		// Closed in the same callback, so nothing of it can have run.
		gone.Close()
		if l.Agents() != 1 {
			t.Errorf("%d agents after a close, want 1", l.Agents())
		}
		late.Reset(time.Millisecond)
		gone.AfterFunc(time.Millisecond, rec("gone-after"))
	})
	if _, err := unix.Write(p[1], []byte("x")); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; {
		mu.Lock()
		n := fired["kept"]
		mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the remaining slot's timer never fired")
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(30 * time.Millisecond) // past every timer of the closed slot
	do(func() {})
	mu.Lock()
	defer mu.Unlock()
	for _, name := range []string{"gone", "gone-reset", "gone-after", "gone-read"} {
		if fired[name] != 0 {
			t.Errorf("%s ran %d times after its slot closed", name, fired[name])
		}
	}
	if fired["gone-idle"] != 0 {
		t.Errorf("a closed slot's idle hook ran %d times", fired["gone-idle"])
	}
	if fired["kept-idle"] == 0 {
		t.Error("the remaining slot's hook never ran")
	}
}

// TestLoopQuantum: with a quantum, timers due within it of the first run
// in one wake-up (none early, each at most the quantum plus the wake-up
// late), and arrivals within it of a read are read together.
func TestLoopQuantum(t *testing.T) {
	const q = 100 * time.Millisecond
	l, do := newLoop(t)
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	reads := make(chan int, 16)
	var early []time.Duration
	done := make(chan struct{})
	var before agent.LoopStats
	do(func() {
		l.SetQuantum(q)
		l.SetQuantum(time.Hour) // a longer one asked for later does not hold
		if l.Quantum() != q {
			t.Errorf("quantum %v, want %v", l.Quantum(), q)
		}
		if _, err := l.Watch(p[0], func() bool {
			var b [64]byte
			n, _ := unix.Read(p[0], b[:])
			reads <- n
			return false
		}); err != nil {
			t.Error(err)
		}
		before = l.Stats()
		start := l.Now()
		// Two groups of five timers, each group within a tenth of the
		// quantum, the groups ten quanta apart.
		left := 10
		for g := range 2 {
			for i := range 5 {
				at := start.Add(time.Duration(g)*10*q + time.Duration(i)*q/50 + q)
				l.AfterFunc(at.Sub(l.Now()), func() {
					if d := at.Sub(l.Now()); d > 0 {
						early = append(early, d)
					}
					if left--; left == 0 {
						close(done)
					}
				})
			}
		}
	})
	<-done
	var after agent.LoopStats
	do(func() { after = l.Stats() })
	if len(early) > 0 {
		t.Errorf("timers ran early: %v", early)
	}
	// Two wake-ups for the timers, and the posts of do: a loaded machine
	// can only merge more of them, never split a group.
	if n := after.Sleeps - before.Sleeps; n > 4 {
		t.Errorf("%d sleeps for two groups of coalescible timers", n)
	}
	// A first arrival is read at once; the ones written in the next few
	// milliseconds (each of which would wake a loop without a quantum)
	// wait for the rest of the quantum and are read in one go.
	if _, err := unix.Write(p[1], []byte("a")); err != nil {
		t.Fatal(err)
	}
	if n := <-reads; n != 1 {
		t.Fatalf("first read got %d bytes", n)
	}
	for range 5 {
		if _, err := unix.Write(p[1], []byte("b")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	select {
	case n := <-reads:
		if n != 5 {
			t.Errorf("arrivals within the quantum read as %d bytes then more, want 5 at once", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("arrivals never read")
	}
}
