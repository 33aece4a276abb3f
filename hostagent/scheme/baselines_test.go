package scheme

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/hostagent/wire"
)

func TestRegistryBaselines(t *testing.T) {
	us := time.Microsecond
	for _, c := range []struct {
		name   string
		params map[string]string
		check  func(transport.Scheme) bool
	}{
		{"rss+rack", map[string]string{"sigma": "4", "reo_wnd_frac": "0.5", "adaptive_reo_wnd": "true", "pto_srtts": "3", "max_ack_delay": "2us", "no_tlp": "true"},
			func(s transport.Scheme) bool {
				r := s.(rackScheme)
				c := r.cfg
				return r.rss.Sigma == 4 && c.ReoWndFrac == 0.5 && c.Adaptive && c.PTOSRTTs == 3 && c.MaxACKDelay == 2*us && c.NoTLP
			}},
		{"rss+rack", nil, func(s transport.Scheme) bool {
			r := s.(rackScheme)
			c := r.cfg
			return c.ReoWndFrac == 0.25 && c.PTOSRTTs == 2 && r.rss.Sigma == 16 && c.Adaptive && !c.AssumeReordering &&
				c.MinRTTWindow == 1000*testEnv.RTT
		}},
		{"psnpath", nil, func(s transport.Scheme) bool {
			c := s.(psnpathScheme).cfg
			return c.Paths == 4 && c.Beta == 4 && c.Interval == 2*testEnv.RTT && c.Explore == 0.75 && c.Remove == 0.5 &&
				c.MinSamples == 16 && c.BitmapBits == 512 && c.MaxWalk == 1 && c.BaseEV < 0
		}},
		{"psnpath", map[string]string{"k": "8", "base_ev": "0", "beta": "2.5", "interval": "50us", "explore_threshold": "0.9", "remove_threshold": "0.5",
			"min_samples": "10", "bitmap_bits": "1024", "max_walk": "-1", "no_path_manager": "true", "no_fpsn": "true", "no_fast_retx": "true", "keep_path_on_rto": "true"},
			func(s transport.Scheme) bool {
				c := s.(psnpathScheme).cfg
				return c.Paths == 8 && c.BaseEV == 0 && c.Beta == 2.5 && c.Interval == 50*us && c.Explore == 0.9 &&
					c.Remove == 0.5 && c.MinSamples == 10 && c.BitmapBits == 1024 && c.MaxWalk == -1 && c.NoPathManager && c.NoFPSN && c.NoFastRetx && c.KeepPathOnRTO
			}},
		{"gapnack", map[string]string{"k": "2"}, func(s transport.Scheme) bool {
			ps := s.(psnpathScheme)
			return ps.gap && ps.cfg.Paths == 2 && s.Name() == "gapnack"
		}},
		{"reps", map[string]string{"cache": "8", "freeze": "1ms", "no_freeze": "true"}, func(s transport.Scheme) bool {
			c := s.(repsScheme).cfg
			return c.Buffer == 8 && c.Freeze == time.Millisecond && c.NoFreeze
		}},
		{"reps", nil, func(s transport.Scheme) bool { return s.(repsScheme).cfg.Buffer == 16 }},
		{"plb", map[string]string{"threshold": "0.5", "rounds": "3", "keep_path_on_rto": "true"}, func(s transport.Scheme) bool {
			c := s.(plbScheme).cfg
			return c.ECNThreshold == 0.5 && c.Rounds == 3 && c.KeepPathOnRTO
		}},
		{"plb", nil, func(s transport.Scheme) bool {
			c := s.(plbScheme).cfg
			return c.ECNThreshold == 0.05 && c.Rounds == 1
		}},
	} {
		s, err := newWith(c.name, c.params)
		if err != nil {
			t.Errorf("New(%q, %v): %v", c.name, c.params, err)
			continue
		}
		if s.Name() != c.name || !c.check(s) {
			t.Errorf("New(%q, %v) = %+v", c.name, c.params, s)
		}
	}
	for _, bad := range []struct {
		name string
		p    map[string]string
	}{
		{"rss+rack", map[string]string{"reo_wnd_frac": "NaN"}},
		{"rss+rack", map[string]string{"reo_wnd_frac": "-1"}},
		{"rss+rack", map[string]string{"pto_srtts": "x"}},
		{"rss+rack", map[string]string{"bitmap_bits": "512"}}, // a pfld key
		{"psnpath", map[string]string{"k": "32"}},
		{"psnpath", map[string]string{"explore_threshold": "0.2", "remove_threshold": "0.5"}},
		{"psnpath", map[string]string{"base_ev": "65536"}},
		{"psnpath", map[string]string{"min_samples": "-3"}},
		{"psnpath", map[string]string{"beta": "Inf"}},
		{"reps", map[string]string{"cache": "-1"}},
		{"reps", map[string]string{"freeze": "-1us"}},
		{"plb", map[string]string{"threshold": "1.5"}},
		{"plb", map[string]string{"rounds": "-1"}},
		{"plb", map[string]string{"sigma": "4"}},
	} {
		if _, err := newWith(bad.name, bad.p); err == nil {
			t.Errorf("New(%q, %v) accepted", bad.name, bad.p)
		}
	}
}

// TestPSNPathReceiver walks the path recognizer through section 4.3's
// cases with 4 paths: cross-path reordering (no NACK), a missing
// same-path predecessor (NACK), epoch boundaries, retransmissions and
// duplicates, and walking back further when asked.
func TestPSNPathReceiver(t *testing.T) {
	const base = 5000
	env := &nackEnv{}
	newRx := func(walk int, noFPSN bool) *psnpathReceiver {
		return &psnpathReceiver{env: env, bm: newBitmap(512, base), walk: walk, noFPSN: noFPSN}
	}
	r := newRx(1, false)
	m1 := wire.NewPathMap(4, base)     // first epoch: 4 paths from the flow's start
	m2 := wire.NewPathMap(3, base+100) // second: 3 paths from 5100
	data := func(r *psnpathReceiver, psn uint32, m wire.PathMap, f wire.Flags) {
		r.OnData(&wire.Packet{Header: wire.Header{Type: wire.TypeData, Flags: f, PSN: psn}, Path: m})
	}
	steps := []struct {
		name string
		do   func()
		want [][]uint32
	}{
		{"epoch start: no predecessor", func() { data(r, base+3, m1, 0); data(r, base+1, m1, 0) }, nil},
		{"cross-path reordering", func() { data(r, base+5, m1, 0); data(r, base+7, m1, 0) }, nil},
		{"predecessor missing", func() { data(r, base+4, m1, 0) }, [][]uint32{{base}}},
		{"only the predecessor", func() { data(r, base+12, m1, 0) }, [][]uint32{{base + 8}}},
		{"predecessor there", func() { data(r, base+9, m1, 0) }, nil},
		{"duplicate: judged already", func() { data(r, base+12, m1, 0) }, nil},
		{"retransmission: no check", func() { data(r, base+50, 0, wire.FlagRetx) }, nil},
		{"no mapping: no check", func() { data(r, base+60, 0, 0) }, nil},
		{"new epoch: its first 3 PSNs have no predecessor", func() { data(r, base+101, m2, 0); data(r, base+102, m2, 0) }, nil},
		{"new epoch: predecessor there", func() { data(r, base+105, m2, 0) }, nil},
		{"new epoch: predecessor 3 back", func() { data(r, base+106, m2, 0) }, [][]uint32{{base + 103}}},
		{"old epoch's late packet: its own mapping", func() { data(r, base+99, m1, 0) }, [][]uint32{{base + 95}}},
	}
	for _, s := range steps {
		env.got = nil
		s.do()
		if diff := cmp.Diff(s.want, env.got); diff != "" {
			t.Errorf("%s: NACKs (-want +got):\n%s", s.name, diff)
		}
	}
	// Walking back: a burst of 3 on one path, bounded by the epoch.
	env.got = nil
	r = newRx(-1, false)
	data(r, base+2, m1, 0)
	data(r, base+18, m1, 0)
	if diff := cmp.Diff([][]uint32{{base + 14, base + 10, base + 6}}, env.got); diff != "" {
		t.Errorf("walk: (-want +got):\n%s", diff)
	}
	env.got = nil
	data(r, base+109, m2, 0) // 5106, 5103, 5100 missing; the walk stops at FPSN 5100
	if diff := cmp.Diff([][]uint32{{base + 106, base + 103, base + 100}}, env.got); diff != "" {
		t.Errorf("walk to the epoch start: (-want +got):\n%s", diff)
	}
	// Without FPSN the receiver compares across the epoch boundary.
	env.got = nil
	r = newRx(1, true)
	data(r, base+96, m1, 0)
	data(r, base+102, m2, 0)
	if diff := cmp.Diff([][]uint32{{base + 92}, {base + 99}}, env.got); diff != "" {
		t.Errorf("no FPSN: (-want +got):\n%s", diff)
	}
	if r.StateBytes() != 68 {
		t.Errorf("state %d B", r.StateBytes())
	}
}

// TestNoFastRetx: with no_fast_retx, psnpath's and gapnack's receivers
// NACK nothing, even a missing same-path predecessor or a global gap.
func TestNoFastRetx(t *testing.T) {
	for _, gap := range []bool{false, true} {
		cfg := dtSwitchParams()
		cfg.NoFastRetx = true
		env := &nackEnv{}
		first := &wire.Packet{Header: wire.Header{Type: wire.TypeData, Flow: 9}}
		base := wire.InitialPSN(9)
		r := psnpathScheme{cfg: cfg, gap: gap}.NewReceiver(env, first)
		m := wire.NewPathMap(4, base)
		for _, psn := range []uint32{base + 1, base + 4, base + 9} { // base and base+5 missing
			r.OnData(&wire.Packet{Header: wire.Header{Type: wire.TypeData, PSN: psn}, Path: m})
		}
		if len(env.got) != 0 || r.StateBytes() != 68 { // the bitmap of 512 bits and its base
			t.Errorf("gap=%v: NACKs %v, state %d B", gap, env.got, r.StateBytes())
		}
	}
}

func TestGapReceiver(t *testing.T) {
	const base = 700
	env := &nackEnv{}
	r := &gapReceiver{env: env, bm: newBitmap(512, base), high: base - 1}
	data := func(psn uint32) {
		r.OnData(&wire.Packet{Header: wire.Header{Type: wire.TypeData, PSN: psn}})
	}
	for _, s := range []struct {
		psn  uint32
		want [][]uint32
	}{
		{base, nil},
		{base + 3, [][]uint32{{base + 1, base + 2}}},
		{base + 1, nil}, // fills a hole: nothing new
		{base + 5, [][]uint32{{base + 4}}},
		{base + 2, nil},
		{base + 2000, nil}, // beyond the window: what it jumped over is unknown except the last 512
	} {
		env.got = nil
		data(s.psn)
		if s.psn == base+2000 {
			if len(env.got) != 1 || len(env.got[0]) != 511 || env.got[0][0] != base+2000-511 {
				t.Errorf("jump: NACKed %d lists", len(env.got))
			}
			continue
		}
		if diff := cmp.Diff(s.want, env.got); diff != "" {
			t.Errorf("PSN %d: (-want +got):\n%s", s.psn, diff)
		}
	}
}

// dtSwitchParams are the PSN-PATH settings the DT-Switch tests walk
// through: fixed base EV 100, beta 4, thresholds 0.8 and 0.3, 30 us
// intervals, so the scores of the test's ACK and NACK counts are easy to
// follow.
func dtSwitchParams() PSNPathParams {
	return PSNPathParams{Paths: 4, BaseEV: 100, Beta: 4, Interval: 30 * time.Microsecond, Explore: 0.8, Remove: 0.3,
		MinSamples: 32, BitmapBits: 512, MaxWalk: 1}
}

// TestPSNPathSender checks the mapping (PSN p on active path (p-FPSN)
// mod A, EVs base+i, the PathMap it announces) and DT-Switch: removal,
// exploration with rollback, and adding a path back.
func TestPSNPathSender(t *testing.T) {
	env := newEnv()
	cfg := dtSwitchParams()
	cfg.MinSamples = 4
	s := newPSNPathSender(env, cfg, false)
	for psn := env.next; psn < env.next+8; psn++ {
		if got, want := s.DataEV(psn), uint16(100+(psn-env.next)%4); got != want {
			t.Errorf("DataEV(%d) = %d, want %d", psn, got, want)
		}
	}
	if m := s.PathMap(env.next); m.Paths() != 4 || m.FPSN(env.next+5) != env.next {
		t.Errorf("PathMap %#x", uint16(m))
	}
	feed := func(slot, acks, nacks int) {
		for i := 0; i < acks; i++ {
			s.OnFeedback(transport.Feedback{EV: s.slots[slot].ev, At: env.now})
		}
		for i := 0; i < nacks; i++ {
			s.OnNACK(transport.NACKInfo{TriggerEV: s.slots[slot].ev, Accepted: true})
		}
	}
	// interval delivers one interval's feedback, then an ACK at the
	// deadline that makes the path manager decide.
	interval := func(bad, acks, nacks int) {
		for i := range s.slots {
			if s.slots[i].active && i != bad {
				feed(i, 10, 0)
			}
		}
		if bad >= 0 {
			feed(bad, acks, nacks)
		}
		env.now += clock.Time(cfg.Interval)
		s.OnFeedback(transport.Feedback{EV: 1, At: env.now}) // an unknown EV: just the clock
	}
	// Path 2 loses 2 of 10 (q = (8-8)/10 = 0 < 0.3): removed. The next
	// epoch maps over 3 paths from the next PSN.
	env.next += 100
	interval(2, 8, 2)
	if s.slots[2].active || len(s.order) != 3 || s.fpsn != env.next {
		t.Fatalf("after a bad interval: active %v, fpsn %d", s.order, s.fpsn)
	}
	if got := []uint16{s.DataEV(env.next), s.DataEV(env.next + 1), s.DataEV(env.next + 2), s.DataEV(env.next + 3)}; !cmp.Equal(got, []uint16{100, 101, 103, 100}) {
		t.Errorf("3-path mapping %v", got)
	}
	// All healthy: a path is added back on trial ...
	interval(-1, 0, 0)
	if !s.slots[2].active || s.slots[2].trial == nil || !s.slots[2].trial.add || s.slots[2].ev == 102 {
		t.Fatalf("no add trial: %+v", s.slots[2].trial)
	}
	// ... and rolled back when it does no better than Explore.
	interval(2, 9, 1) // q = (9-4)/10 = 0.5
	if s.slots[2].active || s.trials != 0 {
		t.Fatalf("add trial not rolled back: %+v", s.slots[2].trial)
	}
	// Path 0 mildly lossy (q = 0.5): explored; the candidate is worse
	// (q = 0.4), so the old EV comes back.
	interval(0, 9, 1)
	if s.slots[0].ev == 100 || s.slots[0].trial == nil || s.slots[0].trial.oldEV != 100 {
		t.Fatalf("no exploration: %+v", s.slots[0].trial)
	}
	interval(0, 12, 2) // (12-8)/14
	if s.slots[0].ev != 100 || s.slots[0].trial != nil {
		t.Errorf("worse candidate kept: EV %d", s.slots[0].ev)
	}
	// Explored again later, and this time the candidate is better: kept.
	interval(-1, 0, 0) // re-add path 2 is tried first; let it pass
	interval(-1, 0, 0)
	interval(0, 9, 1)
	cand := s.slots[0].ev
	if cand == 100 || s.slots[0].trial == nil {
		t.Fatalf("no second exploration")
	}
	interval(0, 10, 0)
	if s.slots[0].ev != cand || s.slots[0].trial != nil {
		t.Errorf("better candidate not kept")
	}
	// Retransmissions go on the best path; an RTO replaces the path that
	// timed out.
	best := s.RetransmitEV(0, transport.CauseNACK)
	if i := s.activeSlot(best); i < 0 || s.slots[i].q != 1 {
		t.Errorf("retransmission EV %d on a path of score %v", best, s.slots[max(i, 0)].q)
	}
	old := s.slots[1].ev
	s.OnRTO([]transport.LostPacket{{EV: old}})
	if s.slots[1].ev == old {
		t.Error("RTO did not move the path")
	}
	if s.StateBytes() <= 0 {
		t.Error("state")
	}
}

func TestPSNPathSilentPath(t *testing.T) {
	env := newEnv()
	cfg := dtSwitchParams()
	s := newPSNPathSender(env, cfg, false)
	for psn := env.next; psn < env.next+8; psn++ {
		s.OnSent(transport.SentPacket{PSN: psn, EV: s.DataEV(psn), At: env.now})
	}
	// Paths 0, 1, 3 answer; path 2 never does.
	env.now += clock.Time(cfg.Interval - 1)
	for _, i := range []int{0, 1, 3} {
		s.OnFeedback(transport.Feedback{EV: s.slots[i].ev, At: env.now})
	}
	env.now += clock.Time(3 * env.SRTT())
	s.OnFeedback(transport.Feedback{EV: s.slots[0].ev, At: env.now})
	if s.slots[2].active || !s.slots[0].active || !s.slots[1].active || !s.slots[3].active {
		t.Errorf("silent path 2 kept, or another removed: %v", s.order)
	}
}

func TestREPS(t *testing.T) {
	env := newEnv()
	s := repsScheme{REPSParams{Buffer: 3}}.NewSender(env).(*repsSender)
	// Empty ring: explore.
	s.DataEV(0)
	if s.explored != 1 {
		t.Fatal("did not explore")
	}
	fb := func(ev uint16, ce bool) { s.OnFeedback(transport.Feedback{EV: ev, CE: ce, At: env.now}) }
	fb(11, false)
	fb(12, true) // marked: dropped
	fb(13, false)
	if got := []uint16{s.DataEV(0), s.DataEV(0)}; !cmp.Equal(got, []uint16{11, 13}) {
		t.Errorf("recycled %v, want [11 13] (oldest first, marked dropped)", got)
	}
	s.DataEV(0)
	if s.explored != 2 {
		t.Error("empty ring again: should explore")
	}
	// Overflow: the newest replaces the oldest.
	for _, ev := range []uint16{21, 22, 23, 24} {
		fb(ev, false)
	}
	if got := []uint16{s.DataEV(0), s.DataEV(0), s.DataEV(0)}; !cmp.Equal(got, []uint16{22, 23, 24}) {
		t.Errorf("after overflow %v", got)
	}
	// Freeze: cycle through the ring without consuming, no exploring.
	fb(31, false)
	fb(32, false)
	s.OnRTO(nil)
	explored := s.explored
	var got []uint16
	for i := 0; i < 5; i++ {
		got = append(got, s.RetransmitEV(0, transport.CauseRTO))
	}
	if !cmp.Equal(got, []uint16{31, 32, 31, 32, 31}) || s.explored != explored {
		t.Errorf("frozen: %v", got)
	}
	// Freeze ends after the RTO (1 ms in the fake env): consuming again.
	env.now += clock.Time(time.Millisecond)
	if a, b := s.DataEV(0), s.DataEV(0); a != 31 || b != 32 || s.n != 0 {
		t.Errorf("after the freeze: %d %d, %d left", a, b, s.n)
	}
	if s.StateBytes() != 3*2+2+4 {
		t.Errorf("state %d", s.StateBytes())
	}
}

func TestPLB(t *testing.T) {
	env := newEnv()
	s := plbScheme{PLBParams{ECNThreshold: 0.25, Rounds: 2}}.NewSender(env).(*plbSender)
	ev0 := s.ev
	round := func(acks, ce int) {
		env.next += uint32(acks)
		for i := 0; i < acks; i++ {
			s.OnFeedback(transport.Feedback{PSN: s.roundEnd - uint32(acks) + uint32(i) + 1, EV: s.ev, CE: i < ce})
		}
	}
	s.OnFeedback(transport.Feedback{PSN: env.next, EV: s.ev}) // closes the first (empty) round
	round(8, 2)                                               // 25%: not above
	round(8, 3)                                               // congested 1
	if s.ev != ev0 {
		t.Fatal("moved after one congested round with Rounds 2")
	}
	round(8, 1) // resets the count
	round(8, 3)
	round(8, 4)
	if s.ev == ev0 || len(env.reroutes) != 1 {
		t.Fatalf("did not move after two congested rounds")
	}
	// Feedback from the old EV is ignored.
	ev1 := s.ev
	for i := 0; i < 20; i++ {
		s.OnFeedback(transport.Feedback{PSN: env.next + 100, EV: ev0, CE: true})
	}
	if s.ev != ev1 || s.acks != 0 {
		t.Error("old-EV feedback counted")
	}
	s.OnRTO(nil)
	if s.ev == ev1 {
		t.Error("RTO did not move the flow")
	}
}

// TestPLBOwnRules: PLB's idle repath (after idle_rounds congested rounds,
// as soon as nothing is in flight, before rounds forces a move) and its
// suspension of moves on congestion after a move on RTO.
func TestPLBOwnRules(t *testing.T) {
	env := newEnv()
	env.out = []transport.OutstandingPacket{{PSN: 1}}
	s := plbScheme{PLBParams{ECNThreshold: 0.5, Rounds: 12, IdleRounds: 3, SuspendAfterRTO: time.Millisecond}}.NewSender(env).(*plbSender)
	round := func(ce bool) {
		end := s.roundEnd
		env.next += 4
		for i := uint32(0); i < 4; i++ {
			s.OnFeedback(transport.Feedback{PSN: end + i, EV: s.ev, CE: ce, At: env.now})
		}
	}
	ev0 := s.ev
	for range 5 {
		round(true)
	}
	if s.ev != ev0 || s.congested < 3 {
		t.Fatalf("moved with packets in flight after %d congested rounds (idle rounds 3, rounds 12)", s.congested)
	}
	env.out = nil // the flow drains: the next ACK finds nothing in flight
	s.OnFeedback(transport.Feedback{PSN: env.next, EV: s.ev, At: env.now})
	if s.ev == ev0 || len(env.reroutes) != 1 || env.reroutes[0] != "plb-idle" {
		t.Fatalf("no idle move: reroutes %v", env.reroutes)
	}
	// An RTO moves the flow and suspends moves on congestion for 1-2 ms.
	s.OnRTO(nil)
	ev1 := s.ev
	env.out = []transport.OutstandingPacket{{PSN: 1}}
	for range 12 {
		round(true)
	}
	if s.ev != ev1 {
		t.Fatal("moved on congestion while suspended after an RTO")
	}
	env.now += clock.Time(2 * time.Millisecond)
	round(true)
	if s.ev == ev1 {
		t.Errorf("no move on congestion after the suspension: %d congested rounds", s.congested)
	}
}

// TestRACKWindow checks the reordering window of RFC 8985 6.2 step 4 on
// one subflow (sigma 1): min_RTT / 4 capped at SRTT once reordering has
// been seen; 0 before that in recovery or with DupThresh PSNs acknowledged
// above a hole; the multiplier grows once per DSACK round and falls back
// after 16 recoveries without DSACKs; a fixed reo_wnd ignores all that.
func TestRACKWindow(t *testing.T) {
	us := time.Microsecond
	env := newEnv()
	env.acked = map[uint32]bool{}
	p := MustDefaults("rss+rack", testEnv)
	p.RSS.Sigma = 1
	s := rackScheme{rss: newRSSConfig(*p.RSS), cfg: *p.RACK}.NewSender(env).(*rackSender)
	base := env.next
	feedback := func(psn uint32, rtt time.Duration, dup bool) {
		env.acked[psn] = true
		s.OnFeedback(transport.Feedback{PSN: psn, EV: s.subs[0].ev, RTT: rtt, Dup: dup, At: env.now})
		s.OnAcked(transport.AckedPacket{PSN: psn, SentAt: env.now.Add(-rtt), Copies: 1, Echoed: true, At: env.now})
		s.onTimer()
	}
	env.next = base + 10
	feedback(base, 8*us, false)
	if w := s.reoWnd(0); w != 2*us || s.reorderingSeen {
		t.Errorf("in order: reo_wnd %v (reordering seen %v), want min RTT / 4", w, s.reorderingSeen)
	}
	// Three PSNs acknowledged above the hole at base+1, no reordering seen
	// yet: the DupThresh rule closes the window.
	for q := base + 2; q <= base+4; q++ {
		feedback(q, 8*us, false)
	}
	if w := s.reoWnd(0); w != 0 {
		t.Errorf("3 PSNs above a hole, no reordering seen: reo_wnd %v, want 0", w)
	}
	// base+1 arrives late, never retransmitted: reordering seen, window back.
	feedback(base+1, 9*us, false)
	if w := s.reoWnd(0); !s.reorderingSeen || w != 2*us {
		t.Errorf("after a late delivery: reordering seen %v, reo_wnd %v", s.reorderingSeen, w)
	}
	// DSACKs: one increase per round (until SND.UNA passes the SND.NXT of
	// the first DSACK), however many arrive in it.
	feedback(base+2, 8*us, true)
	feedback(base+3, 8*us, true)
	if s.mult != 2 || s.reoWnd(0) != 4*us {
		t.Errorf("two DSACKs in a round: mult %d, reo_wnd %v; want 2, 4 µs", s.mult, s.reoWnd(0))
	}
	for q := base + 5; q < base+10; q++ {
		feedback(q, 8*us, false) // SND.UNA reaches base+10: the round is over
	}
	env.next = base + 20
	feedback(base+10, 8*us, true)
	if s.mult != 3 || s.persist != rackPersist {
		t.Errorf("a DSACK in the next round: mult %d persist %d, want 3, %d", s.mult, s.persist, rackPersist)
	}
	// Capped at SRTT (10 µs in the fake).
	s.minRTT.value = 80 * us
	if w := s.reoWnd(0); w != env.SRTT() {
		t.Errorf("reo_wnd %v, want capped at SRTT", w)
	}
	s.minRTT.value = 8 * us
	// 16 recoveries without DSACK bring the multiplier back to 1.
	for k := 0; k < rackPersist; k++ {
		psn := env.next
		env.next++
		s.enterRecovery(0)
		if k == 0 && s.reoWnd(0) != 6*us {
			t.Errorf("in recovery with reordering seen: reo_wnd %v, want 3 x 2 µs", s.reoWnd(0))
		}
		for q := s.rs[0].una; q != env.next; q++ {
			env.acked[q] = true
		}
		feedback(psn, 8*us, false)
	}
	if s.mult != 1 || s.rs[0].recovery {
		t.Errorf("after %d recoveries without DSACK: mult %d (in recovery %v), want 1", rackPersist, s.mult, s.rs[0].recovery)
	}
	// Before any reordering, recovery closes the window.
	fresh := rackScheme{rss: newRSSConfig(*p.RSS), cfg: *p.RACK}.NewSender(env).(*rackSender)
	fresh.minRTT.value = 8 * us
	fresh.enterRecovery(0)
	if w := fresh.reoWnd(0); w != 0 {
		t.Errorf("in recovery, no reordering seen: reo_wnd %v, want 0", w)
	}
	cfg := *p.RACK
	cfg.AssumeReordering = true
	assumed := rackScheme{rss: newRSSConfig(*p.RSS), cfg: cfg}.NewSender(env).(*rackSender)
	assumed.minRTT.value = 8 * us
	assumed.enterRecovery(0)
	if w := assumed.reoWnd(0); w != 2*us {
		t.Errorf("assume_reordering, in recovery: reo_wnd %v, want 2 µs", w)
	}
	cfg = *p.RACK
	cfg.ReoWnd = 3 * us
	fixed := rackScheme{rss: newRSSConfig(*p.RSS), cfg: cfg}.NewSender(env).(*rackSender)
	fixed.enterRecovery(0)
	if w := fixed.reoWnd(0); w != 3*us {
		t.Errorf("fixed reo_wnd: %v", w)
	}
	if s.ptoAfter() != 20*us {
		t.Errorf("PTO %v, want 2 SRTT", s.ptoAfter())
	}
	if s.StateBytes() <= s.rssSender.StateBytes() {
		t.Error("state")
	}
}

// TestMinFilter: the windowed minimum forgets a sample between 3/4 and 1
// window after it, and only as samples come.
func TestMinFilter(t *testing.T) {
	us := time.Microsecond
	f := minFilter{window: 400 * us}
	at := func(d time.Duration) clock.Time { return clock.Time(d) }
	f.add(10*us, at(0))
	f.add(50*us, at(250*us))
	if f.value != 10*us {
		t.Errorf("within the window: %v", f.value)
	}
	f.add(50*us, at(400*us)) // epoch 4: the sample of epoch 0 is gone
	if f.value != 50*us {
		t.Errorf("a window later: %v, want the longer path's 50 µs", f.value)
	}
	f.add(70*us, at(10*time.Second)) // long silence: the new sample stands alone
	if f.value != 70*us {
		t.Errorf("after a silence: %v", f.value)
	}
	f.add(5*us, at(10*time.Second+us))
	if f.value != 5*us {
		t.Errorf("a smaller sample: %v", f.value)
	}
}
