package clock

import "time"

// Virtual is a deterministic virtual-time Clock and scheduler. It is not
// safe for concurrent use: one goroutine owns it, as one owns an event loop.
type Virtual struct {
	q     queue
	t     Time
	fired uint64
}

// NewVirtual returns a Virtual clock at time 0 with nothing scheduled.
func NewVirtual() *Virtual {
	v := &Virtual{}
	v.q.now = v.Now
	return v
}

// Now returns the virtual time.
func (v *Virtual) Now() Time { return v.t }

// AfterFunc schedules f at Now()+d. A negative d counts as 0.
func (v *Virtual) AfterFunc(d time.Duration, f func()) Timer {
	return v.At(v.t.Add(max(d, 0)), f)
}

// At schedules f at the absolute time at (clamped to Now()).
func (v *Virtual) At(at Time, f func()) Timer {
	t := &timer{q: &v.q, f: f}
	v.q.push(t, max(at, v.t))
	return t
}

// Step runs the earliest pending callback, advancing time to it. It
// reports false when nothing is pending.
func (v *Virtual) Step() bool {
	t := v.q.peek()
	if t == nil {
		return false
	}
	v.q.remove(t)
	v.t = t.at
	v.fired++
	t.f()
	return true
}

// Run runs callbacks until none is pending.
func (v *Virtual) Run() {
	for v.Step() {
	}
}

// RunUntil runs every callback due at or before end, then sets the time to
// end (if it is later than the last callback run).
func (v *Virtual) RunUntil(end Time) {
	for {
		t := v.q.peek()
		if t == nil || t.at > end {
			break
		}
		v.Step()
	}
	v.t = max(v.t, end)
}

// RunFor is RunUntil(Now()+d).
func (v *Virtual) RunFor(d time.Duration) { v.RunUntil(v.t.Add(d)) }

// Pending returns the number of scheduled callbacks.
func (v *Virtual) Pending() int { return len(v.q.h) }

// Fired returns the number of callbacks run so far (a cost measure).
func (v *Virtual) Fired() uint64 { return v.fired }
