package cc

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/internal/params"
)

// The flow the tests run controllers on: 100 Gbit/s, 4 KiB packets, a
// 10 us base RTT: a BDP of 125 KB, 30 packets.
const (
	mss     = 4056
	pktWire = 4056 + 40 + 42
	rtt     = 10 * time.Microsecond
)

var (
	env  = params.Env{RTT: rtt}
	flow = transport.CCFlow{MSS: mss, PacketBytes: pktWire, LineRate: 100e9, BaseRTT: rtt, MaxWindow: 1 << 20}
)

func newFlow(t testing.TB, name string, set map[string]string) transport.FlowCC {
	t.Helper()
	p := MustDefaults(name, env)
	for k, v := range set {
		if err := SetParam(p, name, k, v, env); err != nil {
			t.Fatal(err)
		}
	}
	c, err := New(name, p)
	if err != nil {
		t.Fatal(err)
	}
	return c.NewFlow(flow)
}

// acker feeds a controller ACKs of full packets, one per packet, in PSN
// order, with the cumulative ACK following.
type acker struct {
	f        transport.FlowCC
	now      clock.Time
	psn      uint32 // next PSN to acknowledge
	rtt      time.Duration
	inflight int
}

func (a *acker) ack(ce bool) {
	a.now += clock.Time(a.rtt) / 30
	a.psn++
	a.f.OnACK(transport.CCAck{At: a.now, Bytes: mss, Packets: 1, CE: ce, RTT: a.rtt, SRTT: a.rtt, MinRTT: rtt,
		Inflight: a.inflight, CumAck: a.psn, NextPSN: a.psn + uint32(a.f.Window()/mss)})
}

// round acknowledges one window, the fraction marked of its packets CE
// (evenly spread), and returns the window after it.
func (a *acker) round(marked float64) int {
	n := max(a.f.Window()/mss, 1)
	m := 0.0
	for i := range n {
		ce := false
		if want := marked * float64(i+1); want-m >= 0.999 {
			ce, m = true, m+1
		}
		a.ack(ce)
	}
	return a.f.Window()
}

func TestRegistry(t *testing.T) {
	for _, b := range Blocks {
		if err := b.CheckDefaults(env); err != nil {
			t.Errorf("block %s: %v", b.Key, err)
		}
	}
	for _, a := range Algorithms {
		c, err := New(a.Name, MustDefaults(a.Name, env))
		if err != nil {
			t.Fatalf("%s: %v", a.Name, err)
		}
		if (c == nil) != (a.Name == None) {
			t.Errorf("%s: constructor returned %v", a.Name, c)
		}
		if c != nil && c.Name() != a.Name {
			t.Errorf("%s calls itself %s", a.Name, c.Name())
		}
	}
	if _, err := New("cubic", nil); err == nil || !strings.Contains(err.Error(), `unknown congestion control "cubic"`) {
		t.Errorf("unknown name: %v", err)
	}
	p := MustDefaults("dctcp", env)
	p.Swift = MustDefaults("swift", env).Swift
	if _, err := New("dctcp", p); err == nil || !strings.Contains(err.Error(), "the swift block is not one of dctcp's (dctcp)") {
		t.Errorf("a foreign block: %v", err)
	}
	if _, err := New("swift", &Params{}); err == nil || !strings.Contains(err.Error(), "the swift block is missing") {
		t.Errorf("a missing block: %v", err)
	}
	p = MustDefaults("nscc", env)
	p.NSCC.InitialWindow = 2
	if _, err := New("nscc", p); err == nil || !strings.Contains(err.Error(), "initial_window 2 is above max_window 1.5") {
		t.Errorf("a bad combination: %v", err)
	}
	if err := SetParam(MustDefaults("swift", env), "swift", "base_target", "2rtt", env); err != nil {
		t.Error(err)
	}
	if err := SetParam(MustDefaults("swift", env), "swift", "g", "0.1", env); err == nil {
		t.Error("swift took DCTCP's g")
	}
}

// TestNoAllocation: the controllers run on every ACK; none may allocate.
func TestNoAllocation(t *testing.T) {
	for _, name := range Names()[1:] {
		a := &acker{f: newFlow(t, name, nil), rtt: rtt}
		if n := testing.AllocsPerRun(1000, func() { a.ack(a.psn%3 == 0) }); n != 0 {
			t.Errorf("%s: %.1f allocations per ACK", name, n)
		}
	}
}

// TestDCTCPAlpha: alpha converges to the fraction of marked bytes, and a
// window with marks is cut by alpha/2 once (RFC 8257 3.3, 3.4).
func TestDCTCPAlpha(t *testing.T) {
	f := newFlow(t, "dctcp", nil).(*dctcpFlow)
	a := &acker{f: f, rtt: rtt}
	for range 200 {
		w := f.cwnd
		a.round(0.25)
		if f.cwnd > w*(1-f.alpha/2)+2*mss && f.cwnd < w {
			t.Fatalf("window %v after %v: more than one cut of alpha/2 = %v", f.cwnd, w, f.alpha/2)
		}
	}
	if math.Abs(f.alpha-0.25) > 0.05 {
		t.Errorf("alpha %.3f after 200 windows a quarter marked, want 0.25", f.alpha)
	}
	// Unmarked from now on: alpha decays by (1-g) per window.
	before := f.alpha
	for range 10 {
		a.round(0)
	}
	if want := before * math.Pow(1-1.0/16, 10); math.Abs(f.alpha-want) > 0.02 {
		t.Errorf("alpha %.3f after 10 clean windows, want %.3f", f.alpha, want)
	}
}

// TestDCTCPGrowthAndLoss: slow start doubles the initial 10 packets per
// window; a loss halves once per window; a timeout leaves one packet.
func TestDCTCPGrowthAndLoss(t *testing.T) {
	f := newFlow(t, "dctcp", nil).(*dctcpFlow)
	a := &acker{f: f, rtt: rtt}
	if w := f.Window(); w != 10*mss {
		t.Fatalf("initial window %d, want 10 packets", w)
	}
	if w := a.round(0); w != 20*mss {
		t.Errorf("after one window of slow start %d, want 20 packets", w/mss)
	}
	w := f.Window()
	loss := transport.CCLoss{At: a.now, PSN: a.psn, Bytes: mss, Cause: transport.CauseNACK, Inflight: w - mss, CumAck: a.psn, NextPSN: a.psn + 20}
	f.OnLoss(loss)
	f.OnLoss(loss)
	if got := f.Window(); got != w/2 {
		t.Errorf("after two losses in a window %d, want one halving to %d", got, w/2)
	}
	f.OnLoss(transport.CCLoss{Cause: transport.CauseRTO, Bytes: mss, Inflight: 5 * mss})
	f.OnRTO(a.now, 1)
	if got := f.Window(); got != mss {
		t.Errorf("after a timeout %d, want one packet", got)
	}
}

// TestMPRDMAPerACK: +1/cwnd per unmarked ACK, -1/2 per marked one or
// lost packet; a round trip gains one packet in all (one window for all
// paths).
func TestMPRDMAPerACK(t *testing.T) {
	f := newFlow(t, "mprdma", nil).(*mprdmaFlow)
	if bdp := float64(flow.BDP()) / mss; math.Abs(f.cwnd-bdp) > 1e-9 {
		t.Fatalf("initial window %.2f packets, want one BDP, %.2f", f.cwnd, bdp)
	}
	a := &acker{f: f, rtt: rtt}
	w := f.cwnd
	a.ack(false)
	if got := f.cwnd - w; math.Abs(got-1/w) > 1e-9 {
		t.Errorf("an unmarked ACK added %.4f, want 1/cwnd = %.4f", got, 1/w)
	}
	w = f.cwnd
	a.ack(true)
	if got := w - f.cwnd; math.Abs(got-0.5) > 1e-9 {
		t.Errorf("a marked ACK took %.4f, want 1/2", got)
	}
	w = f.cwnd
	a.round(0)
	if got := f.cwnd - w; got < 0.95 || got > 1.05 {
		t.Errorf("a clean round trip added %.3f packets, want 1", got)
	}
	w = f.cwnd
	f.OnLoss(transport.CCLoss{Bytes: mss, Cause: transport.CauseNACK})
	if got := w - f.cwnd; math.Abs(got-0.5) > 1e-9 {
		t.Errorf("a loss took %.4f, want 1/2", got)
	}
	for range 1000 {
		a.ack(true)
	}
	if f.Window() != mss {
		t.Errorf("after marks only, window %d, want the minimum, one packet", f.Window())
	}
}

// TestNSCCQuadrants: the four cases of ECN by delay.
func TestNSCCQuadrants(t *testing.T) {
	target := 10 * time.Microsecond // 1rtt
	cases := []struct {
		name  string
		ce    bool
		delay time.Duration
		want  int // sign of the change over a window
	}{
		{"unmarked, short queue: proportional increase", false, 2 * time.Microsecond, +1},
		{"unmarked, long queue: fair increase", false, target + 5*time.Microsecond, +1},
		{"marked, long queue: multiplicative decrease", true, target + 20*time.Microsecond, -1},
		{"marked, short queue: nothing", true, 2 * time.Microsecond, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFlow(t, "nscc", map[string]string{"initial_window": "0.5", "no_quick_adapt": "true"}).(*nsccFlow)
			a := &acker{f: f, rtt: rtt + c.delay}
			// Let the average delay settle first, then measure two round
			// trips from a third of a BDP.
			for range 400 {
				a.ack(c.ce)
			}
			f.cwnd = f.maxWnd / 4.5
			before := f.cwnd
			for range 60 {
				a.ack(c.ce)
			}
			got := f.cwnd - before
			// Nothing but eta, added once per adjust_period.
			still := c.want == 0 && math.Abs(got) <= 2*f.eta+1
			switch {
			case c.want > 0 && got <= 2*f.eta, c.want < 0 && got >= 0, c.want == 0 && !still:
				t.Errorf("window %+.0f bytes over two round trips (from %.0f; eta %.0f)", got, before, f.eta)
			}
		})
	}
}

// TestNSCCDecreaseBounded: one multiplicative decrease per base RTT, each
// at most max_decrease.
func TestNSCCDecreaseBounded(t *testing.T) {
	f := newFlow(t, "nscc", map[string]string{"no_quick_adapt": "true"}).(*nsccFlow)
	f.avgDelay = float64(100 * time.Microsecond) // a queue far above target
	w := f.cwnd
	f.OnACK(transport.CCAck{At: 1000, Bytes: mss, CE: true, RTT: 110 * time.Microsecond})
	if got := f.cwnd / w; math.Abs(got-0.5) > 0.01 {
		t.Errorf("first decrease to %.3f of the window, want the bound 0.5", got)
	}
	w = f.cwnd
	f.OnACK(transport.CCAck{At: 1000 + clock.Time(rtt/2), Bytes: mss, CE: true, RTT: 110 * time.Microsecond})
	if f.cwnd < w {
		t.Errorf("a second decrease half a base RTT later")
	}
}

// TestNSCCQuickAdapt: after a loss the window becomes what was delivered
// in the last interval.
func TestNSCCQuickAdapt(t *testing.T) {
	f := newFlow(t, "nscc", nil).(*nsccFlow)
	a := &acker{f: f, rtt: rtt}
	a.ack(false) // starts the first interval
	for range 3 {
		a.ack(false)
	}
	a.now += clock.Time(2 * f.target) // the interval ends
	f.OnLoss(transport.CCLoss{At: a.now, Bytes: mss, Cause: transport.CauseNACK, Inflight: 20 * mss})
	if got := f.Window(); got != 3*mss {
		t.Errorf("after quick adapt %d bytes, want the 3 packets delivered", got)
	}
}

// TestSwiftTarget: flow scaling adds all of fs_range at fs_min_window and
// nothing at fs_max_window; hops add per_hop each.
func TestSwiftTarget(t *testing.T) {
	f := newFlow(t, "swift", map[string]string{"hops": "5", "per_hop": "1us"}).(*swiftFlow)
	base := 12*time.Microsecond + 5*time.Microsecond
	for _, c := range []struct {
		cwnd float64
		want time.Duration
	}{{0.1, base + rtt}, {0.01, base + rtt}, {100, base}, {1000, base}} {
		f.cwnd = c.cwnd
		if got := f.targetDelay(); got < c.want-time.Nanosecond || got > c.want+time.Nanosecond {
			t.Errorf("target at %v packets: %v, want %v", c.cwnd, got, c.want)
		}
	}
}

// TestSwiftAIMD: additive increase of ai per round trip below target; above
// it a decrease proportional to the excess, bounded by max_mdf, at most
// once per RTT; a loss cuts max_mdf; retx_reset timeouts leave min_window.
func TestSwiftAIMD(t *testing.T) {
	f := newFlow(t, "swift", nil).(*swiftFlow)
	a := &acker{f: f, rtt: rtt}
	w := f.cwnd
	a.round(0)
	if got := f.cwnd - w; got < 0.95 || got > 1.05 {
		t.Errorf("a round trip under target added %.3f packets, want ai = 1", got)
	}
	w = f.cwnd
	target := f.targetDelay()
	a.rtt = target * 2 // excess = half the delay: cut 1 - 0.8/2
	a.ack(false)
	if got := f.cwnd / w; math.Abs(got-0.6) > 0.01 {
		t.Errorf("over target the window became %.3f of itself, want 0.6", got)
	}
	w = f.cwnd
	for range 5 {
		a.ack(false) // within the same RTT
	}
	if f.cwnd != w {
		t.Errorf("decreased again within a round trip")
	}
	a.rtt = 100 * target // excess ~ all of it: bounded by max_mdf
	a.now += clock.Time(2 * a.rtt)
	a.ack(false)
	if got := f.cwnd / w; math.Abs(got-0.5) > 0.01 {
		t.Errorf("far over target the window became %.3f of itself, want the bound 0.5", got)
	}
	for i := range 5 {
		a.now += clock.Time(time.Millisecond)
		f.OnRTO(a.now, 1)
		if i < 4 && f.cwnd == f.min {
			t.Fatalf("at the minimum after %d timeouts", i+1)
		}
	}
	if f.cwnd != f.min {
		t.Errorf("after retx_reset timeouts the window is %.3f packets, want the minimum %.3f", f.cwnd, f.min)
	}
}
