package lab

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ftlab/ftlab/internal/testlab"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/orchestrator/fabric"
	"github.com/ftlab/ftlab/switchd"
)

func TestParseLinkValues(t *testing.T) {
	for _, tt := range []struct {
		in   string
		drop float64
		err  string
	}{
		{"0.05", 0.05, ""}, {"5%", 0.05, ""}, {"1e-3", 0.001, ""}, {"0", 0, ""}, {"100%", 1, ""},
		{"1.5", 0, "out of range"}, {"-0.1", 0, "out of range"}, {"lots", 0, "not a probability"}, {"NaN", 0, "out of range"},
	} {
		got, err := ParseDrop(tt.in)
		if errText(err, tt.err) || got != tt.drop {
			t.Errorf("ParseDrop(%q) = %v, %v; want %v, %q", tt.in, got, err, tt.drop, tt.err)
		}
	}
	for _, tt := range []struct {
		in   string
		want RateChange
		err  string
	}{
		{"50Mbit", RateChange{Bps: 50 * units.Mbit}, ""}, {"50%", RateChange{Fraction: 0.5}, ""}, {"restore", RateChange{}, ""},
		{"0bit", RateChange{}, "must be above 0"}, {"0%", RateChange{}, "share"}, {"150%", RateChange{}, "share"}, {"fast", RateChange{}, "cannot parse"},
	} {
		got, err := ParseRateChange(tt.in)
		if errText(err, tt.err) || got != tt.want {
			t.Errorf("ParseRateChange(%q) = %v, %v; want %v, %q", tt.in, got, err, tt.want, tt.err)
		}
	}
	for d, want := range map[string][]topology.Side{"up": {topology.SideA}, "down": {topology.SideB}, "both": {topology.SideA, topology.SideB}} {
		if got, err := SidesOf(d); err != nil || !cmp.Equal(got, want) {
			t.Errorf("SidesOf(%q) = %v, %v", d, got, err)
		}
	}
	if _, err := SidesOf("sideways"); err == nil || !strings.Contains(err.Error(), "valid: up, down, both") {
		t.Errorf("SidesOf(sideways) = %v", err)
	}
}

// errText reports whether err fails to match want ("" = no error).
func errText(err error, want string) bool {
	if want == "" {
		return err != nil
	}
	return err == nil || !strings.Contains(err.Error(), want)
}

func TestLinkBetweenSaysWhatIsWrong(t *testing.T) {
	topo := testlab.Topology(t, "fattree-k4")
	if l, err := LinkBetween(topo, "a0-0", "e0-0"); err != nil || l.Name != "e0-0~a0-0" {
		t.Errorf("a0-0 e0-0 = %v, %v", l, err)
	}
	_, err := LinkBetween(topo, "e0-0", "zz")
	if err == nil || !strings.Contains(err.Error(), `no node "zz" (nodes: h0-0-0, `) || !strings.Contains(err.Error(), "c1-1") {
		t.Errorf("unknown node: %v; want the valid nodes listed", err)
	}
	_, err = LinkBetween(topo, "e0-0", "c0-0")
	if err == nil || err.Error() != "no link between e0-0 and c0-0 (e0-0 links to h0-0-0, h0-0-1, a0-0, a0-1)" {
		t.Errorf("unlinked: %v", err)
	}
}

func TestImpairmentRecord(t *testing.T) {
	topo := testlab.Topology(t, "fattree-k4")
	st := &State{Topology: topo}
	core, _ := LinkBetween(topo, "a0-0", "c0-0")
	edge, _ := LinkBetween(topo, "e0-0", "a0-0")
	set := func(l *topology.Link, side topology.Side, drop float64, rate uint64) {
		im := st.impairment(l, side)
		im.Drop, im.RateBps = drop, rate
		st.setImpairment(im)
	}
	set(core, topology.SideB, 0, 50*units.Mbit)
	set(edge, topology.SideA, 0.01, 0)
	set(core, topology.SideA, 0.02, 0)
	want := []Impairment{
		{Link: edge.Name, Direction: "up", From: "e0-0", To: "a0-0", Drop: 0.01},
		{Link: core.Name, Direction: "up", From: "a0-0", To: "c0-0", Drop: 0.02},
		{Link: core.Name, Direction: "down", From: "c0-0", To: "a0-0", RateBps: 50 * units.Mbit},
	}
	if diff := cmp.Diff(want, st.Impairments); diff != "" {
		t.Errorf("impairments in link order, up first (-want +got):\n%s", diff)
	}
	if got := st.EffectiveParams(core, topology.SideB).RateBps; got != 50*units.Mbit {
		t.Errorf("effective rate %d", got)
	}
	ports := []switchd.PortStats{{Switch: "c0-0", Link: core.Name, Params: core.Down}, {Switch: "a0-0", Link: core.Name, Params: core.Up}}
	st.ApplyRates(ports)
	if ports[0].Params.RateBps != 50*units.Mbit || ports[1].Params.RateBps != core.Up.RateBps {
		t.Errorf("ApplyRates: c0-0 sends at %d, a0-0 at %d", ports[0].Params.RateBps, ports[1].Params.RateBps)
	}
	set(core, topology.SideB, 0, 0) // nothing left: the record goes
	if len(st.LinkImpairments(core.Name)) != 1 || st.Impairments[0].Link != edge.Name {
		t.Errorf("after clearing %s down: %+v", core.Name, st.Impairments)
	}
	if d := (Impairment{Drop: 0.05, RateBps: 25 * units.Mbit}).Describe(); d != "drop 5%, rate 25Mbit" {
		t.Errorf("Describe = %q", d)
	}
}

// TestSetImpairment impairs links of a real shaped lab: drops are made
// (the receiving switch's corrupt counter grows under traffic), rates
// change, everything is recorded and listed, bad changes are refused
// before anything changes, and reinstalling the data plane clears them.
func TestSetImpairment(t *testing.T) {
	testlab.RequireRoot(t)
	s := newStore(t)
	ctx := context.Background()
	name := "impair"
	topo := testlab.Topology(t, "fattree-k4")
	if _, err := s.Up(ctx, name, topo, UpOptions{DataPlane: switchd.Config{Mode: switchd.ModeShaped, ConvergenceDelay: time.Millisecond}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Down(name); err != nil {
			t.Error(err)
		}
	})
	drop, half := 0.5, RateChange{Fraction: 0.5}
	ims, err := s.SetImpairment(ctx, name, "h0-0-0", "e0-0", LinkChange{Direction: "up", Drop: &drop})
	if err != nil {
		t.Fatal(err)
	}
	if len(ims) != 1 || ims[0].Drop != 0.5 || ims[0].From != "h0-0-0" {
		t.Errorf("impairments %+v", ims)
	}
	if _, err := s.SetImpairment(ctx, name, "a0-0", "c0-0", LinkChange{Rate: &half}); err != nil {
		t.Fatal(err)
	}

	// Refused, and nothing changed: drops into a host, no change at all.
	for _, c := range []LinkChange{{Direction: "down", Drop: &drop}, {}} {
		if _, err := s.SetImpairment(ctx, name, "h0-0-1", "e0-0", c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	if _, err := s.SetImpairment(ctx, name, "h0-0-1", "e0-0", LinkChange{Delay: new(time.Duration)}); !errors.Is(err, ErrNoDelay) {
		t.Errorf("delay: %v, want ErrNoDelay", err)
	}

	st, err := s.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Impairments) != 3 {
		t.Fatalf("recorded %+v, want h0-0-0 up and a0-0~c0-0 both ways", st.Impairments)
	}
	if _, err := fabric.PingAll(ctx, st.Topology, s.Namer(name)); err != nil {
		t.Fatal(err)
	}
	ports, err := s.Control(st).Stats()
	if err != nil {
		t.Fatal(err)
	}
	var corrupt, elsewhere uint64
	for _, p := range ports {
		if p.Switch == "e0-0" && p.Link == "h0-0-0~e0-0" {
			corrupt = p.Counters.DropCorrupt
		} else {
			elsewhere += p.Counters.DropCorrupt
		}
	}
	// pingall sends 15 requests from h0-0-0 and retries the missing: with
	// half of them dropped, some are.
	if got := st.Impairments[0].Dropped(ports); got != corrupt {
		t.Errorf("the impairment of %s dropped %d, the port counted %d", st.Impairments[0].Link, got, corrupt)
	}
	if corrupt == 0 || elsewhere != 0 {
		t.Errorf("corrupt drops: %d at e0-0 from h0-0-0, %d elsewhere; want some, and none elsewhere", corrupt, elsewhere)
	}

	links, err := s.Links(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]LinkView{}
	for _, l := range links {
		byName[l.Name] = l
	}
	if l := byName["a0-0~c0-0"]; l.Up.RateBps != topo.Links[0].Up.RateBps/2 || !l.Down.Impaired || l.State != "up" {
		t.Errorf("a0-0~c0-0: %+v", l)
	}
	if l := byName["h0-0-0~e0-0"]; l.Up.Drop != 0.5 || l.Down.Impaired {
		t.Errorf("h0-0-0~e0-0: %+v", l)
	}
	if len(links) != len(topo.Links) {
		t.Errorf("%d links listed, want %d", len(links), len(topo.Links))
	}

	if _, err := s.SetImpairment(ctx, name, "c0-0", "a0-0", LinkChange{Clear: true, Direction: "down"}); err != nil {
		t.Fatal(err)
	}
	if st, _ = s.Get(name); len(st.Impairments) != 2 {
		t.Errorf("after --clear of a0-0~c0-0 down: %+v", st.Impairments)
	}
	if _, err := s.Reprogram(ctx, name, st.DataPlane, nil); err != nil {
		t.Fatal(err)
	}
	if st, _ = s.Get(name); len(st.Impairments) != 0 {
		t.Errorf("a new data plane keeps the record of the old one's impairments: %+v", st.Impairments)
	}
}

// TestSetImpairmentNeedsShaped: a line-rate lab has no link rates to
// change; the error says what would.
func TestSetImpairmentNeedsShaped(t *testing.T) {
	testlab.RequireRoot(t)
	s := newStore(t)
	ctx := context.Background()
	if _, err := s.Up(ctx, "lr", testlab.Topology(t, "leafspine-4x2"), UpOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Down("lr"); err != nil {
			t.Error(err)
		}
	})
	r := RateChange{Bps: units.Mbit}
	_, err := s.SetImpairment(ctx, "lr", "l0", "s0", LinkChange{Rate: &r})
	if err == nil || !strings.Contains(err.Error(), "shaped mode") {
		t.Errorf("rate on a line-rate lab: %v", err)
	}
}
