package topology

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// dir summarizes one direction of a link for comparisons.
type dir struct {
	Rate, Buffer, ECN string
}

type linkView struct {
	Up, Down dir
	MTU      int
}

func view(t *testing.T, top *Topology, a, b string) linkView {
	t.Helper()
	l, side, ok := top.LinkBetween(a, b)
	if !ok {
		t.Fatalf("no link between %s and %s", a, b)
	}
	if side != SideA {
		t.Fatalf("%s is not the lower end of %s", a, l.Name)
	}
	d := func(p LinkParams) dir {
		v := dir{Rate: fmtRate(p.RateBps), Buffer: fmtSize(p.BufferBytes), ECN: fmtSize(p.ECNBytes)}
		return v
	}
	return linkView{Up: d(l.Up), Down: d(l.Down), MTU: l.MTU}
}

func TestPrecedence(t *testing.T) {
	def := dir{"100Mbit", "64KiB", "16KiB"}
	with := func(d dir, f func(*dir)) dir { f(&d); return d }
	rate := func(r string) func(*dir) { return func(d *dir) { d.Rate = r } }
	both := func(d dir) linkView { return linkView{Up: d, Down: d, MTU: 1500} }
	type check struct {
		a, b string
		want linkView
	}
	tests := []struct {
		name   string
		yaml   string
		checks []check
	}{
		{
			name: "defaults",
			yaml: "",
			checks: []check{
				{"h0-0-0", "e0-0", both(def)},
				{"a0-1", "c1-0", both(def)},
			},
		},
		{
			name: "links sets every link",
			yaml: "links: {rate: 50Mbit, buffer: 128KiB, ecn: off, mtu: 9000}\n",
			checks: []check{
				{"h0-0-0", "e0-0", linkView{Up: dir{"50Mbit", "128KiB", "0B"}, Down: dir{"50Mbit", "128KiB", "0B"}, MTU: 9000}},
				{"a3-1", "c1-1", linkView{Up: dir{"50Mbit", "128KiB", "0B"}, Down: dir{"50Mbit", "128KiB", "0B"}, MTU: 9000}},
			},
		},
		{
			name: "stage beats links, other fields inherited",
			yaml: "links: {rate: 50Mbit, buffer: 32KiB}\nstages:\n  edge-agg: {rate: 20Mbit}\n  host-edge: {mtu: 4200}\n",
			checks: []check{
				{"e0-0", "a0-1", both(dir{"20Mbit", "32KiB", "16KiB"})},
				{"h0-0-0", "e0-0", linkView{Up: dir{"50Mbit", "32KiB", "16KiB"}, Down: dir{"50Mbit", "32KiB", "16KiB"}, MTU: 4200}},
				{"a0-0", "c0-0", both(dir{"50Mbit", "32KiB", "16KiB"})},
			},
		},
		{
			name: "switch beats stage, on all its links",
			yaml: "stages:\n  agg-core: {rate: 50Mbit}\nswitches:\n  a0-1: {rate: 25Mbit}\n",
			checks: []check{
				{"a0-1", "c1-0", both(with(def, rate("25Mbit")))},
				{"a0-1", "c1-1", both(with(def, rate("25Mbit")))},
				{"e0-0", "a0-1", both(with(def, rate("25Mbit")))},
				{"e0-1", "a0-1", both(with(def, rate("25Mbit")))},
				{"a0-0", "c0-0", both(with(def, rate("50Mbit")))},
				{"a1-1", "c1-0", both(with(def, rate("50Mbit")))},
			},
		},
		{
			name: "later switch in the file wins on a shared link",
			yaml: "switches:\n  c1-0: {rate: 30Mbit}\n  a0-1: {rate: 25Mbit}\n",
			checks: []check{
				{"a0-1", "c1-0", both(with(def, rate("25Mbit")))},
				{"a1-1", "c1-0", both(with(def, rate("30Mbit")))},
			},
		},
		{
			name: "later switch in the file wins, reversed",
			yaml: "switches:\n  a0-1: {rate: 25Mbit}\n  c1-0: {rate: 30Mbit}\n",
			checks: []check{
				{"a0-1", "c1-0", both(with(def, rate("30Mbit")))},
				{"a0-1", "c1-1", both(with(def, rate("25Mbit")))},
			},
		},
		{
			name: "between override beats switch",
			yaml: "switches:\n  a0-1: {rate: 25Mbit}\noverrides:\n  - between: [a0-1, e0-0]\n    rate: 10Mbit\n",
			checks: []check{
				{"e0-0", "a0-1", both(with(def, rate("10Mbit")))},
				{"e0-1", "a0-1", both(with(def, rate("25Mbit")))},
			},
		},
		{
			name: "from/to sets the upward direction only",
			yaml: "overrides:\n  - from: a0-1\n    to: c1-0\n    buffer: 32KiB\n",
			checks: []check{
				{"a0-1", "c1-0", linkView{Up: dir{"100Mbit", "32KiB", "16KiB"}, Down: def, MTU: 1500}},
			},
		},
		{
			name: "from/to sets the downward direction only",
			yaml: "overrides:\n  - from: c1-0\n    to: a0-1\n    rate: 1Mbit\n",
			checks: []check{
				{"a0-1", "c1-0", linkView{Up: def, Down: dir{"1Mbit", "64KiB", "16KiB"}, MTU: 1500}},
			},
		},
		{
			name: "later override wins, field by field",
			yaml: "overrides:\n  - between: [e0-0, a0-1]\n    rate: 10Mbit\n    buffer: 128KiB\n  - between: [e0-0, a0-1]\n    rate: 20Mbit\n  - from: a0-1\n    to: e0-0\n    rate: 5Mbit\n",
			checks: []check{
				{"e0-0", "a0-1", linkView{Up: dir{"20Mbit", "128KiB", "16KiB"}, Down: dir{"5Mbit", "128KiB", "16KiB"}, MTU: 1500}},
			},
		},
		{
			name: "override on a host link",
			yaml: "overrides:\n  - between: [h1-1-1, e1-1]\n    rate: 1Gbit\n    mtu: 9000\n",
			checks: []check{
				{"h1-1-1", "e1-1", linkView{Up: with(def, rate("1Gbit")), Down: with(def, rate("1Gbit")), MTU: 9000}},
				{"h1-1-0", "e1-1", both(def)},
			},
		},
		{
			name: "an override may fix what a lower level would break",
			yaml: "links: {buffer: 8KiB, ecn: 4KiB}\nstages:\n  agg-core: {ecn: 32KiB, buffer: 64KiB}\n",
			checks: []check{
				{"a0-0", "c0-0", both(dir{"100Mbit", "64KiB", "32KiB"})},
				{"e0-0", "a0-0", both(dir{"100Mbit", "8KiB", "4KiB"})},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top, err := Parse("prec.yaml", []byte("kind: fattree\nk: 4\n"+tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range tt.checks {
				if diff := cmp.Diff(c.want, view(t, top, c.a, c.b)); diff != "" {
					t.Errorf("%s~%s mismatch (-want +got):\n%s", c.a, c.b, diff)
				}
			}
			checkInvariants(t, top)
		})
	}
}

// TestDelayPrecedence: delay and jitter layer like every other link
// parameter (links < stages < switches < overrides, per direction with
// from/to), and default to none.
func TestDelayPrecedence(t *testing.T) {
	type dj struct{ Delay, Jitter time.Duration }
	spec := `kind: fattree
k: 4
links: {delay: 10us}
stages:
  agg-core: {delay: 1ms, jitter: 100us}
switches:
  a0-1: {delay: 2ms}
overrides:
  - between: [e0-0, a0-0]
    delay: 3ms
  - from: c1-0
    to: a1-1
    delay: 4ms
    jitter: 0s
`
	top, err := Parse("delay.yaml", []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		a, b     string
		up, down dj
	}{
		{"h0-0-0", "e0-0", dj{10 * time.Microsecond, 0}, dj{10 * time.Microsecond, 0}},
		{"a0-0", "c0-0", dj{time.Millisecond, 100 * time.Microsecond}, dj{time.Millisecond, 100 * time.Microsecond}},
		{"a0-1", "c1-0", dj{2 * time.Millisecond, 100 * time.Microsecond}, dj{2 * time.Millisecond, 100 * time.Microsecond}},
		{"e0-1", "a0-1", dj{2 * time.Millisecond, 0}, dj{2 * time.Millisecond, 0}},
		{"e0-0", "a0-0", dj{3 * time.Millisecond, 0}, dj{3 * time.Millisecond, 0}},
		{"a1-1", "c1-0", dj{time.Millisecond, 100 * time.Microsecond}, dj{4 * time.Millisecond, 0}},
	} {
		l, side, ok := top.LinkBetween(c.a, c.b)
		if !ok || side != SideA {
			t.Fatalf("no link from %s up to %s", c.a, c.b)
		}
		got := [2]dj{{l.Up.Delay, l.Up.Jitter}, {l.Down.Delay, l.Down.Jitter}}
		if diff := cmp.Diff([2]dj{c.up, c.down}, got); diff != "" {
			t.Errorf("%s: (-want +got):\n%s", l.Name, diff)
		}
	}
	def, err := NewFatTree(4)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range def.Links {
		if l.Up.Delay != 0 || l.Down.Jitter != 0 {
			t.Fatalf("%s has delay %v, jitter %v by default", l.Name, l.Up.Delay, l.Down.Jitter)
		}
	}
}
