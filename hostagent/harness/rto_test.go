package harness

import (
	"slices"
	"testing"
	"time"

	"github.com/ftlab/ftlab/hostagent/sim"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/internal/stats"
)

// skewedMaxRTT is the skewed test fabric's maximum unloaded RTT: a 4 KiB
// frame out over the slowest path (0.5 + 4.5 + 0.5 µs of propagation, three
// 0.33 µs serializations at 100 Gbit/s) and its ACK back the same way.
const skewedMaxRTT = 12 * time.Microsecond

// paperRTO configures the fixed timeout of Ordered Chaos V-A: the maximum
// unloaded RTT plus an allowance of four of them.
func paperRTO(c *transport.Config) {
	c.RTO, c.MaxRTT, c.RTOAllowance = transport.RTOPaper, skewedMaxRTT, 4*skewedMaxRTT
}

// TestPaperRTORule: under rto: paper every loss the timer finds was found
// one fixed RTO (max RTT + allowance, 60 µs here) after its copy left, up
// to the timer's granularity (a quarter of it), whatever the RTTs measured;
// the flow ends with that RTO, where RFC 6298 ends with its estimate.
func TestPaperRTORule(t *testing.T) {
	const rto = 5 * skewedMaxRTT
	for _, mode := range []string{transport.RTOPaper, transport.RTORFC6298} {
		sc := lossyTransfer(schemes(t)["rss"], 1) // rss recovers by RTO only
		base := sc.Setup
		sc.Setup = func(n *sim.Network) { base(n); onPathsCorrupt(n, 5e-3) }
		if mode == transport.RTOPaper {
			paperRTO(&sc.Transport)
		}
		res := runChecked(t, sc)
		var first []time.Duration
		for _, r := range res.Sent {
			for _, l := range r.Losses {
				if l.Cause == transport.CauseRTO && !l.Retx {
					first = append(first, time.Duration(l.DelayNs))
				}
			}
		}
		slices.Sort(first)
		f := res.Flows[0]
		t.Logf("%s: %d losses found by the timer, delays %v..%v (median %v), SRTT %v, final RTO %v", mode, len(first),
			first[0], first[len(first)-1], stats.Median(first), time.Duration(f.SRTTNs), time.Duration(f.RTONs))
		if len(first) < 10 {
			t.Fatalf("%s: only %d losses", mode, len(first))
		}
		if mode == transport.RTORFC6298 {
			if time.Duration(f.RTONs) == rto {
				t.Errorf("rfc6298 ended with the paper's RTO %v: the comparison shows nothing", rto)
			}
			continue
		}
		if time.Duration(f.RTONs) != rto {
			t.Errorf("paper: final RTO %v, want %v", time.Duration(f.RTONs), rto)
		}
		if first[0] < rto || stats.Median(first) >= rto+rto/4 {
			t.Errorf("paper: detection delays from %v, median %v: want at least the RTO %v, median within its granularity", first[0], stats.Median(first), rto)
		}
	}
}

// TestPaperRTOIgnoresQueueing shows why rto_allowance must cover the
// fabric's queueing delay and why rfc6298 stays the default while hosts
// have no congestion control: four senders fill one receiver's downlink,
// whose queue grows to several base RTTs. The fixed 60 µs timeout fires on
// packets that are only queued (spurious retransmissions); RFC 6298's
// estimate follows the RTT and does not.
func TestPaperRTOIgnoresQueueing(t *testing.T) {
	spurious := map[string]int{}
	for _, mode := range []string{transport.RTOPaper, transport.RTORFC6298} {
		var msgs []Message
		for s := 1; s <= 4; s++ {
			msgs = append(msgs, Message{From: s, To: 0, Size: 2 << 20})
		}
		sc := Scenario{Net: fabric(5, 1), Transport: endpointConfig(schemes(t)["rss"]), Messages: msgs,
			Setup: func(n *sim.Network) { skewPaths(n) }}
		if mode == transport.RTOPaper {
			paperRTO(&sc.Transport)
		}
		res := runChecked(t, sc)
		tot := res.Totals()
		spurious[mode] = tot.SpuriousRx
		t.Logf("%s: CCT %v, RTOs %d, retransmissions %d (spurious %d), highest SRTT %v", mode, res.End, tot.RTOs,
			tot.Retransmissions, tot.SpuriousRx, time.Duration(slices.MaxFunc(res.Flows, func(a, b transport.FlowRecord) int {
				return int(a.SRTTNs - b.SRTTNs)
			}).SRTTNs))
	}
	if spurious[transport.RTOPaper] < 10 || spurious[transport.RTORFC6298] != 0 {
		t.Errorf("spurious retransmissions: paper %d, rfc6298 %d; want many with a timeout below the queueing delay and none with the estimator",
			spurious[transport.RTOPaper], spurious[transport.RTORFC6298])
	}
}
