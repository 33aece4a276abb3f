package scenario

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/internal/yamldoc"
)

// Op is one thing the runner does to a link at a point in time.
type Op string

const (
	OpSetDrop     Op = "set-drop"     // drop packets sent in Direction with probability Drop
	OpClearDrop   Op = "clear-drop"   // stop dropping
	OpLinkDown    Op = "link-down"    // both directions stop carrying packets
	OpLinkUp      Op = "link-up"      // and start again
	OpSetRate     Op = "set-rate"     // serialize Direction at RateBps
	OpRestoreRate Op = "restore-rate" // back to the topology's rate, RateBps
)

// sets is 1 for operations that start a fault, 0 for those that end one.
func (o Op) sets() int {
	switch o {
	case OpClearDrop, OpLinkUp, OpRestoreRate:
		return 0
	}
	return 1
}

// Action is one step of a run's fault timeline.
type Action struct {
	At    time.Duration `json:"at_ns"`
	Fault int           `json:"fault"` // index into Run.Faults
	Op    Op            `json:"op"`
	Link  string        `json:"link"`
	// Direction is up or down for drop and rate operations, empty for
	// link-down and link-up (which act on both).
	Direction Direction `json:"direction,omitempty"`
	Drop      float64   `json:"drop,omitempty"`
	RateBps   uint64    `json:"rate_bps,omitempty"`
}

// streamFaults is the first PCG stream of fault selection; fault i uses
// streamFaults+i, so adding a fault never changes earlier selections, and
// the workload (another stream) never changes with the faults.
const streamFaults = 0x6661756c74730000 // "faults"

// forever is the end of a fault without for.
const forever = time.Duration(math.MaxInt64)

// interval is a span of time during which a fault holds a link property.
type interval struct {
	from, to time.Duration
	fault    int
}

// property is what a fault changes on a link: its drop probability or its
// rate in one direction, or its state (up or down) as a whole.
type property struct {
	what string // "drop", "rate", "state"
	link int
	side topology.Side // unused for "state"
}

// expander makes the random selections of one run and builds its
// timeline, refusing faults that change the same property of a link at
// overlapping times: their combined effect would depend on the order the
// runner applies them in.
type expander struct {
	t     *topology.Topology
	seed  uint64
	held  map[property][]interval
	pr    *yamldoc.Problems
	multi bool // more than one seed, so seed-dependent errors say which
}

// expand returns the faults with selections made and their timeline.
func (e *expander) expand(faults []Fault) ([]Fault, []Action) {
	e.held = map[property][]interval{}
	out := make([]Fault, len(faults))
	var actions []Action
	for i, f := range faults {
		f = e.select1(i, f)
		out[i] = f
		actions = append(actions, e.actions(i, f)...)
	}
	// At the same instant, restorations go first: a fault that ends when
	// another one starts on the same link must not undo it.
	slices.SortStableFunc(actions, func(a, b Action) int {
		return cmp.Or(cmp.Compare(a.At, b.At), cmp.Compare(a.Op.sets(), b.Op.sets()))
	})
	if actions == nil {
		actions = []Action{}
	}
	return out, actions
}

// spans returns the intervals a fault is active in.
func spans(f Fault) []interval {
	if f.Kind == Flap {
		out := make([]interval, f.Repeat)
		for k := range f.Repeat {
			start := f.At + time.Duration(k)*f.Every
			out[k] = interval{start, start + f.For, 0}
		}
		return out
	}
	end := forever
	if f.For > 0 {
		end = f.At + f.For
	}
	return []interval{{f.At, end, 0}}
}

// properties lists what a fault changes on a link.
func properties(f Fault, link int) []property {
	switch f.Kind {
	case Corrupt, Degrade:
		what := "drop"
		if f.Kind == Degrade {
			what = "rate"
		}
		var out []property
		for _, s := range f.Direction.Sides() {
			out = append(out, property{what, link, s})
		}
		return out
	}
	return []property{{what: "state", link: link}}
}

// conflict returns the interval of another fault that overlaps f on link.
func (e *expander) conflict(f Fault, link int) (interval, bool) {
	for _, p := range properties(f, link) {
		for _, held := range e.held[p] {
			for _, s := range spans(f) {
				if s.from < held.to && held.from < s.to {
					return held, true
				}
			}
		}
	}
	return interval{}, false
}

func (e *expander) hold(f Fault, i, link int) {
	for _, p := range properties(f, link) {
		for _, s := range spans(f) {
			s.fault = i
			e.held[p] = append(e.held[p], s)
		}
	}
}

// switchLinks lists the links of the named switches, each once, in link
// order.
func (e *expander) switchLinks(names []string) []int {
	var links []int
	for _, name := range names {
		n, _ := e.t.Node(name)
		for _, p := range n.Ports {
			links = append(links, p.Link)
		}
	}
	slices.Sort(links)
	return slices.Compact(links)
}

// select1 makes fault i's selection and records the links it holds.
func (e *expander) select1(i int, f Fault) Fault {
	r := rand.New(rand.NewPCG(e.seed, streamFaults+uint64(i)))
	if f.Kind == SwitchDown {
		pool := switchPool(&f, e.t)
		if f.Random > 0 {
			free := slices.DeleteFunc(slices.Clone(pool), func(s string) bool { return e.busy(f, e.switchLinks([]string{s})) })
			pick := e.pick(f, len(free), len(pool), r)
			chosen := make([]string, len(pick))
			for j, k := range pick {
				chosen[j] = free[k]
			}
			f.Switches = inPlanOrder(e.t, chosen)
		}
		e.claim(i, f, e.switchLinks(f.Switches), nil)
		return f
	}
	pool := linkPool(&f, e.t)
	if f.Random > 0 {
		free := slices.DeleteFunc(slices.Clone(pool), func(l int) bool { return e.busy(f, []int{l}) })
		pick := e.pick(f, len(free), len(pool), r)
		chosen := make([]int, len(pick))
		for j, k := range pick {
			chosen[j] = free[k]
		}
		slices.Sort(chosen)
		pool = chosen
	}
	var positions []yamldoc.Pos
	if f.Random == 0 && len(f.Links) > 0 {
		positions = f.at.links
	}
	e.claim(i, f, pool, positions)
	f.Links = make([]string, len(pool))
	for j, l := range pool {
		f.Links[j] = e.t.Links[l].Name
	}
	return f
}

// busy reports whether any of the links is held by an overlapping fault.
func (e *expander) busy(f Fault, links []int) bool {
	for _, l := range links {
		if _, ok := e.conflict(f, l); ok {
			return true
		}
	}
	return false
}

// pick draws f.Random distinct indexes below free: a partial
// Fisher-Yates shuffle, uniform over subsets.
func (e *expander) pick(f Fault, free, pool int, r *rand.Rand) []int {
	if f.Random > free {
		msg := fmt.Sprintf("cannot pick %d: only %d of the %d candidates are free of other faults at the same time", f.Random, free, pool)
		if e.multi {
			msg += fmt.Sprintf(" (seed %d)", e.seed)
		}
		e.pr.Add(f.at.random, yamldoc.JoinField(f.at.field, "random"), "%s", msg)
		return nil
	}
	idx := make([]int, free)
	for j := range idx {
		idx[j] = j
	}
	for j := range f.Random {
		k := j + r.IntN(free-j)
		idx[j], idx[k] = idx[k], idx[j]
	}
	return idx[:f.Random]
}

// claim records the links a fault holds, reporting explicit overlaps.
// positions locate each link of an explicit links: list.
func (e *expander) claim(i int, f Fault, links []int, positions []yamldoc.Pos) {
	for j, l := range links {
		if held, ok := e.conflict(f, l); ok {
			at, field := f.at.pos, f.at.field
			if j < len(positions) {
				at, field = positions[j], fmt.Sprintf("%s.links[%d]", f.at.field, j)
			}
			e.pr.Add(at, field, "link %s is already changed by faults[%d] from %s to %s; faults must not change the same link at the same time",
				e.t.Links[l].Name, held.fault, held.from, showEnd(held.to))
			continue
		}
		e.hold(f, i, l)
	}
}

func showEnd(d time.Duration) string {
	if d == forever {
		return "the end of the run"
	}
	return d.String()
}

// actions builds the timeline of one expanded fault.
func (e *expander) actions(i int, f Fault) []Action {
	var out []Action
	var links []int
	if f.Kind == SwitchDown {
		links = e.switchLinks(f.Switches)
	} else {
		for _, name := range f.Links {
			l, _ := linkByName(e.t, name)
			if l != nil {
				links = append(links, l.ID)
			}
		}
	}
	for _, s := range spans(f) {
		for _, id := range links {
			l := &e.t.Links[id]
			switch f.Kind {
			case Corrupt:
				for _, side := range f.Direction.Sides() {
					d := sideDirection(side)
					out = append(out, Action{At: s.from, Fault: i, Op: OpSetDrop, Link: l.Name, Direction: d, Drop: f.Drop})
					if s.to != forever {
						out = append(out, Action{At: s.to, Fault: i, Op: OpClearDrop, Link: l.Name, Direction: d})
					}
				}
			case Degrade:
				for _, side := range f.Direction.Sides() {
					d, normal := sideDirection(side), l.Params(side).RateBps
					rate := f.RateBps
					if rate == 0 {
						rate = max(uint64(f.RateFactor*float64(normal)), 1)
					}
					out = append(out, Action{At: s.from, Fault: i, Op: OpSetRate, Link: l.Name, Direction: d, RateBps: rate})
					if s.to != forever {
						out = append(out, Action{At: s.to, Fault: i, Op: OpRestoreRate, Link: l.Name, Direction: d, RateBps: normal})
					}
				}
			default: // down, flap, switch-down
				out = append(out, Action{At: s.from, Fault: i, Op: OpLinkDown, Link: l.Name})
				if s.to != forever {
					out = append(out, Action{At: s.to, Fault: i, Op: OpLinkUp, Link: l.Name})
				}
			}
		}
	}
	return out
}

// inPlanOrder sorts node names by their order in the topology.
func inPlanOrder(t *topology.Topology, names []string) []string {
	index := map[string]int{}
	for i := range t.Nodes {
		index[t.Nodes[i].Name] = i
	}
	out := slices.Clone(names)
	slices.SortFunc(out, func(a, b string) int { return cmp.Compare(index[a], index[b]) })
	return out
}

// String summarizes an action for logs: "10ms set-drop e0-0~a0-1 up 0.001".
func (a Action) String() string {
	s := fmt.Sprintf("%s %s %s", a.At, a.Op, a.Link)
	if a.Direction != "" {
		s += " " + string(a.Direction)
	}
	switch a.Op {
	case OpSetDrop:
		s += fmt.Sprintf(" %g", a.Drop)
	case OpSetRate, OpRestoreRate:
		s += " " + units.FormatRate(a.RateBps)
	}
	return s
}
