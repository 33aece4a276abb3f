package agent

import (
	"time"

	"github.com/ftlab/ftlab/hostagent/clock"
)

// Slot is one agent's share of a Loop: a clock.Clock for its transport,
// and its socket watches and idle hooks, which the loop drops all at once
// when the agent leaves (Close), so nothing of a finished agent runs on a
// loop that goes on serving others. Loop goroutine only, like the loop's
// own methods.
type Slot struct {
	l       *Loop
	closed  bool
	watches []*Watch
	hooks   []*Hook
}

var _ clock.Clock = (*Slot)(nil)

// NewSlot returns a new share of the loop (loop goroutine, or before Run).
func (l *Loop) NewSlot() *Slot {
	l.agents++
	return &Slot{l: l}
}

// Loop is the loop the slot is on.
func (s *Slot) Loop() *Loop { return s.l }

// Now is the loop's time.
func (s *Slot) Now() clock.Time { return s.l.Now() }

// AfterFunc runs f on the loop after d, unless the slot is closed first.
func (s *Slot) AfterFunc(d time.Duration, f func()) clock.Timer { return s.AfterFuncSlack(d, -1, f) }

// AfterFuncSlack is AfterFunc for a timer that coalescing may run at most
// slack late (instead of the loop's quantum; a negative slack means the
// quantum). Reset keeps the slack.
func (s *Slot) AfterFuncSlack(d, slack time.Duration, f func()) clock.Timer {
	t := &loopTimer{l: s.l, slot: s, f: f, idx: -1, slack: slack}
	if !s.closed {
		s.l.schedule(t, s.l.Now().Add(max(d, 0)))
	}
	return t
}

// Watch is Loop.Watch for the slot.
func (s *Slot) Watch(fd int, read func() (more bool)) (*Watch, error) {
	w, err := s.l.Watch(fd, read)
	if err == nil {
		s.watches = append(s.watches, w)
	}
	return w, err
}

// OnIdle is Loop.OnIdle for the slot.
func (s *Slot) OnIdle(f func()) *Hook {
	h := s.l.OnIdle(f)
	s.hooks = append(s.hooks, h)
	return h
}

// Close stops the slot's pending timers (and any it would start later),
// its watches and its hooks.
func (s *Slot) Close() {
	if s.closed {
		return
	}
	s.closed = true
	s.l.agents--
	var mine []*loopTimer
	for _, t := range s.l.heap {
		if t.slot == s {
			mine = append(mine, t)
		}
	}
	for _, t := range mine {
		s.l.heap.remove(t)
	}
	for _, w := range s.watches {
		w.Close()
	}
	for _, h := range s.hooks {
		h.Close()
	}
	s.watches, s.hooks = nil, nil
}
