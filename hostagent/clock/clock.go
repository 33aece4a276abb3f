package clock

import (
	"fmt"
	"time"
)

// Time is an instant on a Clock: nanoseconds since the clock's epoch (the
// start of a simulation, or the creation of a Loop). An int64 rather than
// time.Time keeps the hot path free of wall-clock reads and allocations.
type Time int64

// Add returns t+d.
func (t Time) Add(d time.Duration) Time { return t + Time(d) }

// Sub returns t-u.
func (t Time) Sub(u Time) time.Duration { return time.Duration(t - u) }

// Before reports whether t is before u.
func (t Time) Before(u Time) bool { return t < u }

// Duration returns t as the time elapsed since the epoch.
func (t Time) Duration() time.Duration { return time.Duration(t) }

func (t Time) String() string { return fmt.Sprintf("T+%v", time.Duration(t)) }

// Clock tells the time and runs functions later, on its event loop.
type Clock interface {
	// Now returns the current time.
	Now() Time
	// AfterFunc arranges for f to run on the event loop once d has passed
	// (d <= 0: as soon as possible, after the current callback).
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending or stopped call, like *time.Timer from AfterFunc.
type Timer interface {
	// Stop cancels the call; it reports whether the call was pending.
	Stop() bool
	// Reset reschedules the call d from now, whether pending, stopped or
	// already fired; it reports whether the call was pending.
	Reset(d time.Duration) bool
}
