package clock

import "time"

// timer is an entry of a timerHeap; it implements Timer.
type timer struct {
	q   *queue
	at  Time
	seq uint64 // scheduling order: breaks ties so runs are deterministic
	idx int    // position in the heap, -1 when not pending
	f   func()
}

func (t *timer) Stop() bool {
	if t.idx < 0 {
		return false
	}
	t.q.remove(t)
	return true
}

func (t *timer) Reset(d time.Duration) bool {
	was := t.Stop()
	t.q.push(t, t.q.now().Add(max(d, 0)))
	return was
}

// queue is a binary min-heap of timers ordered by (at, seq), with indices
// kept in the timers so Stop and Reset are O(log n) without searching.
type queue struct {
	h   []*timer
	seq uint64
	now func() Time
}

func (q *queue) less(i, j int) bool {
	a, b := q.h[i], q.h[j]
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

func (q *queue) swap(i, j int) {
	q.h[i], q.h[j] = q.h[j], q.h[i]
	q.h[i].idx, q.h[j].idx = i, j
}

func (q *queue) push(t *timer, at Time) {
	q.seq++
	t.at, t.seq, t.idx = at, q.seq, len(q.h)
	q.h = append(q.h, t)
	q.up(t.idx)
}

func (q *queue) remove(t *timer) {
	i, last := t.idx, len(q.h)-1
	if i != last {
		q.swap(i, last)
	}
	q.h[last] = nil
	q.h = q.h[:last]
	t.idx = -1
	if i != last {
		q.down(i)
		q.up(i)
	}
}

// peek returns the earliest timer, or nil.
func (q *queue) peek() *timer {
	if len(q.h) == 0 {
		return nil
	}
	return q.h[0]
}

func (q *queue) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(i, p) {
			return
		}
		q.swap(i, p)
		i = p
	}
}

func (q *queue) down(i int) {
	n := len(q.h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && q.less(r, l) {
			m = r
		}
		if !q.less(m, i) {
			return
		}
		q.swap(i, m)
		i = m
	}
}
