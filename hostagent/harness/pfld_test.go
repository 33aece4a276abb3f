package harness

import (
	"testing"
	"time"

	"github.com/ftlab/ftlab/hostagent/sim"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/internal/stats"
)

// lossyTransfer is one 16 MiB transfer over paths of different delays
// (cross-path reordering) that corrupt packets in both directions.
func lossyTransfer(s transport.Scheme, seed uint64) Scenario {
	return Scenario{
		Net:       fabric(2, seed),
		Transport: endpointConfig(s),
		Setup: func(n *sim.Network) {
			skewPaths(n)
			onPaths(n, func(c *sim.LinkConfig) { c.Loss.Corruption = 3e-3 })
		},
		Messages: []Message{{From: 0, To: 1, Size: 16 << 20}},
	}
}

// TestPFLDPreciseAndFast checks the two claims of PFLD against plain RSS
// on the same lossy, reordering network: PFLD never retransmits what the
// receiver had, and it detects losses within about one RTT where RSS
// waits for the retransmission timeout. PFLD's delay is the gap until the
// lost packet's subflow sends again (sigma packets later: 5.3 µs here) plus
// the trigger's trip and the NACK's return, so "about one RTT"; the RTT
// compared with is the flow's smoothed RTT (paths differ by 7 µs).
func TestPFLDPreciseAndFast(t *testing.T) {
	pfld := schemes(t)["rss+pfld"]
	rss := schemes(t)["rss"]
	var pfldDelays, rssDelays []time.Duration
	var rtt, rto time.Duration
	for seed := uint64(1); seed <= 3; seed++ {
		for _, run := range []struct {
			s      transport.Scheme
			delays *[]time.Duration
		}{{pfld, &pfldDelays}, {rss, &rssDelays}} {
			sc := lossyTransfer(run.s, seed)
			res, err := Run(sc)
			if err != nil {
				t.Fatal(err)
			}
			if err := res.CheckExactlyOnce(sc); err != nil {
				t.Fatal(err)
			}
			tot := res.Totals()
			f := res.Flows[0]
			t.Logf("%s seed %d: FCT %v, losses %d, retx %d, spurious rx/tx %d/%d, RTOs %d, NACKs %d/%d accepted, probes %+v, min/smoothed RTT %v/%v, RTO %v",
				run.s.Name(), seed, time.Duration(res.Sent[0].FCTNs), tot.Losses, tot.Retransmissions, tot.SpuriousRx, tot.SpuriousTx,
				tot.RTOs, tot.NACKsAccepted, tot.NACKs, tot.Probes, time.Duration(f.MinRTTNs), time.Duration(f.SRTTNs), time.Duration(f.RTONs))
			if run.s == pfld {
				if tot.SpuriousRx != 0 || tot.SpuriousTx != 0 {
					t.Errorf("seed %d: rss+pfld made %d spurious retransmissions (sender saw %d)", seed, tot.SpuriousRx, tot.SpuriousTx)
				}
				*run.delays = append(*run.delays, res.DetectionDelays(transport.CauseNACK)...)
				rtt = max(rtt, time.Duration(f.SRTTNs))
				rto = max(rto, time.Duration(f.RTONs))
			} else {
				*run.delays = append(*run.delays, res.DetectionDelays()...)
			}
		}
	}
	pMed, rMed := stats.Median(pfldDelays), stats.Median(rssDelays)
	t.Logf("detection delay: rss+pfld median %v p99 %v over %d losses; rss median %v over %d; smoothed RTT %v, RTO %v",
		pMed, stats.Quantile(pfldDelays, 0.99), len(pfldDelays), rMed, len(rssDelays), rtt, rto)
	if len(pfldDelays) < 20 || len(rssDelays) < 20 {
		t.Fatalf("too few losses to judge: %d and %d", len(pfldDelays), len(rssDelays))
	}
	if pMed >= 2*rtt || pMed >= rto/2 {
		t.Errorf("rss+pfld median detection %v: want < 2 RTT (%v) and < RTO/2 (%v)", pMed, 2*rtt, rto/2)
	}
	if rMed < 100*time.Microsecond {
		t.Errorf("rss median detection %v: expected the RTO (>= 100 µs min RTO)", rMed)
	}
}

// TestPFLDLowPriorityProbesFindTails: probes leave only in slots data
// cannot use, so behind a backlog (twenty messages queued on one flow at
// once, a window no smaller than the whole transfer, so data is always
// ready at every pacing slot) the tail probes of a message wait until the
// flow's data has gone. The first copy of every message's last packet is
// dropped; the next message's packets on the same subflow, or the tail
// probes behind the last one, must still reveal every such loss without
// the retransmission timer.
func TestPFLDLowPriorityProbesFindTails(t *testing.T) {
	var msgs []Message
	for i := 0; i < 20; i++ {
		msgs = append(msgs, Message{From: 0, To: 1, Size: 64 << 10})
	}
	sc := Scenario{Net: fabric(2, 1), Transport: endpointConfig(schemes(t)["rss+pfld"]), Messages: msgs,
		Setup: func(n *sim.Network) { skewPaths(n); n.AddFilter(dropTails()) }}
	sc.Transport.Window = 2 << 20
	res := runChecked(t, sc)
	tot := res.Totals()
	causes := lossCauses(res)
	t.Logf("end %v, losses %v, RTOs %d, probes %+v, skipped %d", res.End, causes, tot.RTOs, tot.Probes, res.Endpoints[0].Stats().ProbesSkipped)
	if tot.Losses != len(msgs) || causes[transport.CauseNACK] != len(msgs) || tot.RTOs != 0 {
		t.Errorf("%d tail losses: found %v, %d RTOs; want every one by NACK", len(msgs), causes, tot.RTOs)
	}
	if tot.SpuriousRx != 0 {
		t.Errorf("%d spurious retransmissions", tot.SpuriousRx)
	}
}

// TestPFLDPeriodicProbeVariants is Ordered Chaos V-F's ablation of
// proactive probes in miniature: a 16:1 incast with small windows (four
// packets per sender, as a per-flow congestion window in a large incast
// would allow), so each of a message's 16 subflows sends one packet every
// four round trips and ordinary data exposes a loss only after the RTO.
// Probing every P packets finds more of them as P falls (16, 4, 1), and
// the 'at most once per RTT' variant finds nearly as many as P = 1 with
// fewer probes.
func TestPFLDPeriodicProbeVariants(t *testing.T) {
	variants := []struct {
		name string
		kv   map[string]string
	}{
		{"P=16", map[string]string{"periodic": "16"}},
		{"P=4", map[string]string{"periodic": "4"}},
		{"P=1", map[string]string{"periodic": "1"}},
		{"per RTT", map[string]string{"periodic": "off", "periodic_per_rtt": "true"}},
	}
	rtos, probes := map[string]int{}, map[string]int{}
	for _, v := range variants {
		for seed := uint64(1); seed <= 2; seed++ {
			var msgs []Message
			for s := 1; s <= 16; s++ {
				msgs = append(msgs, Message{From: s, To: 0, Size: 1 << 20})
			}
			sc := Scenario{Net: fabric(17, seed), Transport: endpointConfig(named(t, "rss+pfld", v.kv)), Messages: msgs,
				Setup: func(n *sim.Network) { skewPaths(n); onPathsCorrupt(n, 1e-2) }}
			sc.Transport.Window = 4 * 4056
			sc.Transport.Seed = seed
			res := runChecked(t, sc)
			tot := res.Totals()
			rtos[v.name] += tot.RTOs
			probes[v.name] += tot.Probes.Periodic
			t.Logf("%s seed %d: CCT %v, losses %v, RTOs %d, periodic probes %d, spurious %d", v.name, seed, res.End,
				lossCauses(res), tot.RTOs, tot.Probes.Periodic, tot.SpuriousRx)
		}
	}
	t.Logf("RTOs %v, periodic probes %v", rtos, probes)
	if !(rtos["P=1"] < rtos["P=4"] && rtos["P=4"] < rtos["P=16"]) {
		t.Errorf("RTOs %v: want fewer as P falls", rtos)
	}
	if rtos["per RTT"] >= rtos["P=16"] || probes["per RTT"] >= probes["P=1"] {
		t.Errorf("per RTT: %d RTOs with %d probes; P=16 %d RTOs, P=1 %d probes", rtos["per RTT"], probes["per RTT"], rtos["P=16"], probes["P=1"])
	}
}
