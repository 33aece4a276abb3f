package topology

import (
	"math"
	"time"
)

// FullRate returns the rate of the fabric's fastest link direction.
func (t *Topology) FullRate() uint64 {
	var full uint64
	for i := range t.Links {
		full = max(full, t.Links[i].Up.RateBps, t.Links[i].Down.RateBps)
	}
	return full
}

// ScaleRates changes every link direction's rate so that the fastest runs
// at full, keeping the ratios between links: a fabric whose slow
// aggregation switches run at a quarter of the rate keeps them at a
// quarter. Buffers and ECN thresholds are sizes and do not change. Rates
// are rounded to whole bits per second and never reach 0. Propagation
// delays and jitter stretch by the inverse factor (time dilation,
// docs/regime.md), so the fabric's bandwidth-delay product in packets
// stays the same; they are rounded to whole nanoseconds.
func (t *Topology) ScaleRates(full uint64) {
	old := t.FullRate()
	if old == 0 || full == 0 || old == full {
		return
	}
	f := float64(full) / float64(old)
	scale := func(p *LinkParams) {
		p.RateBps = max(1, uint64(math.Round(float64(p.RateBps)*f)))
		p.Delay = time.Duration(math.Round(float64(p.Delay) / f))
		p.Jitter = time.Duration(math.Round(float64(p.Jitter) / f))
	}
	for i := range t.Links {
		scale(&t.Links[i].Up)
		scale(&t.Links[i].Down)
	}
}
