package agent

import "github.com/ftlab/ftlab/hostagent/clock"

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

// maxCoalesce bounds how many timers latestWithin looks at.
const maxCoalesce = 64

// latestWithin returns the latest deadline not after bound among the
// timers, looking at no more than maxCoalesce of them (a node's children
// are never earlier than it, so only timers within the bound are
// visited). The heap must not be empty.
func (h timerHeap) latestWithin(bound clock.Time) clock.Time {
	latest := h[0].at
	var stack [maxCoalesce]int
	n := 1 // stack[0] is the root
	for seen := 0; n > 0 && seen < maxCoalesce; seen++ {
		n--
		i := stack[n]
		if h[i].at > bound {
			continue
		}
		latest = max(latest, h[i].at)
		for c := 2*i + 1; c <= 2*i+2 && c < len(h) && n < len(stack); c++ {
			stack[n] = c
			n++
		}
	}
	return latest
}
