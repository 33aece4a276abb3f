package transport

import (
	"math"
	"time"

	"github.com/ftlab/ftlab/hostagent/clock"
)

// pacer spaces a flow's departures at a rate: each packet may leave once
// the previous one's serialization time at that rate has passed. It also
// measures how well the departures kept to their slots.
// paceBurst bounds how far a late pacer may catch up: the burst a flow may
// send back to back after a late wake-up.
const paceBurst = 250 * time.Microsecond

type pacer struct {
	rate     float64 // bits per second; 0: unpaced
	overhead int
	next     float64 // ns: the earliest departure of the next packet
	lastAt   clock.Time
	lastGap  float64 // ns the previous packet's size asks for
	waited   bool    // the next departure was held back by the pacer
	stats    PacingStats
}

// ready returns when the next packet may leave.
func (p *pacer) ready() clock.Time {
	if p.rate == 0 {
		return 0
	}
	return clock.Time(math.Ceil(p.next))
}

// hold notes that the flow had something to send before its slot.
func (p *pacer) hold() { p.waited = true }

// sent books a departure of size payload bytes at now.
func (p *pacer) sent(now clock.Time, size int) {
	if p.rate == 0 {
		return
	}
	if p.waited {
		slot := clock.Time(math.Ceil(p.next))
		p.stats.Gaps++
		p.stats.IntendedNs += p.lastGap
		p.stats.ActualNs += float64(now - p.lastAt)
		p.stats.MaxLateNs = max(p.stats.MaxLateNs, int64(now-slot))
		p.waited = false
	}
	gap := float64(size+p.overhead) * 8e9 / p.rate
	// A pacer woken late may catch up, by at most paceBurst: real event
	// loops wake tens to hundreds of microseconds late, and a pacer that
	// restarts from now at every late wake-up loses that time for good
	// (measured: 30-60% of 100 Mbit/s). Idle time earns no more credit.
	p.next = max(p.next, float64(now)-float64(paceBurst)) + gap
	p.lastAt, p.lastGap = now, gap
}

func (p *pacer) report() PacingStats {
	s := p.stats
	s.TargetBps = p.rate
	if s.ActualNs > 0 {
		s.Accuracy = s.IntendedNs / s.ActualNs
		s.AchievedBps = p.rate * s.Accuracy
	}
	return s
}
