package agent_test

import (
	"context"
	"slices"
	"sync"
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
	l.AddReader(p[0], func() bool {
		var b [3]byte
		n, _ := unix.Read(p[0], b[:])
		if n > 0 {
			read += n
		}
		return n == len(b)
	})
	idle := 0
	l.Idle = func() { idle++ }
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
