package harness

import (
	"fmt"
	"testing"
	"time"

	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/sim"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/hostagent/wire"
)

// shareRun sends 16 MiB over 8 paths of 25 Gbit/s each (twice the
// sender's 100 Gbit/s, as a fabric with headroom), one of which is
// throttled to 20% as soon as the
// flow's first packet enters it, and returns the share of DATA packets
// that path carried in the first and the second half of the transfer,
// and the transfer's completion time.
func shareRun(t *testing.T, s transport.Scheme, seed uint64) (early, late float64, fct time.Duration) {
	t.Helper()
	degraded := -1
	type arrival struct {
		at   clock.Time
		path int
	}
	var seen []arrival
	sc := Scenario{
		Net: sim.Config{
			Seed: seed, Hosts: 2, Paths: 8,
			Host: sim.LinkConfig{Rate: linkBps, Delay: 500 * time.Nanosecond, Buffer: 8 << 20},
			Path: sim.LinkConfig{Rate: linkBps / 4, Delay: time.Microsecond, Buffer: 8 << 20},
		},
		Transport: endpointConfig(s),
		Setup: func(n *sim.Network) {
			n.AddFilter(func(p *sim.Packet) bool {
				if p.Src != 0 {
					return false
				}
				if pk := parsed(p); pk == nil || pk.Type != wire.TypeData {
					return false
				}
				if degraded < 0 {
					degraded = p.Path
					n.Path(0, 1, p.Path).SetRate(0.2 * linkBps / 4)
				}
				seen = append(seen, arrival{n.Clock().Now(), p.Path})
				return false
			})
		},
		Messages: []Message{{From: 0, To: 1, Size: 16 << 20}},
	}
	sc.Transport.MinRTO = time.Millisecond // queues here are deep: keep RTO out of the picture
	res, err := Run(sc)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.CheckExactlyOnce(sc); err != nil {
		t.Fatal(err)
	}
	half := seen[len(seen)-1].at / 2
	var n [2]int
	var on [2]int
	for _, a := range seen {
		h := 0
		if a.at >= half {
			h = 1
		}
		n[h]++
		if a.path == degraded {
			on[h]++
		}
	}
	return float64(on[0]) / float64(n[0]), float64(on[1]) / float64(n[1]), time.Duration(res.Sent[0].FCTNs)
}

// TestRSSMovesOffDegradedPath is Ordered Chaos Fig. 1A in miniature: with
// one of eight equal paths throttled to 20%, RSS moves subflows away from
// it until its share of the traffic is near its share of the capacity
// (0.2/7.2 = 2.8%), down from where the hash first put them (static
// subflows: tau longer than the transfer), and the transfer runs at line
// rate where static subflows crawl at the slow path's pace.
//
// tau is the paper's 15 µs, and the no-feedback timer is on (40 µs, about
// 4 RTTs). Without it, Algorithm
// 1 only reroutes subflows that got feedback in the last interval, and
// with no congestion control to keep the slow path's queue short, a
// subflow stuck behind that queue may hear nothing for many intervals
// while the others are moved around it; the runs with default parameters
// are logged for comparison.
func TestRSSMovesOffDegradedPath(t *testing.T) {
	const capShare = 0.2 / 7.2
	static := named(t, "rss", map[string]string{"tau": "1h"})
	nf := map[string]string{"no_feedback": "40us", "tau": paperTau}
	rss := map[string]transport.Scheme{
		"rss":      named(t, "rss", nf),
		"rss+pfld": named(t, "rss+pfld", nf),
	}
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Parallel()
			initial, _, staticFCT := shareRun(t, static, seed)
			_, defLate, defFCT := shareRun(t, schemes(t)["rss"], seed)
			t.Logf("hash placement share %.3f, static FCT %v; rss with default parameters: share %.3f, FCT %v",
				initial, staticFCT, defLate, defFCT)
			for _, name := range []string{"rss", "rss+pfld"} {
				_, late, fct := shareRun(t, rss[name], seed)
				t.Logf("%s: degraded path share %.3f (capacity share %.3f), FCT %v", name, late, capShare, fct)
				if late > 2*capShare || (initial > 2*capShare && late > initial/2) {
					t.Errorf("%s: degraded path share %.3f from %.3f: want near %.3f", name, late, initial, capShare)
				}
				if fct > staticFCT*2/3 {
					t.Errorf("%s: FCT %v not well below static subflows' %v", name, fct, staticFCT)
				}
			}
		})
	}
}
