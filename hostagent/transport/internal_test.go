package transport

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ftlab/ftlab/hostagent/clock"
)

func TestPattern(t *testing.T) {
	buf := make([]byte, 100)
	fillPattern(buf, 1, 2, 0)
	for _, c := range []struct{ off, n int }{{0, 100}, {3, 10}, {8, 8}, {13, 1}, {50, 50}, {99, 1}, {7, 0}} {
		part := make([]byte, c.n)
		fillPattern(part, 1, 2, uint32(c.off))
		if diff := cmp.Diff(buf[c.off:c.off+c.n], part); diff != "" {
			t.Errorf("fill at %d+%d differs from the whole:\n%s", c.off, c.n, diff)
		}
		if !checkPattern(part, 1, 2, uint32(c.off)) {
			t.Errorf("check at %d+%d failed", c.off, c.n)
		}
	}
	bad := append([]byte(nil), buf...)
	bad[41] ^= 0x10
	if checkPattern(bad, 1, 2, 0) || checkPattern(buf[1:], 1, 2, 0) || checkPattern(buf, 1, 3, 0) || checkPattern(buf, 9, 2, 0) {
		t.Error("a flipped bit, a shifted offset or another message passed verification")
	}
}

func TestPSNSet(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	var isn uint32 = 0xFFFFFF00 // wraps during the test
	s := newPSNSet(isn)
	want := map[uint32]bool{}
	order := r.Perm(1000)
	for i, k := range order {
		psn := isn + uint32(k)
		s.add(psn)
		want[psn] = true
		if i%97 == 0 {
			for q := isn; q != isn+1000; q++ {
				if s.has(q) != want[q] {
					t.Fatalf("after %d adds: has(%d) = %v", i+1, q-isn, s.has(q))
				}
			}
		}
	}
	if s.base != isn+1000 || len(s.words) > 1 {
		t.Errorf("base %d words %d after all arrived", s.base-isn, len(s.words))
	}
	s2 := newPSNSet(10)
	for _, p := range []uint32{11, 12, 14, 75} {
		s2.add(p)
	}
	// sack(15): bit i is PSN 14-i: 14 yes, 13 no, 12 yes, 11 yes, 10 no.
	if got := s2.sack(15) & 0x1F; got != 0b01101 {
		t.Errorf("sack = %05b, want 01101", got)
	}
}

func TestRanges(t *testing.T) {
	var r ranges
	steps := []struct {
		lo, hi uint32
		ok     bool
	}{{10, 20, true}, {30, 40, true}, {20, 30, true}, {0, 5, true}, {4, 6, false}, {39, 41, false}, {5, 10, true}, {40, 40, true}}
	for _, s := range steps {
		if got := r.add(s.lo, s.hi); got != s.ok {
			t.Fatalf("add(%d,%d) = %v", s.lo, s.hi, got)
		}
	}
	if len(r) != 1 || r[0].lo != 0 || r[0].hi != 40 {
		t.Errorf("ranges %+v, want [0,40)", r)
	}
}

func TestRTTEstimator(t *testing.T) {
	e := rttEstimator{initial: time.Second, min: 10 * time.Microsecond, max: time.Millisecond}
	if e.rto() != time.Millisecond {
		t.Errorf("initial RTO %v, want clamped to max", e.rto())
	}
	for i := 0; i < 50; i++ {
		e.sample(20 * time.Microsecond)
	}
	if e.srtt != 20*time.Microsecond || e.rto() < 20*time.Microsecond || e.rto() > 25*time.Microsecond {
		t.Errorf("srtt %v rto %v after steady samples", e.srtt, e.rto())
	}
	e.backoff = 3
	if got := e.rto(); got < 160*time.Microsecond || got > 200*time.Microsecond {
		t.Errorf("rto with backoff 3 = %v", got)
	}
	e.backoff = 20
	if e.rto() != time.Millisecond {
		t.Errorf("backoff not capped: %v", e.rto())
	}
}

func TestPacer(t *testing.T) {
	p := pacer{rate: 8e9, overhead: 0} // one byte per ns
	if p.ready() != 0 {
		t.Fatal("idle pacer not ready")
	}
	p.sent(0, 1000)
	if p.ready() != 1000 {
		t.Fatalf("next slot %v, want 1000", p.ready())
	}
	p.hold()
	p.sent(1000, 1000) // on time
	p.hold()
	p.sent(2500, 1000) // 500 ns late
	s := p.report()
	if s.Gaps != 2 || s.MaxLateNs != 500 || s.IntendedNs != 2000 || s.ActualNs != 2500 || s.Accuracy != 0.8 {
		t.Errorf("pacing stats %+v", s)
	}
	if s.LateNs != 500 || s.SpanNs != 2500 || s.LostNs != 500 {
		t.Errorf("lateness %v, span %v, lost %v: want 500, 2500 and 500 (the open train ends late)", s.LateNs, s.SpanNs, s.LostNs)
	}
}

// TestPacerLoss: what a late departure costs the flow depends on what
// follows it. Within a train the pacer makes it up; the last departure's
// lateness is lost when the train ends; lateness beyond the catch-up
// bound is lost at once.
func TestPacerLoss(t *testing.T) {
	// Sizes in bytes are gaps in ns at one byte per ns (8 Gbit/s); short
	// gaps (below the catch-up bound) let a late pacer catch up, long ones
	// do not.
	const short, long = 100_000, 1_000_000
	late := clock.Time(30_000)
	tests := []struct {
		name     string
		gap      int
		run      func(p *pacer, gap int)
		wantLate float64
		wantLost float64
	}{
		{
			name: "late in a long train: made up",
			gap:  short,
			run: func(p *pacer, gap int) {
				p.sent(0, gap)
				for i := 1; i <= 10; i++ {
					at := clock.Time(i * gap)
					if i == 3 {
						at += late
					}
					p.hold()
					p.sent(at, gap)
				}
				p.idle()
			},
			wantLate: float64(late), wantLost: 0,
		},
		{
			name: "short trains: each one's end is lost",
			gap:  long,
			run: func(p *pacer, gap int) {
				for k := range 4 { // an ACK releases two packets every 10 gaps
					t0 := clock.Time(k * 10 * gap)
					p.sent(t0, gap)
					p.hold()
					p.sent(p.ready()+late, gap) // its slot: a gap, less the idle credit
					p.idle()
				}
			},
			wantLate: 4 * float64(late), wantLost: 4 * float64(late),
		},
		{
			name: "a stall beyond the catch-up bound",
			gap:  short,
			run: func(p *pacer, gap int) {
				p.sent(0, gap)
				p.hold()
				stall := clock.Time(gap) + clock.Time(paceBurst) + 2_000_000
				p.sent(stall, gap)                                         // 2 ms beyond what the pacer may catch up
				p.sent(stall+1, gap)                                       // catching up: its slot has passed
				p.sent(stall+2, gap)                                       // and again
				p.hold()                                                   // now ahead of its slot
				p.sent(stall-clock.Time(paceBurst)+clock.Time(3*gap), gap) // on its slot
				p.idle()
			},
			wantLate: float64(paceBurst) + 2_000_000, wantLost: 2_000_000,
		},
		{
			// 600 µs late, more than an idle pacer's credit but within
			// the gap: the next departure keeps its slot (400 µs later)
			// and the train its rate.
			name: "long gaps: a wake-up later than the idle credit is made up",
			gap:  long,
			run: func(p *pacer, gap int) {
				p.sent(0, gap)
				p.hold()
				p.sent(clock.Time(gap)+600_000, gap)
				if p.ready() != clock.Time(2*gap) {
					t.Errorf("after a late wake-up the next slot is %v, want %v", p.ready(), 2*gap)
				}
				for i := 2; i <= 5; i++ {
					p.sent(max(p.ready(), clock.Time(gap)+600_000), gap)
				}
				p.idle()
			},
			wantLate: 600_000, wantLost: 0,
		},
		{
			name: "window-limited, never held: nothing judged",
			gap:  short,
			run: func(p *pacer, gap int) {
				for k := range 5 {
					p.sent(clock.Time(k*7*gap), gap)
					p.idle()
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pacer{rate: 8e9}
			tt.run(&p, tt.gap)
			s := p.report()
			if s.LateNs != tt.wantLate || s.LostNs != tt.wantLost {
				t.Errorf("late %v, lost %v; want %v and %v (%+v)", s.LateNs, s.LostNs, tt.wantLate, tt.wantLost, s)
			}
		})
	}
}

func TestJSONLines(t *testing.T) {
	var b strings.Builder
	w := NewJSONLines(&b)
	if err := w.Write(MessageRecord{Kind: "message", Flow: 1, Losses: []LossRecord{{PSN: 5, Cause: CauseNACK, DelayNs: 12000}}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(FlowRecord{Kind: "flow", Subflows: []SubflowRecord{{ID: 3, EVs: []EVChange{{EV: 3, Reason: "initial"}}}}}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"cause":"nack"`) || !strings.Contains(lines[1], `"reason":"initial"`) {
		t.Errorf("JSON lines:\n%s", b.String())
	}
}
