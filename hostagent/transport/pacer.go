package transport

import (
	"math"
	"time"

	"github.com/ftlab/ftlab/hostagent/clock"
)

// pacer spaces a flow's departures at a rate: each packet may leave once
// the previous one's serialization time at that rate has passed. It also
// measures how well the departures kept to their slots.
//
// Two figures say what a late event loop cost the flow (fidelity judges
// both). Lateness: how long after its slot each departure the pacer held
// back left. Loss: the time the flow lost for good. A pacer woken late
// catches up (its slots do not move), so lateness within a train of
// back-to-back paced departures costs nothing until the train ends: the
// last departure's lateness is then lost (the ACK clock starts that much
// later), as is any lateness beyond the catch-up bound (paceBurst) the
// pacer forgives. Lost time is an upper bound on how much later the flow
// finished than it would have on an ideal machine.
type pacer struct {
	rate     float64 // bits per second; 0: unpaced
	overhead int
	next     float64 // ns: the earliest departure of the next packet
	lastAt   clock.Time
	lastGap  float64 // ns the previous packet's size asks for
	waited   bool    // the next departure was held back by the pacer
	train    bool    // the last departure was held back, or caught up after one
	lastLate float64 // ns the train's last departure left after its slot
	firstAt  clock.Time
	started  bool
	stats    PacingStats
}

// paceBurst bounds the credit an idle pacer keeps: the burst a flow may
// send back to back when it has something to send again. A pacer that was
// holding a packet back and woke late may catch up by more: by its lateness,
// up to one gap at its rate (catchUp).
const paceBurst = 250 * time.Microsecond

// ready returns when the next packet may leave.
func (p *pacer) ready() clock.Time {
	if p.rate == 0 {
		return 0
	}
	return clock.Time(math.Ceil(p.next))
}

// hold notes that the flow had something to send before its slot.
func (p *pacer) hold() { p.waited = true }

// idle notes that the flow has nothing more the pacer could send: the
// window is full or nothing is queued. A train of paced departures ends
// here, and its last departure's lateness is lost for good.
func (p *pacer) idle() {
	p.waited = false
	if p.train {
		p.stats.LostNs += p.lastLate
		p.train, p.lastLate = false, 0
	}
}

// sent books a departure of size payload bytes at now.
func (p *pacer) sent(now clock.Time, size int) {
	if p.rate == 0 {
		return
	}
	if !p.started {
		p.firstAt, p.started = now, true
	}
	if p.waited || p.train {
		late := max(float64(now)-math.Ceil(p.next), 0)
		if p.waited {
			p.stats.Gaps++
			p.stats.IntendedNs += p.lastGap
			p.stats.ActualNs += float64(now - p.lastAt)
			p.stats.LateNs += late
			p.stats.MaxLateNs = max(p.stats.MaxLateNs, int64(late))
			p.waited, p.train = false, true
		}
		// Beyond the catch-up bound the pacer forgives the rest (below);
		// what it keeps is caught up or, at the train's end, lost.
		forgiven := max(late-p.catchUp(), 0)
		p.stats.LostNs += forgiven
		p.lastLate = late - forgiven
	}
	credit := float64(paceBurst)
	if p.train {
		credit = p.catchUp()
	}
	gap := float64(size+p.overhead) * 8e9 / p.rate
	// A pacer woken late may catch up: real event loops wake tens to
	// hundreds of microseconds late, and a pacer that restarts from now at
	// every late wake-up loses that time for good (measured: 30-60% of
	// 100 Mbit/s). Idle time earns no more credit than paceBurst.
	p.next = max(p.next, float64(now)-credit) + gap
	p.lastAt, p.lastGap = now, gap
}

// catchUp is how far a pacer woken late while it held a packet back may
// catch up: paceBurst, or one gap at its rate when that is longer. At
// 12-50 Mbit/s a 4 KiB packet's gap is 0.7-2.8 ms, far above the 250 µs
// an idle pacer may keep, and a wake-up a few hundred microseconds late
// would otherwise lose that time for good on every gap: the departure
// that makes it up leaves right after the late one, and the host's link
// (its qdisc, at the link's rate) serializes the two as the ideal pacer
// would have sent them.
func (p *pacer) catchUp() float64 {
	return max(float64(paceBurst), p.lastGap)
}

func (p *pacer) report() PacingStats {
	s := p.stats
	if p.train {
		s.LostNs += p.lastLate // a train still open ends with the record
	}
	s.TargetBps = p.rate
	if p.started {
		s.SpanNs = float64(p.lastAt - p.firstAt)
	}
	if s.ActualNs > 0 {
		s.Accuracy = s.IntendedNs / s.ActualNs
		s.AchievedBps = p.rate * s.Accuracy
	}
	return s
}
