package scheme

import (
	"fmt"
	"time"
)

// Metric ranks subflows for rerouting: the subflow with the highest value
// is the worst.
type Metric uint8

// Metrics.
const (
	MeanRTT     Metric = iota // RTT sum / feedback count (the default)
	ECNFraction               // CE-marked feedback / feedback count
	MaxRTT                    // largest RTT sample
)

var metricNames = [...]string{MeanRTT: "mean-rtt", ECNFraction: "ecn-fraction", MaxRTT: "max-rtt"}

func (m Metric) String() string {
	if int(m) < len(metricNames) {
		return metricNames[m]
	}
	return fmt.Sprintf("Metric(%d)", uint8(m))
}

// ParseMetric parses a metric name as String spells it.
func ParseMetric(s string) (Metric, error) {
	for i, n := range metricNames {
		if n == s {
			return Metric(i), nil
		}
	}
	return 0, fmt.Errorf("scheme: unknown metric %q (want mean-rtt, ecn-fraction or max-rtt)", s)
}

// counters are a subflow's feedback accumulators for the current interval.
type counters struct {
	n      uint32
	rttSum time.Duration
	rttMax time.Duration
	ecn    uint32
}

func (c *counters) add(rtt time.Duration, ce bool) {
	c.n++
	c.rttSum += rtt
	c.rttMax = max(c.rttMax, rtt)
	if ce {
		c.ecn++
	}
}

// value is the metric of c; only meaningful when c.n > 0.
func (m Metric) value(c *counters) float64 {
	switch m {
	case ECNFraction:
		return float64(c.ecn) / float64(c.n)
	case MaxRTT:
		return float64(c.rttMax)
	default:
		return float64(c.rttSum) / float64(c.n)
	}
}

// stateBytes is the per-subflow accumulator state a NIC needs for m, at
// natural widths: feedback count 2 B, RTT sum 4 B (ns, one interval),
// RTT max 4 B, ECN count 2 B.
func (m Metric) stateBytes() int {
	switch m {
	case ECNFraction:
		return 2 + 2
	case MaxRTT:
		return 2 + 4
	default:
		return 2 + 4
	}
}
