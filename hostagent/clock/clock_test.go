package clock

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestVirtualOrder(t *testing.T) {
	v := NewVirtual()
	var got []string
	at := func(name string) func() { return func() { got = append(got, name+"@"+v.Now().Duration().String()) } }
	v.AfterFunc(3*time.Microsecond, at("c"))
	v.AfterFunc(time.Microsecond, at("a"))
	v.AfterFunc(time.Microsecond, at("b")) // same time as a: scheduled later, runs later
	stopped := v.AfterFunc(2*time.Microsecond, at("never"))
	moved := v.AfterFunc(10*time.Microsecond, at("moved"))
	if !stopped.Stop() || stopped.Stop() {
		t.Error("Stop should report pending exactly once")
	}
	if !moved.Reset(2 * time.Microsecond) {
		t.Error("Reset of a pending timer should report true")
	}
	v.AfterFunc(4*time.Microsecond, func() {
		at("d")()
		v.AfterFunc(0, at("e")) // scheduled from a callback, at the same instant
	})
	v.Run()
	want := []string{"a@1µs", "b@1µs", "moved@2µs", "c@3µs", "d@4µs", "e@4µs"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if v.Pending() != 0 || v.Fired() != 6 {
		t.Errorf("pending %d fired %d", v.Pending(), v.Fired())
	}
}

func TestVirtualRunUntil(t *testing.T) {
	v := NewVirtual()
	n := 0
	v.AfterFunc(5, func() { n++ })
	v.AfterFunc(15, func() { n++ })
	v.RunUntil(10)
	if n != 1 || v.Now() != 10 {
		t.Fatalf("n=%d now=%v", n, v.Now())
	}
	tm := v.AfterFunc(-5, func() { n++ }) // negative: now, never in the past
	v.RunFor(0)
	if n != 2 || v.Now() != 10 {
		t.Fatalf("negative delay: n=%d now=%v", n, v.Now())
	}
	tm.Reset(-1)
	v.Run()
	if n != 4 || v.Now() != 15 {
		t.Fatalf("n=%d now=%v", n, v.Now())
	}
}

// TestHeapRandomized checks the heap against sorting under random
// schedule, stop and reset operations.
func TestHeapRandomized(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	v := NewVirtual()
	var fired []Time
	var timers []Timer
	for i := 0; i < 2000; i++ {
		switch r.IntN(4) {
		case 0, 1:
			timers = append(timers, v.AfterFunc(time.Duration(r.IntN(1000)), func() { fired = append(fired, v.Now()) }))
		case 2:
			if len(timers) > 0 {
				timers[r.IntN(len(timers))].Stop()
			}
		case 3:
			if len(timers) > 0 {
				timers[r.IntN(len(timers))].Reset(time.Duration(r.IntN(1000)))
			}
		}
	}
	pending := v.Pending()
	v.Run()
	if len(fired) != pending {
		t.Fatalf("fired %d of %d pending", len(fired), pending)
	}
	for i := 1; i < len(fired); i++ {
		if fired[i] < fired[i-1] {
			t.Fatalf("time went backwards at %d: %v after %v", i, fired[i], fired[i-1])
		}
	}
}

func TestLoop(t *testing.T) {
	l := NewLoop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var order []string
	done := make(chan struct{})
	// The timer is far later than the post so the order holds on a
	// loaded machine too.
	l.Post(func() {
		l.AfterFunc(100*time.Millisecond, func() {
			order = append(order, "timer")
			close(done)
		})
		stop := l.AfterFunc(time.Millisecond, func() { order = append(order, "stopped") })
		stop.Stop()
	})
	go func() { l.Post(func() { order = append(order, "posted") }) }()
	errc := make(chan error, 1)
	go func() { errc <- l.Run(ctx) }()
	<-done
	cancel()
	<-errc
	if diff := cmp.Diff([]string{"posted", "timer"}, order); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if l.Now() < Time(100*time.Millisecond) {
		t.Errorf("loop time %v too early", l.Now())
	}
}

func BenchmarkVirtualSchedule(b *testing.B) {
	v := NewVirtual()
	f := func() {}
	for b.Loop() {
		for j := 0; j < 64; j++ {
			v.AfterFunc(time.Duration(j*7%64), f)
		}
		v.Run()
	}
}
