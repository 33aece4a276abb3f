package harness

import (
	"testing"
	"time"

	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/netio"
	"github.com/ftlab/ftlab/hostagent/scheme"
	"github.com/ftlab/ftlab/hostagent/sim"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/hostagent/wire"
	"github.com/ftlab/ftlab/internal/params"
)

// Tests of rss+rack, psnpath (and its gapnack baseline), reps and plb.
// Their exactly-once delivery under every fault is in delivery_test.go,
// which runs every registered scheme.

// named returns the registered scheme name with its defaults at the
// simulated fabric's base RTT and the given key=value settings, failing
// the test on an error.
func named(t testing.TB, name string, kv map[string]string) transport.Scheme {
	t.Helper()
	p := scheme.MustDefaults(name, simEnv)
	for k, v := range kv {
		if err := scheme.SetParam(p, name, k, v, simEnv); err != nil {
			t.Fatal(err)
		}
	}
	s, err := scheme.New(name, p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// runChecked runs sc and checks exactly-once delivery.
func runChecked(t testing.TB, sc Scenario) *Result {
	t.Helper()
	res, err := Run(sc)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.CheckExactlyOnce(sc); err != nil {
		t.Fatal(err)
	}
	return res
}

// lossCauses counts the run's detected losses by cause.
func lossCauses(res *Result) map[transport.Cause]int {
	m := map[transport.Cause]int{}
	for _, r := range res.Sent {
		for _, l := range r.Losses {
			m[l.Cause]++
		}
	}
	return m
}

// tracker watches DATA packets of host 0 entering paths to host 1. The
// first such packet's path becomes the target, and onTarget (if set) may
// change it; share reports the target's share of the DATA packets in the
// first and the second half of the run.
type tracker struct {
	target   int
	onTarget func(n *sim.Network, l *sim.Link)
	seen     []trackedPacket
}

type trackedPacket struct {
	at   clock.Time
	path int
}

func (tr *tracker) install(n *sim.Network) {
	tr.target = -1
	n.AddFilter(func(p *sim.Packet) bool {
		if p.Src != 0 || p.Dst != 1 {
			return false
		}
		if pk := parsed(p); pk == nil || pk.Type != wire.TypeData {
			return false
		}
		if tr.target < 0 {
			tr.target = p.Path
			if tr.onTarget != nil {
				tr.onTarget(n, n.Path(0, 1, p.Path))
			}
		}
		tr.seen = append(tr.seen, trackedPacket{n.Clock().Now(), p.Path})
		return false
	})
}

func (tr *tracker) share() (early, late float64) {
	if len(tr.seen) == 0 {
		return 0, 0
	}
	half := tr.seen[len(tr.seen)-1].at / 2
	var all, on [2]int
	for _, a := range tr.seen {
		h := 0
		if a.at >= half {
			h = 1
		}
		all[h]++
		if a.path == tr.target {
			on[h]++
		}
	}
	frac := func(h int) float64 {
		if all[h] == 0 {
			return 0
		}
		return float64(on[h]) / float64(all[h])
	}
	return frac(0), frac(1)
}

func setLink(l *sim.Link, f func(*sim.LinkConfig)) {
	c := l.Config()
	f(&c)
	if err := l.Set(c); err != nil {
		panic(err)
	}
}

// TestPSNPathIgnoresCrossPathReordering: over paths of different delays
// without loss, PSN-PATH must never NACK: a gap is only a gap against the
// same path's predecessor. The forced variants remap constantly (every
// 10 µs a path is explored, removed or added back, and rolled back), so
// many epochs begin while packets of the previous one are in flight;
// FPSN keeps the receiver from comparing across them. Without FPSN
// (ablation) the receiver does NACK across epochs; the engine's NACK
// acceptance rule rejects those NACKs, so even then nothing is resent.
func TestPSNPathIgnoresCrossPathReordering(t *testing.T) {
	forced := map[string]string{"explore_threshold": "2", "remove_threshold": "1.5", "interval": "10us", "min_samples": "8"}
	noFPSN := map[string]string{"no_fpsn": "true"}
	for k, v := range forced {
		noFPSN[k] = v
	}
	for _, c := range []struct {
		name      string
		params    map[string]string
		wantNACKs bool
	}{
		{"defaults", nil, false},
		{"forced remaps", forced, false},
		{"forced remaps without FPSN", noFPSN, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := named(t, "psnpath", c.params)
			for seed := uint64(1); seed <= 2; seed++ {
				sc := Scenario{Net: fabric(2, seed), Transport: endpointConfig(s), Setup: skewPaths,
					Messages: []Message{{From: 0, To: 1, Size: 8 << 20}}}
				sc.Transport.Seed = seed
				res := runChecked(t, sc)
				tot := res.Totals()
				sent := res.Endpoints[1].Stats().NACKedPSNs
				t.Logf("seed %d: FCT %v, NACKed PSNs %d (sender accepted %d), retransmissions %d, path changes %d",
					seed, time.Duration(res.Sent[0].FCTNs), sent, tot.NACKsAccepted, tot.Retransmissions, tot.Reroutes)
				if tot.Retransmissions != 0 || tot.NACKsAccepted != 0 {
					t.Errorf("seed %d: %d retransmissions, %d NACKs accepted on a loss-free network", seed, tot.Retransmissions, tot.NACKsAccepted)
				}
				if c.wantNACKs != (sent > 0) {
					t.Errorf("seed %d: receiver NACKed %d PSNs (want some: %v)", seed, sent, c.wantNACKs)
				}
				// With defaults on a clean network every path scores 1 and
				// none may change. (Slower paths' own ACKs arrive after
				// faster paths' ACKs have covered their PSNs; the engine
				// still reports them, or those paths would look silent.)
				if c.params == nil && tot.Reroutes != 0 {
					t.Errorf("seed %d: %d path changes on a clean network", seed, tot.Reroutes)
				}
				if c.params != nil && tot.Reroutes < 50 {
					t.Errorf("seed %d: only %d path changes: not the forced-remap scenario", seed, tot.Reroutes)
				}
			}
		})
	}
}

// TestPSNPathDetectsPathLoss puts corruption on the path the flow's first
// packet takes. With the path manager off that path keeps its share and
// its losses must be found by same-path NACKs (precisely: nothing resent
// needlessly), not by the RTO; with it on, the manager must move traffic
// off a path losing 10%.
func TestPSNPathDetectsPathLoss(t *testing.T) {
	for _, c := range []struct {
		name     string
		params   map[string]string
		loss     float64
		minNACK  float64 // fraction of losses found by NACK, at least
		maxShare float64 // late share of the lossy path, at most
	}{
		{"detection", map[string]string{"no_path_manager": "true"}, 0.02, 0.9, 1},
		{"path manager", nil, 0.10, 0.6, 0.02},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := named(t, "psnpath", c.params)
			var nack, all int
			for seed := uint64(1); seed <= 2; seed++ {
				tr := &tracker{onTarget: func(_ *sim.Network, l *sim.Link) {
					setLink(l, func(lc *sim.LinkConfig) { lc.Loss.Corruption = c.loss })
				}}
				sc := Scenario{Net: fabric(2, seed), Transport: endpointConfig(s),
					Setup:    func(n *sim.Network) { skewPaths(n); tr.install(n) },
					Messages: []Message{{From: 0, To: 1, Size: 8 << 20}}}
				sc.Transport.Seed = seed
				res := runChecked(t, sc)
				tot := res.Totals()
				causes := lossCauses(res)
				early, late := tr.share()
				t.Logf("seed %d: FCT %v, losses %v, spurious %d, RTOs %d, lossy path share %.3f -> %.3f, path changes %d",
					seed, time.Duration(res.Sent[0].FCTNs), causes, tot.SpuriousRx, tot.RTOs, early, late, tot.Reroutes)
				nack += causes[transport.CauseNACK]
				all += tot.Losses
				if tot.SpuriousRx != 0 {
					t.Errorf("seed %d: %d spurious retransmissions", seed, tot.SpuriousRx)
				}
				if late > c.maxShare {
					t.Errorf("seed %d: lossy path still carries %.3f of the traffic", seed, late)
				}
			}
			if all == 0 || float64(nack) < c.minNACK*float64(all) {
				t.Errorf("%d of %d losses found by NACK, want >= %.0f%%", nack, all, 100*c.minNACK)
			}
		})
	}
}

// TestPSNPathRedundantRetransmissions is the paper's headline comparison
// in miniature: with cross-path reordering (path delays 1 to 4.5 µs) and
// random loss in both directions (1% per path), PSN-PATH's redundant
// retransmissions (copies the receiver already had) stay at or below 1%
// of its retransmissions, where a receiver that NACKs every global PSN
// gap (gapnack, same sender and paths) makes most of its retransmissions
// redundant.
func TestPSNPathRedundantRetransmissions(t *testing.T) {
	ratio := func(name string) (spurious, retx, pkts int) {
		s := named(t, name, nil)
		for seed := uint64(1); seed <= 2; seed++ {
			sc := Scenario{Net: fabric(2, seed), Transport: endpointConfig(s),
				Setup: func(n *sim.Network) {
					skewPaths(n)
					onPaths(n, func(c *sim.LinkConfig) { c.Loss.Corruption = 0.01 })
				},
				Messages: []Message{{From: 0, To: 1, Size: 8 << 20}}}
			sc.Transport.Seed = seed
			res := runChecked(t, sc)
			tot := res.Totals()
			spurious += tot.SpuriousRx
			retx += tot.Retransmissions
			pkts += res.Flows[0].Packets
		}
		return
	}
	ps, pr, pp := ratio("psnpath")
	gs, gr, gp := ratio("gapnack")
	t.Logf("psnpath: %d of %d retransmissions redundant (%.2f%% of retransmissions, %.3f%% of %d DATA packets)",
		ps, pr, 100*float64(ps)/float64(max(pr, 1)), 100*float64(ps)/float64(pp), pp)
	t.Logf("gapnack: %d of %d retransmissions redundant (%.2f%% of retransmissions, %.3f%% of %d DATA packets)",
		gs, gr, 100*float64(gs)/float64(max(gr, 1)), 100*float64(gs)/float64(gp), gp)
	if pr < 20 {
		t.Fatalf("psnpath: only %d retransmissions: too few losses to judge", pr)
	}
	if 100*ps > pr {
		t.Errorf("psnpath: %d of %d retransmissions redundant, want <= 1%%", ps, pr)
	}
	if 2*gs < gr {
		t.Errorf("gapnack: only %d of %d retransmissions redundant: the baseline is not showing the problem", gs, gr)
	}
}

// TestRACKRecoversWithoutRTO: rss+rack must find losses from the ACKs of
// later packets of the same subflow (RACK) or with a tail loss probe
// (TLP), not by waiting for the RTO as plain rss does: on a lossy,
// reordering network (8 MiB, 0.6% corruption both ways) and when the last
// packet of every message is lost.
func TestRACKRecoversWithoutRTO(t *testing.T) {
	tails := func(s transport.Scheme) Scenario {
		var msgs []Message
		for i := 0; i < 50; i++ {
			msgs = append(msgs, Message{From: 0, To: 1, Size: 64 << 10, At: time.Duration(i) * 20 * time.Microsecond})
		}
		return Scenario{Net: fabric(2, 3), Transport: endpointConfig(s), Messages: msgs,
			Setup: func(n *sim.Network) { skewPaths(n); n.AddFilter(dropTails()) }}
	}
	lossy := func(seed uint64) func(transport.Scheme) Scenario {
		return func(s transport.Scheme) Scenario {
			sc := lossyTransfer(s, seed)
			sc.Messages[0].Size = 8 << 20
			base := sc.Setup
			sc.Setup = func(n *sim.Network) {
				base(n)
				onPathsCorrupt(n, 0.006) // 8 MiB at 0.6% both ways: about as many losses as 16 MiB at 0.3%
			}
			return sc
		}
	}
	type variant struct {
		name   string
		params map[string]string
	}
	// At the paper's tau (pinned: the default is now one base RTT, whose
	// more frequent reroutes reorder subflows more often).
	rack, rss := variant{"rss+rack", map[string]string{"tau": paperTau}}, variant{"rss", nil}
	noTLP := variant{"rss+rack", map[string]string{"tau": paperTau, "no_tlp": "true"}}
	for _, c := range []struct {
		name     string
		scenario func(transport.Scheme) Scenario
		variants []variant
	}{
		{"lossy seed 1", lossy(1), []variant{rack, rss}},
		{"lossy seed 2", lossy(2), []variant{rack}},
		{"tail losses", tails, []variant{rack, noTLP, rss}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for _, v := range c.variants {
				res := runChecked(t, c.scenario(named(t, v.name, v.params)))
				tot := res.Totals()
				causes := lossCauses(res)
				t.Logf("%s %v: end %v, losses %v, spurious %d, RTOs %d", v.name, v.params, res.End, causes, tot.SpuriousRx, tot.RTOs)
				if tot.Losses < 5 {
					t.Fatalf("only %d losses", tot.Losses)
				}
				switch {
				case v.name == "rss":
					if causes[transport.CauseRTO] < tot.Losses/2 {
						t.Errorf("rss: %v: expected the RTO to find most losses", causes)
					}
				case v.params["no_tlp"] == "": // RACK-TLP
					if 10*causes[transport.CauseRTO] > tot.Losses {
						t.Errorf("rss+rack: %v: more than 10%% found by RTO", causes)
					}
					if 20*tot.SpuriousRx > tot.Losses {
						t.Errorf("rss+rack: %d spurious retransmissions for %d losses", tot.SpuriousRx, tot.Losses)
					}
				}
			}
		})
	}
}

// reorderingRun sends 8 MiB with rss+rack over paths whose delays grow by
// step from one to the next (both ways), so that every reroute of a
// subflow to a shorter path reorders it by up to 7 x 2 x step.
func reorderingRun(t *testing.T, params map[string]string, step time.Duration, seed uint64) Totals {
	t.Helper()
	sc := Scenario{Net: fabric(2, seed), Transport: endpointConfig(named(t, "rss+rack", params)),
		Messages: []Message{{From: 0, To: 1, Size: 8 << 20}},
		Setup: func(n *sim.Network) {
			for k := 0; k < n.Config().Paths; k++ {
				for _, dir := range [][2]int{{0, 1}, {1, 0}} {
					setLink(n.Path(dir[0], dir[1], k), func(c *sim.LinkConfig) { c.Delay = time.Microsecond + time.Duration(k)*step })
				}
			}
		}}
	sc.Transport.Seed = seed
	res := runChecked(t, sc)
	tot := res.Totals()
	t.Logf("%v, step %v, seed %d: losses %v, spurious %d, reroutes %d, min RTT %v", params, step, seed, lossCauses(res), tot.SpuriousRx,
		tot.Reroutes, time.Duration(res.Flows[0].MinRTTNs))
	return tot
}

// TestRACKReorderingWindow: packets of one subflow are reordered whenever
// RSS moves it (here often: sigma 1, tau 2 µs) to a path whose round trip
// is shorter, by at most 14 x 80 ns = 1.12 µs, within the default window
// (min RTT / 4, about 1.3 µs). RACK must then retransmit nothing; with a
// window of 1 ns the same reordering makes it retransmit spuriously.
func TestRACKReorderingWindow(t *testing.T) {
	const step = 80 * time.Nanosecond
	var tight int
	for seed := uint64(1); seed <= 2; seed++ {
		if tot := reorderingRun(t, map[string]string{"sigma": "1", "tau": "2us"}, step, seed); tot.SpuriousRx != 0 || tot.Retransmissions != 0 {
			t.Errorf("seed %d: %d retransmissions (%d spurious) with reordering inside the window", seed, tot.Retransmissions, tot.SpuriousRx)
		}
		tight += reorderingRun(t, map[string]string{"sigma": "1", "tau": "2us", "reo_wnd": "1ns"}, step, seed).SpuriousRx
	}
	if tight == 0 {
		t.Error("no spurious retransmissions even with a 1 ns window: the scenario does not reorder")
	}
}

// TestRACKWindowAdaptsToDSACK: with reordering beyond the initial window
// (paths 250 ns apart, up to 3.5 µs of reordering against a window of
// about 1.3 µs), the first reroutes cost spurious retransmissions; each is
// a DSACK, and RFC 8985's adaptation widens the window a round trip at a
// time until the reordering fits, where a fixed window keeps paying.
func TestRACKWindowAdaptsToDSACK(t *testing.T) {
	const step = 250 * time.Nanosecond
	var adaptive, fixed int
	for seed := uint64(1); seed <= 2; seed++ {
		adaptive += reorderingRun(t, map[string]string{"sigma": "1", "tau": "2us"}, step, seed).SpuriousRx
		fixed += reorderingRun(t, map[string]string{"sigma": "1", "tau": "2us", "adaptive_reo_wnd": "false"}, step, seed).SpuriousRx
	}
	t.Logf("spurious retransmissions: adaptive window %d, fixed %d", adaptive, fixed)
	if fixed < 20 || 4*adaptive > fixed {
		t.Errorf("spurious retransmissions: adaptive %d, fixed %d; want the adaptation to save most of them", adaptive, fixed)
	}
}

// TestRACKTLPRecoversTails: ten messages, each alone on its own flow,
// lose the first copy of their last packet, so no later packet of the
// flow can show RACK the loss. Each flow's tail loss probe, two SRTTs
// after its last send, retransmits that packet, long before the RTO;
// without TLP the RTO recovers every one.
func TestRACKTLPRecoversTails(t *testing.T) {
	for _, tlp := range []bool{true, false} {
		var msgs []Message
		for i := 0; i < 10; i++ {
			msgs = append(msgs, Message{From: 0, To: 1, Size: 64 << 10, Flow: i, At: time.Duration(i) * 30 * time.Microsecond})
		}
		kv := map[string]string{}
		if !tlp {
			kv["no_tlp"] = "true"
		}
		sc := Scenario{Net: fabric(2, 1), Transport: endpointConfig(named(t, "rss+rack", kv)), Messages: msgs,
			Setup: func(n *sim.Network) { skewPaths(n); n.AddFilter(dropTails()) }}
		res := runChecked(t, sc)
		tot := res.Totals()
		causes := lossCauses(res)
		var slowest time.Duration
		for _, r := range res.Sent {
			slowest = max(slowest, time.Duration(r.FCTNs))
		}
		t.Logf("tlp %v: losses %v, RTOs %d, spurious %d, slowest FCT %v", tlp, causes, tot.RTOs, tot.SpuriousRx, slowest)
		if tlp && (causes[transport.CauseTLP] != len(msgs) || tot.RTOs != 0 || tot.SpuriousRx != 0) {
			t.Errorf("with TLP: %v, %d RTOs, %d spurious; want every tail resent by its probe", causes, tot.RTOs, tot.SpuriousRx)
		}
		if !tlp && causes[transport.CauseRTO] != len(msgs) {
			t.Errorf("without TLP: %v; want the RTO to find every tail", causes)
		}
	}
}

// TestREPSConvergesOnUnmarkedEVs: one of eight 25 Gbit/s paths marks CE
// (ECN threshold 16 KiB) and is congested, either because it is slow or
// because cross traffic fills it. RPS keeps spraying an eighth of the
// packets onto it and gets them marked; REPS keeps reusing the EVs whose
// ACKs came back unmarked (and they come back sooner), so its share of
// that path and its CE marks fall.
func TestREPSConvergesOnUnmarkedEVs(t *testing.T) {
	const ecn = 16 << 10
	for _, c := range []struct {
		name  string
		setup func(n *sim.Network, marked int)
	}{
		{"slow marking path", func(n *sim.Network, marked int) {
			setLink(n.Path(0, 1, marked), func(c *sim.LinkConfig) { c.Rate /= 10; c.ECNThreshold = ecn })
		}},
		{"cross traffic", func(n *sim.Network, marked int) {
			setLink(n.Path(0, 1, marked), func(c *sim.LinkConfig) { c.ECNThreshold = ecn })
			ev := uint16(0)
			for n.PathOf(0, 1, ev) != marked {
				ev++
			}
			// 20 Gbit/s of datagrams no endpoint accepts (not ECN-capable,
			// so never marked themselves) on the marked path.
			junk := make([]byte, 4000)
			var tick func()
			tick = func() {
				_ = n.Host(0).Send(netio.Datagram{Peer: sim.HostAddr(1), EV: ev, ECN: netio.NotECT, Payload: junk})
				n.Clock().AfterFunc(time.Duration(float64(len(junk)+42)*8e9/(20*gbps)), tick)
			}
			tick()
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			type outcome struct {
				late   float64
				marked uint64
			}
			run := func(name string, seed uint64) outcome {
				const marked = 2
				tr := &tracker{}
				sc := Scenario{
					Net: sim.Config{
						Seed: seed, Hosts: 2, Paths: 8,
						Host: sim.LinkConfig{Rate: linkBps, Delay: 500 * time.Nanosecond, Buffer: 8 << 20},
						Path: sim.LinkConfig{Rate: linkBps / 4, Delay: time.Microsecond, Buffer: 8 << 20},
					},
					Transport: endpointConfig(named(t, name, nil)),
					Setup: func(n *sim.Network) {
						c.setup(n, marked)
						tr.install(n)
					},
					Messages: []Message{{From: 0, To: 1, Size: 4 << 20}},
				}
				sc.Transport.Seed = seed
				sc.Transport.MinRTO = time.Millisecond
				res, err := Run(sc)
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Received) != 1 || !res.Received[0].Verified { // the junk counts as malformed: no CheckExactlyOnce
					t.Fatalf("%s: delivery %+v", name, res.Received)
				}
				tr.target = marked
				_, late := tr.share()
				st := res.Net.Path(0, 1, marked).Stats()
				t.Logf("%s seed %d: marked path late share %.3f, CE marks %d, FCT %v", name, seed, late, st.Marked, time.Duration(res.Sent[0].FCTNs))
				return outcome{late, st.Marked}
			}
			for seed := uint64(1); seed <= 3; seed++ {
				rps, reps := run("rps", seed), run("reps", seed)
				if reps.late > 2.0/3/8 || reps.late > rps.late/2 {
					t.Errorf("seed %d: reps sends %.3f of its packets on the marking path (rps %.3f)", seed, reps.late, rps.late)
				}
				if rps.marked < 50 || 10*reps.marked > rps.marked {
					t.Errorf("seed %d: CE marks: reps %d, rps %d", seed, reps.marked, rps.marked)
				}
			}
		})
	}
}

// TestPLBMovesOffMarkingPath: the path the flow starts on is throttled
// and marks CE beyond a queue threshold. ECMP stays there; PLB sees more
// than 5% of a round's ACKs marked and moves the flow to another EV.
func TestPLBMovesOffMarkingPath(t *testing.T) {
	for _, c := range []struct {
		name      string
		rateDiv   float64
		threshold int
	}{
		{"20% rate, 32 KiB", 5, 32 << 10},
		{"50% rate, 8 KiB", 2, 8 << 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			run := func(name string) (late float64, fct time.Duration, moves int) {
				tr := &tracker{onTarget: func(_ *sim.Network, l *sim.Link) {
					setLink(l, func(lc *sim.LinkConfig) { lc.Rate /= c.rateDiv; lc.ECNThreshold = c.threshold })
				}}
				sc := Scenario{
					Net: sim.Config{
						Seed: 1, Hosts: 2, Paths: 8,
						Host: sim.LinkConfig{Rate: linkBps, Delay: 500 * time.Nanosecond, Buffer: 8 << 20},
						Path: sim.LinkConfig{Rate: linkBps, Delay: time.Microsecond, Buffer: 8 << 20},
					},
					Transport: endpointConfig(named(t, name, nil)),
					Setup:     tr.install,
					Messages:  []Message{{From: 0, To: 1, Size: 4 << 20}},
				}
				sc.Transport.MinRTO = time.Millisecond
				res := runChecked(t, sc)
				_, late = tr.share()
				t.Logf("%s: share of the marking path in the second half %.3f, FCT %v, moves %d", name, late, time.Duration(res.Sent[0].FCTNs), res.Flows[0].Reroutes)
				return late, time.Duration(res.Sent[0].FCTNs), res.Flows[0].Reroutes
			}
			ecmpLate, ecmpFCT, _ := run("ecmp")
			plbLate, plbFCT, moves := run("plb")
			if ecmpLate != 1 {
				t.Errorf("ecmp left the path (share %.3f): the scenario is wrong", ecmpLate)
			}
			if plbLate > 0.05 || moves == 0 || plbFCT >= ecmpFCT {
				t.Errorf("plb: share %.3f after %d moves, FCT %v (ecmp %v)", plbLate, moves, plbFCT, ecmpFCT)
			}
		})
	}
}

// onPathsCorrupt sets every path's corruption probability.
func onPathsCorrupt(n *sim.Network, p float64) {
	onPaths(n, func(c *sim.LinkConfig) { c.Loss.Corruption = p })
}

// ftlabRTT is the base RTT of a k=4 fat tree of ftlab at 100 Mbit/s
// (docs/scenarios.md): the unit of the RTT-relative defaults in
// TestDTSwitchReactsWithinARun.
const ftlabRTT = 2566080 * time.Nanosecond

// TestDTSwitchReactsWithinARun puts PSN-PATH in the regime ftlab runs it
// in: 100 Mbit/s links and a 2.6 ms RTT (21 full-size packets per RTT), one
// flow paced at a quarter of the line rate, as when four messages share a
// host's link, so each of the 4 paths gets about 1.3 ACKs per 2-RTT
// interval. The path the flow's first packet took fails, or starts losing
// 20% of its packets, a quarter of the way into a 2 MiB message or from
// the start of a 256 KiB one (16 intervals long). DT-Switch must take the
// traffic off it within a few intervals of the degradation: a failed path
// is silent after an interval and two SRTTs; at 20% loss the first loss
// comes after about 5 of its packets (4 intervals) and decides the path at
// once. The settings before this change (beta 10, thresholds 0.95 and 0.8,
// 32 samples, no early judgement, one trial at a time) are run for
// comparison: they need 32 samples, 25 intervals of a path's ACKs here.
func TestDTSwitchReactsWithinARun(t *testing.T) {
	env := params.Env{RTT: ftlabRTT}
	interval := 2 * ftlabRTT
	old := map[string]string{"beta": "10", "explore_threshold": "0.95", "remove_threshold": "0.8", "min_samples": "32"}
	fail := func(_ *sim.Network, l *sim.Link, at clock.Time) { l.Fail(at, 0) }
	lossy := func(n *sim.Network, l *sim.Link, at clock.Time) {
		n.Clock().At(at, func() { setLink(l, func(c *sim.LinkConfig) { c.Loss.Corruption = 0.2 }) })
	}
	for _, c := range []struct {
		name    string
		size    int
		late    bool // degrade a quarter of the way in (else from the first packet)
		degrade func(n *sim.Network, l *sim.Link, at clock.Time)
		within  float64 // intervals from the degradation to the last DATA packet on the path
	}{
		{"2MiB, failure", 2 << 20, true, fail, 4},
		{"2MiB, 20% loss", 2 << 20, true, lossy, 10},
		{"256KiB, 20% loss", 256 << 10, false, lossy, 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, variant := range []map[string]string{nil, old} {
				p := scheme.MustDefaults("psnpath", env)
				for k, v := range variant {
					if err := scheme.SetParam(p, "psnpath", k, v, env); err != nil {
						t.Fatal(err)
					}
				}
				s, err := scheme.New("psnpath", p)
				if err != nil {
					t.Fatal(err)
				}
				var degradeAt clock.Time
				if c.late {
					degradeAt = clock.Time(float64(c.size) * 8 / 25e6 * float64(time.Second) / 4)
				}
				tr := &tracker{onTarget: func(n *sim.Network, l *sim.Link) { c.degrade(n, l, max(degradeAt, n.Clock().Now())) }}
				sc := Scenario{
					Net: sim.Config{Seed: 1, Hosts: 2, Paths: 8, MTU: 1500,
						Host: sim.LinkConfig{Rate: 100e6, Buffer: 256 << 10},
						Path: sim.LinkConfig{Rate: 100e6, Delay: 1100 * time.Microsecond, Buffer: 256 << 10}},
					Transport: transport.Config{Scheme: s, Rate: 25e6, BaseRTT: ftlabRTT},
					Setup:     tr.install,
					Messages:  []Message{{From: 0, To: 1, Size: c.size}},
					Limit:     60 * time.Second,
				}
				res := runChecked(t, sc)
				var last clock.Time
				for _, a := range tr.seen {
					if a.path == tr.target && a.at > last {
						last = a.at
					}
				}
				after := float64(last-degradeAt) / float64(interval)
				tot := res.Totals()
				t.Logf("%v: FCT %v (%.0f intervals), last DATA on the degraded path %.1f intervals after it degraded, path changes %d, losses %v, RTOs %d",
					variant, time.Duration(res.Sent[0].FCTNs), float64(res.Sent[0].FCTNs)/float64(interval), after, tot.Reroutes, lossCauses(res), tot.RTOs)
				if variant == nil && after > c.within {
					t.Errorf("defaults: the degraded path carried DATA %.1f intervals after it degraded, want at most %v", after, c.within)
				}
			}
		})
	}
}
