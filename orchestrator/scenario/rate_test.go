package scenario

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ftlab/ftlab/internal/units"
)

// asymmetric has a quarter-rate aggregation switch, so scaling must keep
// two different rates apart.
const asymmetric = `topology:
  kind: fattree
  k: 4
  links: {rate: 100Mbit}
  switches:
    a0-1: {rate: 25Mbit}
workload: {kind: permutation}
`

func rates(s *Scenario) (full, slow uint64) {
	t := s.Cells[0].Config.Topo()
	full = t.FullRate()
	slow = full
	for _, l := range t.Links {
		slow = min(slow, l.Up.RateBps, l.Down.RateBps)
	}
	return full, slow
}

func TestRateScalesTheFabric(t *testing.T) {
	s := mustParse(t, asymmetric+"rate: 20Mbit\n", nil)
	full, slow := rates(s)
	if full != 20*units.Mbit || slow != 5*units.Mbit {
		t.Errorf("rate: 20Mbit gives links of %d and %d bit/s, want 20M and 5M", full, slow)
	}
	want := &RateInfo{FullBps: 20 * units.Mbit, TopologyBps: 100 * units.Mbit, Source: "scenario"}
	if d := cmp.Diff(want, s.Cells[0].Config.Rate); d != "" {
		t.Errorf("Rate (-want +got):\n%s", d)
	}
	// 1 MiB alone on a 20 Mbit/s path takes over 419 ms (at the
	// topology's 100 Mbit/s, 84 ms).
	if b := s.Cells[0].Runs[0].Bound; b == nil || b.CCT < 419*time.Millisecond {
		t.Errorf("CCT bound does not use the scaled rate: %+v", b)
	}
	if s.NeedsRate() {
		t.Error("a fixed rate needs no calibration")
	}
}

func TestRateAuto(t *testing.T) {
	s := mustParse(t, asymmetric+"rate: auto\n", nil)
	if !s.NeedsRate() {
		t.Fatal("rate: auto without a calibrated rate must need one")
	}
	if full, _ := rates(s); full != 100*units.Mbit {
		t.Errorf("uncalibrated auto changed the rates: full %d", full)
	}

	s, err := ParseWith("s.yaml", []byte(asymmetric+"rate: auto\n"), Options{Rate: 8 * units.Mbit, RateSource: "calibration"})
	if err != nil {
		t.Fatal(err)
	}
	if s.NeedsRate() {
		t.Error("a calibrated rate still needs one")
	}
	full, slow := rates(s)
	if full != 8*units.Mbit || slow != 2*units.Mbit {
		t.Errorf("calibrated 8Mbit gives links of %d and %d bit/s, want 8M and 2M", full, slow)
	}
	want := &RateInfo{Auto: true, FullBps: 8 * units.Mbit, TopologyBps: 100 * units.Mbit, Source: "calibration"}
	if d := cmp.Diff(want, s.Cells[0].Config.Rate); d != "" {
		t.Errorf("Rate (-want +got):\n%s", d)
	}
	if got, want := s.Cells[0].Config.Rate.Describe(), "8Mbit (rate: auto, from calibration; the topology's 100Mbit)"; got != want {
		t.Errorf("Describe() = %q, want %q", got, want)
	}
}

func TestRateOptionOverridesTheFile(t *testing.T) {
	s, err := ParseWith("s.yaml", []byte(minimal+"rate: 50Mbit\n"), Options{Rate: 10 * units.Mbit, RateSource: "--rate"})
	if err != nil {
		t.Fatal(err)
	}
	if full, _ := rates(s); full != 10*units.Mbit {
		t.Errorf("--rate 10Mbit gives %d bit/s", full)
	}
	if src := s.Cells[0].Config.Rate.Source; src != "--rate" {
		t.Errorf("source %q, want --rate", src)
	}
}

func TestRateErrors(t *testing.T) {
	for _, tt := range []struct{ name, src, want string }{
		{"unparseable", minimal + "rate: fast\n", `s.yaml:3:7: rate: `},
		{"zero", minimal + "rate: 0Mbit\n", "s.yaml:3:7: rate: must be greater than 0"},
		{"absolute degrade with auto", minimal + "rate: auto\nfaults:\n  - {kind: degrade, random: 1, rate: 10Mbit}\n",
			"faults[0].rate: with rate: auto a degraded link's rate must be a fraction"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse(t, tt.src, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
	// A fraction is fine with auto.
	mustParse(t, minimal+"rate: auto\nfaults:\n  - {kind: degrade, random: 1, rate: 25%}\n", nil)
}

// TestRTTMultiples: timing parameters written as multiples of the base
// RTT follow the rate.
func TestRTTMultiples(t *testing.T) {
	src := minimal + "transport: rss\nrss: {tau: 3rtt, jitter: 0.5rtt}\n"
	fast := mustParse(t, src, nil).Cells[0].Config
	slow, err := ParseWith("s.yaml", []byte(src), Options{Rate: 10 * units.Mbit})
	if err != nil {
		t.Fatal(err)
	}
	sc := slow.Cells[0].Config
	if fast.RSS.Tau != 3*fast.BaseRTT || fast.RSS.Jitter != fast.BaseRTT/2 {
		t.Errorf("tau %v jitter %v, want 3 and 0.5 x %v", fast.RSS.Tau, fast.RSS.Jitter, fast.BaseRTT)
	}
	// 10x slower links: the serialization part of the RTT grows 10x.
	if sc.BaseRTT <= 3*fast.BaseRTT || sc.RSS.Tau != 3*sc.BaseRTT {
		t.Errorf("at 10 Mbit/s: base RTT %v (100 Mbit/s: %v), tau %v", sc.BaseRTT, fast.BaseRTT, sc.RSS.Tau)
	}
	for _, tt := range []struct{ src, want string }{
		{minimal + "transport: rss\nrss: {tau: xrtt}\n", `rss.tau: expected a positive multiple of the base RTT such as 2rtt, found "xrtt"`},
		{minimal + "transport: rss\nrss: {tau: -1rtt}\n", "rss.tau: expected a positive multiple"},
		{minimal + "host: {window: 2rtt}\n", "host.window: "},
	} {
		if _, err := parse(t, tt.src, nil); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %q", tt.src, err, tt.want)
		}
	}
}

// TestTimeDilation: a fabric run 10x slower than its topology says keeps
// the topology's ratios: durations the file writes in absolute time (a
// transport's, a fault's) stretch 10x, multiples of the base RTT follow
// the emulated RTT, and the regime says both.
func TestTimeDilation(t *testing.T) {
	src := minimal + "transport: rss\nrss: {tau: 3ms, jitter: 0.1rtt}\nfaults:\n  - {kind: down, links: [e0-0~a0-0], at: 10ms, for: 5ms}\n"
	fast := mustParse(t, src, nil).Cells[0].Config
	slow, err := ParseWith("s.yaml", []byte(src), Options{Rate: 10 * units.Mbit})
	if err != nil {
		t.Fatal(err)
	}
	sc := slow.Cells[0].Config
	if fast.Regime.Dilation != 1 || sc.Regime.Dilation != 10 {
		t.Fatalf("dilation %v at the topology's rate, %v at a tenth of it", fast.Regime.Dilation, sc.Regime.Dilation)
	}
	if fast.RSS.Tau != 3*time.Millisecond || sc.RSS.Tau != 30*time.Millisecond {
		t.Errorf("tau %v, dilated %v; want 3ms and 30ms", fast.RSS.Tau, sc.RSS.Tau)
	}
	if sc.RSS.Jitter != sc.BaseRTT/10 {
		t.Errorf("jitter %v: a multiple of the emulated RTT %v is not stretched again", sc.RSS.Jitter, sc.BaseRTT)
	}
	if f := sc.Faults[0]; f.At != 100*time.Millisecond || f.For != 50*time.Millisecond {
		t.Errorf("fault at %v for %v, want 100ms for 50ms", f.At, f.For)
	}
	// The topology's BDP is the same whatever the emulated rate; the
	// emulated one grows as processing weighs less.
	if d := sc.Regime.TopologyBDP - fast.Regime.TopologyBDP; d > 1e-9 || d < -1e-9 {
		t.Errorf("topology BDP %v at 10 Mbit/s, %v at 100 Mbit/s", sc.Regime.TopologyBDP, fast.Regime.TopologyBDP)
	}
	if sc.Regime.ProcessingShare >= fast.Regime.ProcessingShare || sc.Regime.TopologyRateBps != 100*units.Mbit || sc.Regime.EmulatedRateBps != 10*units.Mbit {
		t.Errorf("regime %+v", sc.Regime)
	}
	// A fault dilated past the timeout says why.
	_, err = ParseWith("s.yaml", []byte(src+"timeout: 90ms\n"), Options{Rate: 10 * units.Mbit})
	if err == nil || !strings.Contains(err.Error(), "time dilated 10x") {
		t.Errorf("dilated fault after the timeout: %v", err)
	}
}

// TestMaxRTT: the maximum unloaded RTT serializes each hop at its own
// link's rate. With a quarter-rate aggregation switch the slowest path
// crosses two of its links (up through it, or down through it, never both:
// pod 0 does not reach pod 0 through the core), each costing four hops of
// the full rate; with every link at one rate it is the base RTT.
func TestMaxRTT(t *testing.T) {
	sym := mustParse(t, minimal, nil).Cells[0].Config
	if sym.MaxRTT != sym.BaseRTT {
		t.Errorf("symmetric fabric: max RTT %v, base RTT %v: want equal", sym.MaxRTT, sym.BaseRTT)
	}
	asym := mustParse(t, asymmetric, nil).Cells[0].Config
	// 12 full-rate hop times of (1514 + 90) B at 100 Mbit/s, plus 12 x 150 µs.
	want := time.Duration(12*(1514+90)*8*10) + 12*perHopProcessing
	if asym.BaseRTT != sym.BaseRTT || asym.MaxRTT != want {
		t.Errorf("a0-1 at 25 Mbit/s: base RTT %v (want %v), max RTT %v (want %v)", asym.BaseRTT, sym.BaseRTT, asym.MaxRTT, want)
	}
	leaf := mustParse(t, "topology: {kind: leafspine, leaves: 4, spines: 2, hosts_per_leaf: 2, links: {rate: 100Mbit}}\nworkload: {kind: permutation}\n", nil).Cells[0].Config
	if leaf.MaxRTT != leaf.BaseRTT || leaf.BaseRTT >= sym.BaseRTT {
		t.Errorf("leaf-spine: max RTT %v, base RTT %v (4 hops: below the fat tree's %v)", leaf.MaxRTT, leaf.BaseRTT, sym.BaseRTT)
	}
}

// TestBaseRTTIncludesDelay: link delays count twice (out and back) per
// stage and direction, at their longest; the regime's RTTs and BDPs take
// them in, and running the fabric slower stretches them with the rest.
func TestBaseRTTIncludesDelay(t *testing.T) {
	const topo = `topology:
  kind: fattree
  k: 4
  links: {rate: 100Mbit, delay: 1ms}
  overrides:
    - from: a0-0
      to: c0-0
      delay: 3ms
workload: {kind: permutation}
`
	s := mustParse(t, topo, nil)
	c := s.Cells[0].Config
	// 2569.92 us without delays (TestDefaults); the longest path has
	// 1 ms on every link but a0-0 -> c0-0's 3 ms: (6 + 2) ms each way.
	if want := 2569920*time.Nanosecond + 16*time.Millisecond; c.BaseRTT != want || c.MaxRTT != want {
		t.Errorf("base RTT %v, max RTT %v, want %v", c.BaseRTT, c.MaxRTT, want)
	}
	if r := c.Regime; r.EmulatedRTT != c.BaseRTT || r.TopologyRTT != 769920*time.Nanosecond+16*time.Millisecond {
		t.Errorf("regime RTTs %v emulated, %v topology", r.EmulatedRTT, r.TopologyRTT)
	}
	if w := c.Wire(); w.Propagation != time.Millisecond {
		t.Errorf("the bound's propagation %v, want the shortest link's 1ms", w.Propagation)
	}
	// At a quarter of the rate, delays are 4x: time dilation.
	slow := mustParse(t, topo+"rate: 25Mbit\n", nil).Cells[0].Config
	if got := slow.Regime; got.Dilation != 4 || got.TopologyRTT != c.Regime.TopologyRTT {
		t.Errorf("dilated: dilation %v, topology RTT %v (want 4 and %v)", got.Dilation, got.TopologyRTT, c.Regime.TopologyRTT)
	}
	if want := 4*(769920*time.Nanosecond+16*time.Millisecond) + 1800*time.Microsecond; slow.BaseRTT != want {
		t.Errorf("dilated base RTT %v, want %v", slow.BaseRTT, want)
	}
}
