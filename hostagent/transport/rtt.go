package transport

import "time"

// rttEstimator is RFC 6298's: SRTT and RTTVAR from samples, RTO =
// SRTT + 4*RTTVAR clamped to [min, max], doubled per backoff step. With
// echoed timestamps every sample names the copy it measures, so samples
// from retransmissions are as good as any (no Karn exclusion needed).
// With fixed set (Config.RTO "paper") the RTO is fixed before backoff,
// whatever the samples say; SRTT is still kept for the schemes.
type rttEstimator struct {
	srtt, rttvar      time.Duration
	initial, min, max time.Duration
	fixed             time.Duration
	backoff           int
	samples           int
	minRTT            time.Duration
}

// newRTTEstimator returns the estimator of a flow of an endpoint
// configured with c.
func newRTTEstimator(c *Config) rttEstimator {
	e := rttEstimator{initial: c.InitialRTO, min: c.MinRTO, max: c.MaxRTO}
	if c.RTO == RTOPaper {
		e.fixed = c.paperRTO()
	}
	return e
}

func (e *rttEstimator) sample(r time.Duration) {
	if r < 0 {
		return
	}
	if e.samples == 0 {
		e.srtt, e.rttvar, e.minRTT = r, r/2, r
	} else {
		d := e.srtt - r
		if d < 0 {
			d = -d
		}
		e.rttvar = (3*e.rttvar + d) / 4
		e.srtt = (7*e.srtt + r) / 8
		e.minRTT = min(e.minRTT, r)
	}
	e.samples++
}

// rto returns the current timeout, backoff included.
func (e *rttEstimator) rto() time.Duration {
	base := e.initial
	switch {
	case e.fixed > 0:
		base = e.fixed
	case e.samples > 0:
		base = e.srtt + max(4*e.rttvar, time.Microsecond)
	}
	if e.fixed == 0 {
		base = min(max(base, e.min), e.max)
	}
	for i := 0; i < e.backoff && base < e.max; i++ {
		base *= 2
	}
	return min(base, e.max)
}
