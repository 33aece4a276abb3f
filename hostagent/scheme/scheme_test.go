package scheme

import (
	"iter"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/hostagent/wire"
	"github.com/ftlab/ftlab/internal/params"
)

func TestBitmap(t *testing.T) {
	b := newBitmap(128, 1000)
	if b.state(999) != unknown || b.state(1000) != missing || b.state(5000) != missing {
		t.Fatal("fresh bitmap states wrong")
	}
	b.mark(1000)
	b.mark(1005)
	b.mark(1127) // top of the window
	if b.state(1000) != received || b.state(1001) != missing || b.state(1127) != received {
		t.Fatal("marks not seen")
	}
	b.mark(1130) // slides by 3: 1000..1002 leave
	if b.base != 1003 || b.state(1000) != unknown || b.state(1005) != received || b.state(1128) != missing || b.state(1130) != received {
		t.Fatalf("after slide: base %d", b.base)
	}
	b.mark(1000) // below the window: ignored
	b.mark(9000) // jump: everything cleared
	if b.state(1130) != unknown || b.state(9000) != received || b.state(8999) != missing || b.stateBytes() != 20 {
		t.Fatal("after jump")
	}
}

func TestLift(t *testing.T) {
	for _, c := range []struct {
		ev   uint16
		psn  uint32
		want uint32
	}{
		{0x1234, 0x00051234, 0x00051234}, // the section's first packet
		{0x1234, 0x00051300, 0x00051234},
		{0xFFF0, 0x00060010, 0x0005FFF0}, // section crossed a 16-bit boundary
		{0xFFF0, 0x0000000F, 0xFFFFFFF0}, // and a 32-bit one
	} {
		if got := lift(c.ev, c.psn); got != c.want {
			t.Errorf("lift(%#x, %#x) = %#x, want %#x", c.ev, c.psn, got, c.want)
		}
	}
}

// nackEnv records NACKs.
type nackEnv struct{ got [][]uint32 }

func (e *nackEnv) Now() clock.Time { return 0 }
func (e *nackEnv) NACK(_ *wire.Packet, missing []uint32) {
	e.got = append(e.got, append([]uint32(nil), missing...))
}

// TestPFLDReceiver walks one subflow (sigma 4, subflow 1) through the
// cases of section IV: gaps, stopping at the first received PSN, section
// boundaries, retransmissions, and the three probe kinds.
func TestPFLDReceiver(t *testing.T) {
	const base = 1000 // flow's initial PSN, a multiple of 4
	env := &nackEnv{}
	r := &pfldReceiver{env: env, bm: newBitmap(512, base)}
	data := func(psn uint32, ev uint16, f wire.Flags) {
		r.OnData(&wire.Packet{Header: wire.Header{Type: wire.TypeData, Flags: f, SubflowBits: 2, EV: ev, PSN: psn}})
	}
	probe := func(t wire.Type, psn uint32, ev uint16) {
		r.OnProbe(&wire.Packet{Header: wire.Header{Type: t, SubflowBits: 2, EV: ev, PSN: psn}})
	}
	sec1 := uint16(1001) // subflow 1's first section starts at PSN 1001
	steps := []struct {
		name string
		do   func()
		want [][]uint32
	}{
		{"in order", func() { data(1001, sec1, 0); data(1005, sec1, 0) }, nil},
		{"one lost", func() { data(1013, sec1, 0) }, [][]uint32{{1009}}},
		{"hole below stays reported once", func() { data(1017, sec1, 0) }, nil},
		{"two lost", func() { data(1029, sec1, 0) }, [][]uint32{{1025, 1021}}},
		{"other subflows have their own order", func() { data(1004, 1000, 0); data(1006, 1002, 0) }, [][]uint32{{1000}, {1002}}},
		{"retransmission: no gap check", func() { data(1009, 0x7771, wire.FlagRetx) }, nil},
		{"tail probe: last packet lost", func() { probe(wire.TypeTail, 1033, sec1) }, [][]uint32{{1033}}},
		{"tail probe: all there", func() { probe(wire.TypeTail, 1029, sec1) }, nil},
		// Reroute at 1037: the new section's EV is 1037's low bits.
		{"new section: no look back across", func() { data(1041, 1037, 0) }, [][]uint32{{1037}}},
		{"section-end probe on the old EV", func() { probe(wire.TypeSectionEnd, 1033, sec1) }, [][]uint32{{1033}}},
		{"periodic probe", func() { probe(wire.TypePeriodic, 1049, 1037) }, [][]uint32{{1049, 1045}}},
		{"rtx probe, retransmission missing", func() { probe(wire.TypeRTX, 1021, 0x5551) }, [][]uint32{{1021}}},
		{"rtx probe, retransmission arrived", func() { probe(wire.TypeRTX, 1009, 0x7771) }, nil},
		{"EV not naming the subflow", func() { data(1061, 0x4444, 0) }, nil},
	}
	for _, s := range steps {
		env.got = nil
		s.do()
		if diff := cmp.Diff(s.want, env.got); diff != "" {
			t.Errorf("%s: NACKs (-want +got):\n%s", s.name, diff)
		}
	}
}

// fakeEnv is a transport.SenderEnv for driving sender schemes directly.
type fakeEnv struct {
	now      clock.Time
	next     uint32
	rng      *rand.Rand
	probes   []transport.OutstandingPacket // reuses the struct: PSN, EV, Copies = probe type
	reroutes []string
	acked    map[uint32]bool
	out      []transport.OutstandingPacket // what Outstanding lists
}

func (e *fakeEnv) Now() clock.Time                                    { return e.now }
func (e *fakeEnv) AfterFunc(time.Duration, func()) clock.Timer        { return nopTimer{} }
func (e *fakeEnv) Rand() *rand.Rand                                   { return e.rng }
func (e *fakeEnv) SRTT() time.Duration                                { return 10 * time.Microsecond }
func (e *fakeEnv) RTO() time.Duration                                 { return time.Millisecond }
func (e *fakeEnv) NextPSN() uint32                                    { return e.next }
func (e *fakeEnv) DeclareLost(uint32, transport.Cause) bool           { return false }
func (e *fakeEnv) Acked(psn uint32) bool                              { return e.acked[psn] }
func (e *fakeEnv) Outstanding() iter.Seq[transport.OutstandingPacket] { return slices.Values(e.out) }
func (e *fakeEnv) SendProbe(t wire.Type, ev uint16, psn uint32) {
	e.probes = append(e.probes, transport.OutstandingPacket{PSN: psn, EV: ev, Copies: int(t)})
}
func (e *fakeEnv) NoteReroute(s int, from, to uint16, reason string) {
	e.reroutes = append(e.reroutes, reason)
}

type nopTimer struct{}

func (nopTimer) Stop() bool               { return false }
func (nopTimer) Reset(time.Duration) bool { return false }

func newEnv() *fakeEnv { return &fakeEnv{next: 0x10000, rng: rand.New(rand.NewPCG(1, 2))} }

func TestRSSReroutesWorst(t *testing.T) {
	for _, c := range []struct {
		metric Metric
		want   int
	}{{MeanRTT, 2}, {ECNFraction, 1}, {MaxRTT, 3}} {
		env := newEnv()
		s := newRSSSender(env, rssConfig{RSSParams: RSSParams{Sigma: 4, Tau: 10 * time.Microsecond, Jitter: time.Microsecond}, metric: c.metric}, nil)
		before := []uint16{s.subs[0].ev, s.subs[1].ev, s.subs[2].ev, s.subs[3].ev}
		for i, ev := range before {
			if ev&3 != uint16(i) {
				t.Fatalf("initial EV %#x of subflow %d lacks its id", ev, i)
			}
		}
		us := time.Microsecond
		fb := func(psn uint32, rtt time.Duration, ce bool) {
			s.OnFeedback(transport.Feedback{PSN: psn, EV: s.subs[psn&3].ev, RTT: rtt, CE: ce, At: env.now})
		}
		// Subflow 1: mean 5, half CE. 2: mean 9. 3: mean 6 but max 11.
		// 0: no samples at all; a stale-EV sample must not count.
		fb(1, 5*us, true)
		fb(5, 5*us, false)
		fb(2, 9*us, false)
		fb(3, 1*us, false)
		fb(7, 11*us, false)
		s.OnFeedback(transport.Feedback{PSN: 0, EV: before[0] ^ 0x100, RTT: time.Second, At: env.now})
		if len(env.reroutes) != 0 {
			t.Fatal("rerouted before the deadline")
		}
		env.now = clock.Time(10 * us)
		fb(6, 9*us, false)
		for i := range s.subs {
			if moved := s.subs[i].ev != before[i]; moved != (i == c.want) {
				t.Errorf("%v: subflow %d moved=%v, want only %d to move", c.metric, i, moved, c.want)
			}
			if s.subs[i].c.n != 0 {
				t.Errorf("%v: counters of %d not reset", c.metric, i)
			}
		}
		if ev := s.subs[c.want].ev; ev&3 != uint16(c.want) {
			t.Errorf("new EV %#x lost the subflow id", ev)
		}
		if d := s.deadline.Sub(env.now); d < 10*us || d > 11*us {
			t.Errorf("next deadline in %v, want tau + jitter <= tau/10", d)
		}
	}
}

func TestPFLDSender(t *testing.T) {
	env := newEnv()
	env.next = 0x2FFFE // sections start just below a 16-bit boundary
	p := MustDefaults("rss+pfld", testEnv)
	p.RSS.Sigma, p.PFLD.Periodic = 4, 2
	cfg := *p.PFLD
	s := newRSSSender(env, newRSSConfig(*p.RSS), &cfg)
	// Initial EVs are the low bits of each subflow's first PSN.
	if diff := cmp.Diff([]uint16{0x0000, 0x0001, 0xFFFE, 0xFFFF}, []uint16{s.subs[0].ev, s.subs[1].ev, s.subs[2].ev, s.subs[3].ev}); diff != "" {
		t.Fatalf("initial EVs (-want +got):\n%s", diff)
	}
	send := func(psn, last uint32, cause transport.Cause) {
		env.next = max(env.next, psn+1)
		s.OnSent(transport.SentPacket{PSN: psn, EV: s.DataEV(psn), MsgLastPSN: last, Cause: cause})
	}
	for psn := uint32(0x2FFFE); psn < 0x30010; psn++ { // a 18-packet message
		send(psn, 0x3000F, transport.CauseNew)
	}
	var tails, periodic int
	for _, p := range env.probes {
		switch wire.Type(p.Copies) {
		case wire.TypeTail:
			tails++
			if p.PSN < 0x3000C {
				t.Errorf("tail probe for %#x: not among the last sigma PSNs", p.PSN)
			}
		case wire.TypePeriodic:
			periodic++
		}
	}
	if tails != 4 || periodic != 6 {
		t.Errorf("%d tail and %d periodic probes, want 4 and 6", tails, periodic)
	}
	// Reroute subflow 2: section-end probe on the old EV for its last PSN,
	// new EV = low bits of its next PSN.
	env.probes = nil
	old := s.subs[2].ev
	s.reroute(2, "reroute")
	if s.subs[2].ev != 0x0012 || len(env.probes) != 1 || env.probes[0].EV != old || env.probes[0].PSN != 0x3000E ||
		wire.Type(env.probes[0].Copies) != wire.TypeSectionEnd {
		t.Errorf("reroute: EV %#x, probes %+v", s.subs[2].ev, env.probes)
	}
	// A second reroute before the section carried anything changes nothing.
	s.reroute(2, "reroute")
	if len(env.reroutes) != 1 {
		t.Errorf("empty section rerouted: %v", env.reroutes)
	}
	// Retransmissions: an RTX probe on the retransmission's EV; after an
	// RTO the EV is random but keeps the subflow id.
	env.probes = nil
	ev := s.RetransmitEV(0x30001, transport.CauseRTO)
	s.OnSent(transport.SentPacket{PSN: 0x30001, EV: ev, Cause: transport.CauseRTO})
	if ev&3 != 1 || len(env.probes) != 1 || wire.Type(env.probes[0].Copies) != wire.TypeRTX || env.probes[0].EV != ev {
		t.Errorf("RTO retransmission EV %#x, probes %+v", ev, env.probes)
	}
	if s.RetransmitEV(0x30001, transport.CauseNACK) != s.subs[1].ev {
		t.Error("NACK retransmission not on the subflow's EV")
	}
}

// TestPFLDPeriodicVariants: the proactive probes of Ordered Chaos V-F as
// distinct settings. One subflow sends 20 packets of a long message, one
// every 3 µs, with a smoothed RTT of 10 µs: by count (periodic P) a probe
// follows every P-th packet whatever the time; by time (periodic_per_rtt)
// one follows the first packet at least an SRTT after the last probe, or
// after the subflow's first packet; with both, either rule sends one.
func TestPFLDPeriodicVariants(t *testing.T) {
	for _, c := range []struct {
		name   string
		kv     map[string]string
		probed []int // indexes of the packets a periodic probe follows
	}{
		{"P=4", map[string]string{"periodic": "4"}, []int{3, 7, 11, 15, 19}},
		{"P=1", map[string]string{"periodic": "1"}, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}},
		{"once per RTT", map[string]string{"periodic": "off", "periodic_per_rtt": "true"}, []int{4, 8, 12, 16}},
		{"both", map[string]string{"periodic": "6", "periodic_per_rtt": "true"}, []int{4, 8, 12, 16}},
		{"P=3 and per RTT", map[string]string{"periodic": "3", "periodic_per_rtt": "true"}, []int{2, 5, 8, 11, 14, 17}},
		{"none", map[string]string{"periodic": "off"}, nil},
	} {
		p, err := withParams("rss+pfld", c.kv)
		if err != nil {
			t.Fatal(err)
		}
		p.RSS.Sigma = 1
		env := newEnv()
		cfg := *p.PFLD
		s := newRSSSender(env, newRSSConfig(*p.RSS), &cfg)
		var got []int
		for i := 0; i < 20; i++ {
			env.now = clock.Time(i) * clock.Time(3*time.Microsecond)
			psn := env.next
			env.next++
			s.OnSent(transport.SentPacket{PSN: psn, EV: s.DataEV(psn), MsgLastPSN: psn + 1000, Cause: transport.CauseNew, At: env.now})
			for _, pr := range env.probes {
				if wire.Type(pr.Copies) == wire.TypePeriodic && pr.PSN == psn {
					got = append(got, i)
				}
			}
		}
		if diff := cmp.Diff(c.probed, got); diff != "" {
			t.Errorf("%s: packets followed by a periodic probe (-want +got):\n%s", c.name, diff)
		}
	}
}

// testEnv is the base RTT of the registry tests: the harness's simulated
// fabric (see harness.simEnv).
var testEnv = params.Env{RTT: 7500 * time.Nanosecond}

// withParams returns the transport's default blocks with key=value
// settings applied as a command line gives them.
func withParams(name string, kv map[string]string) (*Params, error) {
	p, err := Defaults(name, testEnv)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := SetParam(p, name, k, kv[k], testEnv); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// newWith is New over withParams.
func newWith(name string, kv map[string]string) (transport.Scheme, error) {
	p, err := withParams(name, kv)
	if err != nil {
		return nil, err
	}
	return New(name, p)
}

func TestRegistry(t *testing.T) {
	for _, name := range Names() {
		s, err := New(name, MustDefaults(name, testEnv))
		if err != nil || s.Name() != name {
			t.Errorf("New(%q) = %v, %v", name, s, err)
		}
	}
	s, err := newWith("rss+pfld", map[string]string{"sigma": "8", "tau": "30us", "metric": "ecn-fraction", "bitmap_bits": "1024", "periodic": "off"})
	if err != nil {
		t.Fatal(err)
	}
	ps := s.(pfldScheme)
	got := ps.cfg
	if ps.rss.Sigma != 8 || ps.rss.Tau != 30*time.Microsecond || ps.rss.Jitter != testEnv.RTT/10 ||
		ps.rss.metric != ECNFraction || got.BitmapBits != 1024 || got.Periodic != 0 {
		t.Errorf("parsed %+v %+v", ps.rss, got)
	}
	for _, bad := range []struct {
		name string
		p    map[string]string
	}{
		{"nope", nil},
		{"rss", map[string]string{"sigma": "12"}},
		{"rss", map[string]string{"sigma": "x"}},
		{"rss", map[string]string{"metric": "loss"}},
		{"rss", map[string]string{"bitmap_bits": "512"}}, // a pfld key
		{"rss+pfld", map[string]string{"bitmap_bits": "100"}},
		{"ecmp", map[string]string{"tau": "1us"}},
	} {
		if _, err := newWith(bad.name, bad.p); err == nil {
			t.Errorf("New(%q, %v) accepted", bad.name, bad.p)
		}
	}
	// Blocks given over the wire are checked as strictly as files.
	p := MustDefaults("rss", testEnv)
	p.RSS.Sigma = 12
	if _, err := New("rss", p); err == nil {
		t.Error("New accepted sigma 12 in a block")
	}
	p = MustDefaults("rss", testEnv)
	p.PFLD = &PFLDParams{}
	if _, err := New("rss", p); err == nil {
		t.Error("New accepted a block rss does not take")
	}
	if _, err := New("rss", &Params{}); err == nil {
		t.Error("New accepted rss without its block")
	}
}

func TestBlocksDeclared(t *testing.T) {
	for _, b := range Blocks {
		if err := b.CheckDefaults(testEnv); err != nil {
			t.Error(err)
		}
	}
	for _, tr := range Transports {
		for _, k := range tr.Blocks {
			if _, ok := params.Find(Blocks, k); !ok {
				t.Errorf("%s takes block %q, which is not declared", tr.Name, k)
			}
		}
		if tr.Paths == "" || tr.Recovery == "" {
			t.Errorf("%s is not documented", tr.Name)
		}
	}
}

func TestStateBytes(t *testing.T) {
	env := newEnv()
	p := MustDefaults("rss+pfld", testEnv)
	s := newRSSSender(env, newRSSConfig(*p.RSS), p.PFLD)
	r := pfldScheme{rss: newRSSConfig(*p.RSS), cfg: *p.PFLD}.NewReceiver(&nackEnv{}, &wire.Packet{})
	// 16 subflows x (EV 2 + count 2 + RTT sum 4 + last PSN 4 + counter 1)
	// + deadline 4; receiver: 512 bits + base PSN.
	if s.StateBytes() != 16*13+4 || r.StateBytes() != 68 {
		t.Errorf("state bytes: sender %d receiver %d", s.StateBytes(), r.StateBytes())
	}
}
