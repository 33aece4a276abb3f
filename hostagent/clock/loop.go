package clock

import (
	"context"
	"sync"
	"time"
)

// Loop is a real-time Clock and event loop. Timer callbacks and posted
// functions all run on the goroutine that calls Run. Post is the only
// method that may be called from other goroutines.
type Loop struct {
	q     queue
	epoch time.Time

	mu     sync.Mutex
	posted []func()
	wake   chan struct{} // capacity 1: a pending wake-up
}

// NewLoop returns a Loop whose epoch (Time 0) is now.
func NewLoop() *Loop {
	l := &Loop{epoch: time.Now(), wake: make(chan struct{}, 1)}
	l.q.now = l.Now
	return l
}

// Now returns the monotonic time since the loop was created.
func (l *Loop) Now() Time { return Time(time.Since(l.epoch)) }

// AfterFunc schedules f on the loop after d. Loop goroutine only.
func (l *Loop) AfterFunc(d time.Duration, f func()) Timer {
	t := &timer{q: &l.q, f: f}
	l.q.push(t, l.Now().Add(max(d, 0)))
	return t
}

// Post queues f to run on the loop soon. Safe from any goroutine; this is
// how socket readers hand received datagrams to the transport.
func (l *Loop) Post(f func()) {
	l.mu.Lock()
	l.posted = append(l.posted, f)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Run runs the loop until ctx is done, and returns ctx.Err().
func (l *Loop) Run(ctx context.Context) error {
	sleep := time.NewTimer(time.Hour)
	defer sleep.Stop()
	var batch []func()
	for {
		l.mu.Lock()
		batch, l.posted = l.posted, batch[:0]
		l.mu.Unlock()
		for i, f := range batch {
			f()
			batch[i] = nil
		}
		now := l.Now()
		for t := l.q.peek(); t != nil && t.at <= now; t = l.q.peek() {
			l.q.remove(t)
			t.f()
		}
		wait := time.Hour
		if t := l.q.peek(); t != nil {
			wait = t.at.Sub(l.Now())
		}
		l.mu.Lock()
		more := len(l.posted) > 0
		l.mu.Unlock()
		if more || wait <= 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			continue
		}
		sleep.Reset(wait)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-l.wake:
		case <-sleep.C:
		}
	}
}
