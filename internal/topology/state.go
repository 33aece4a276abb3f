package topology

import (
	"fmt"
	"time"

	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/internal/yamldoc"
)

// dirState is one direction of a link being resolved.
type dirState struct{ rate, buffer, ecn, delay, jitter value }

// linkState is a link being resolved, with the origin of every value.
type linkState struct {
	mtu value
	dir [2]dirState // indexed by sending side: dir[SideA] is Up (A -> B)
}

// state holds every link of a topology while layers of settings are
// applied; it is written back to the Topology only if all checks pass.
type state []linkState

var bothSides = []Side{SideA, SideB}

// apply sets the values c carries on the given directions. MTU is per
// link; callers never pass an MTU with a single side.
func (ls *linkState) apply(c change, sides ...Side) {
	if c.mtu != nil {
		ls.mtu = *c.mtu
	}
	for _, s := range sides {
		d := &ls.dir[s]
		if c.rate != nil {
			d.rate = *c.rate
		}
		if c.buffer != nil {
			d.buffer = *c.buffer
		}
		if c.ecn != nil {
			d.ecn = *c.ecn
		}
		if c.delay != nil {
			d.delay = *c.delay
		}
		if c.jitter != nil {
			d.jitter = *c.jitter
		}
	}
}

func newState(links int, c change) state {
	st := make(state, links)
	for i := range st {
		st[i].apply(c, bothSides...)
	}
	return st
}

// stateOf captures the parameters of an already resolved topology.
func stateOf(t *Topology) state {
	src := &source{what: "the topology's current value"}
	st := make(state, len(t.Links))
	for i := range t.Links {
		l := &t.Links[i]
		st[i].mtu = value{uint64(l.MTU), src}
		for _, s := range bothSides {
			p := l.Params(s)
			st[i].dir[s] = dirState{value{p.RateBps, src}, value{p.BufferBytes, src}, value{p.ECNBytes, src},
				value{uint64(p.Delay), src}, value{uint64(p.Jitter), src}}
		}
	}
	return st
}

func (st state) store(t *Topology) {
	for i := range st {
		l := &t.Links[i]
		l.MTU = int(st[i].mtu.n)
		for _, s := range bothSides {
			d := st[i].dir[s]
			*l.Params(s) = LinkParams{RateBps: d.rate.n, BufferBytes: d.buffer.n, ECNBytes: d.ecn.n,
				Delay: time.Duration(d.delay.n), Jitter: time.Duration(d.jitter.n)}
		}
	}
}

// Kinds of inconsistency between two parameters of one link direction.
const (
	ecnAboveBuffer = iota
	bufferBelowMTU
)

// check finds link directions whose parameters contradict each other.
// One error is reported per pair of sources, not per link: a bad default
// would otherwise produce thousands of identical lines on a k=16 tree.
func (st state) check(t *Topology, pr *yamldoc.Problems) {
	type key struct {
		kind int
		a, b *source
	}
	type group struct {
		a, b  uint64
		count int
		first string
	}
	var order []key
	groups := map[key]*group{}
	note := func(kind int, a, b value, where string) {
		k := key{kind, a.src, b.src}
		g := groups[k]
		if g == nil {
			g = &group{a: a.n, b: b.n, first: where}
			groups[k] = g
			order = append(order, k)
		}
		g.count++
	}
	for i := range st {
		ls := &st[i]
		for _, s := range bothSides {
			d := ls.dir[s]
			if d.ecn.n > d.buffer.n {
				note(ecnAboveBuffer, d.ecn, d.buffer, t.Links[i].Direction(s))
			}
			if d.buffer.n < ls.mtu.n {
				note(bufferBelowMTU, d.buffer, ls.mtu, t.Links[i].Direction(s))
			}
		}
	}
	for _, k := range order {
		g := groups[k]
		on := "on " + g.first
		if g.count > 1 {
			on = fmt.Sprintf("on %d link directions, e.g. %s", g.count, g.first)
		}
		// Blame whichever value was applied later: it is the one that
		// broke a combination that was consistent before.
		blameA := k.a.rank >= k.b.rank || k.b.field == ""
		switch {
		case k.kind == ecnAboveBuffer && blameA:
			pr.Add(k.a.pos, k.a.field, "ecn %s exceeds the buffer %s (%s) %s; the queue could never reach the marking threshold",
				units.FormatSize(g.a), units.FormatSize(g.b), k.b.describe(), on)
		case k.kind == ecnAboveBuffer:
			pr.Add(k.b.pos, k.b.field, "buffer %s is below the ecn threshold %s (%s) %s; the queue could never reach the marking threshold",
				units.FormatSize(g.b), units.FormatSize(g.a), k.a.describe(), on)
		case blameA:
			pr.Add(k.a.pos, k.a.field, "buffer %s cannot hold one full-size packet: the mtu is %d (%s) %s",
				units.FormatSize(g.a), g.b, k.b.describe(), on)
		default:
			pr.Add(k.b.pos, k.b.field, "mtu %d does not fit in the buffer %s (%s) %s, so full-size packets would always be dropped",
				g.b, units.FormatSize(g.a), k.a.describe(), on)
		}
	}
}
