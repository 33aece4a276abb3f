package agent

import (
	"time"

	"github.com/ftlab/ftlab/hostagent/clock"
)

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

// maxCoalesce bounds how many timers coalesce looks at.
const maxCoalesce = 64

// coalesce returns when to wake for the earliest timer so that the timers
// due soon after it run in the same wake-up: the latest deadline W such
// that no timer due by W would run later than its slack allows (a
// timer's own slack, or q for timers without one). It looks at no more
// than maxCoalesce timers (a node's children are never earlier than it,
// so only timers within the first one's slack are visited). The heap must
// not be empty.
func (h timerHeap) coalesce(q time.Duration) clock.Time {
	slack := func(t *loopTimer) clock.Time {
		if t.slack >= 0 {
			return t.at.Add(t.slack)
		}
		return t.at.Add(q)
	}
	bound := slack(h[0])
	var cand [maxCoalesce]clock.Time
	var stack [maxCoalesce]int
	nc, n := 0, 1 // stack[0] is the root
	for n > 0 && nc < maxCoalesce {
		n--
		t := h[stack[n]]
		if t.at > bound {
			continue
		}
		bound = min(bound, slack(t))
		cand[nc] = t.at
		nc++
		for c := 2*stack[n] + 1; c <= 2*stack[n]+2 && c < len(h) && n < len(stack); c++ {
			stack[n] = c
			n++
		}
	}
	wake := h[0].at
	for _, at := range cand[:nc] {
		if at <= bound {
			wake = max(wake, at)
		}
	}
	return wake
}
