package scenario

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/internal/yamldoc"
	"gopkg.in/yaml.v3"
)

// Fault is one entry of the faults: timeline, resolved: link names are
// canonical ("<lower tier>~<upper tier>") and defaults are filled in. In a
// Run, Links (or Switches) name exactly the links (switches) affected,
// random choices included; Random, Stage and Layer then record how they
// were chosen.
type Fault struct {
	Kind FaultKind `json:"kind"`
	// At is when the fault starts, from the start of the run.
	At time.Duration `json:"at_ns"`
	// For is how long it lasts; 0 until the end of the run. For a flap,
	// how long the links stay down each time.
	For time.Duration `json:"for_ns,omitempty"`
	// Repeat and Every: a flap goes down Repeat times, Every apart.
	Repeat int           `json:"repeat,omitempty"`
	Every  time.Duration `json:"every_ns,omitempty"`
	// Links, Stage and Random select links; Switches, Layer and Random
	// select switches (switch-down).
	Links    []string       `json:"links,omitempty"`
	Stage    topology.Stage `json:"stage,omitempty"`
	Switches []string       `json:"switches,omitempty"`
	Layer    topology.Role  `json:"layer,omitempty"`
	Random   int            `json:"random,omitempty"`
	// Direction of the links a corrupt or degrade fault applies to.
	Direction Direction `json:"direction,omitempty"`
	// Drop is the probability that a corrupt link drops a packet.
	Drop float64 `json:"drop,omitempty"`
	// RateBps is the rate a degraded link runs at, or, when 0, RateFactor
	// times its normal rate.
	RateBps    uint64  `json:"rate_bps,omitempty"`
	RateFactor float64 `json:"rate_factor,omitempty"`

	at faultPos
}

// faultPos locates a fault's parts for errors found when it is expanded.
type faultPos struct {
	field  string // "faults[2]"
	pos    yamldoc.Pos
	links  []yamldoc.Pos
	random yamldoc.Pos
}

// faultFields are the keys of a fault, in documentation order.
var faultFields = []string{"kind", "at", "for", "repeat", "every", "links", "stage", "switches", "layer", "random", "direction", "drop", "rate"}

// faultKind is one kind of fault: the options it takes besides those every
// fault has (kind, at, for, random), how it decodes what it does, and how
// it decodes what it applies to.
type faultKind struct {
	kind    FaultKind
	options []string
	effect  func(d *faultDecoder, f *Fault)
	targets func(d *faultDecoder, f *Fault)
}

// faultKinds is the registry of fault kinds, in FaultKinds order.
var faultKinds = []faultKind{
	{Corrupt, []string{"links", "stage", "direction", "drop"}, func(d *faultDecoder, f *Fault) { d.direction(f); d.drop(f) }, (*faultDecoder).links},
	{LinkDown, []string{"links", "stage"}, nil, (*faultDecoder).links},
	{Flap, []string{"links", "stage", "repeat", "every"}, (*faultDecoder).flap, (*faultDecoder).links},
	{Degrade, []string{"links", "stage", "direction", "rate"}, func(d *faultDecoder, f *Fault) { d.direction(f); d.rate(f) }, (*faultDecoder).links},
	{SwitchDown, []string{"switches", "layer"}, nil, (*faultDecoder).switches},
}

// faultKindOf returns the registry entry of kind k.
func faultKindOf(k FaultKind) (faultKind, bool) {
	i := slices.IndexFunc(faultKinds, func(fk faultKind) bool { return fk.kind == k })
	if i < 0 {
		return faultKind{}, false
	}
	return faultKinds[i], true
}

// faultKindsTaking lists the kinds that take an option; nil for the
// options every fault has.
func faultKindsTaking(option string) []FaultKind {
	var out []FaultKind
	for _, fk := range faultKinds {
		if slices.Contains(fk.options, option) {
			out = append(out, fk.kind)
		}
	}
	return out
}

const wantFault = "a fault: a mapping with kind (corrupt, down, flap, degrade, switch-down), at, and what it applies to"

// faults decodes the faults: list. t may be nil when the topology did not
// resolve; names are then not checked.
func (l *loader) faults(n *yaml.Node, top *yamldoc.Walker, t *topology.Topology, fc faultContext, pr *yamldoc.Problems) []Fault {
	out := []Fault{}
	if n == nil {
		return out
	}
	top.Sequence(n, "faults", "a list of faults, each starting with - kind:", func(i int, item *yaml.Node) {
		f, ok := l.fault(item, fmt.Sprintf("faults[%d]", i), t, fc, pr)
		if ok {
			out = append(out, f)
		}
	})
	return out
}

// faultContext is what fault decoding needs to know of the cell.
type faultContext struct {
	// timeout is the run's; a fault at or after it never happens.
	timeout time.Duration
	// autoRate: the cell says rate: auto, so link rates are not known yet
	// and a degraded rate must be a fraction.
	autoRate bool
	// dilation stretches the times written (at, for, every), which are
	// the network's, when the fabric runs slower than its topology says
	// (Regime.Dilation); 0 or 1 leaves them as written.
	dilation float64
}

// faultDecoder decodes one entry of faults.
type faultDecoder struct {
	*entry
	t *topology.Topology
	faultContext
}

// time decodes a fault's time key, in the network's time: dilated.
func (d *faultDecoder) time(key string) (time.Duration, bool) {
	v, ok := d.duration(key)
	if ok && d.dilation > 0 && d.dilation != 1 {
		v = time.Duration(float64(v) * d.dilation)
	}
	return v, ok
}

// fault decodes one entry of faults: its kind, then what every fault has
// (when), what its kind does, and what it applies to.
func (l *loader) fault(n *yaml.Node, field string, t *topology.Topology, fc faultContext, pr *yamldoc.Problems) (Fault, bool) {
	before := pr.Len()
	e, ok := newEntry(n, field, wantFault, faultFields, pr)
	defer e.close()
	f := Fault{at: faultPos{field: field, pos: e.w.Pos()}}
	if !ok {
		return f, false
	}
	d := &faultDecoder{entry: e, t: t, faultContext: fc}
	fk, ok := d.kind(&f)
	if !ok {
		return f, false
	}
	onlyFor(e, faultFields, faultKindsTaking, f.Kind, "fault")
	d.timing(&f)
	if fk.effect != nil {
		fk.effect(d, &f)
	}
	d.random(&f)
	fk.targets(d, &f)
	return f, pr.Len() == before && e.clean()
}

// kind decodes kind:, which says how to decode the rest.
func (d *faultDecoder) kind(f *Fault) (faultKind, bool) {
	s, ok := d.scalar("kind", "a fault kind such as corrupt")
	switch {
	case ok:
		f.Kind = FaultKind(s)
		fk, known := faultKindOf(f.Kind)
		if !known {
			d.problem("kind", "%v", oneOf("fault kind", f.Kind, FaultKinds))
		}
		return fk, known
	case !d.has("kind"):
		d.missing("kind", "missing (valid: %s)", faultKindNames())
	}
	return faultKind{}, false
}

// timing decodes at: and for:.
func (d *faultDecoder) timing(f *Fault) {
	if v, ok := d.time("at"); ok {
		f.At = v
		if f.At >= d.timeout {
			dilated := ""
			if d.dilation > 0 && d.dilation != 1 {
				dilated = fmt.Sprintf(" (time dilated %gx: the fabric runs that much slower than its topology)", d.dilation)
			}
			d.problem("at", "%s is not before the run's timeout %s%s; the fault would never happen", v, d.timeout, dilated)
		}
	}
	if v, ok := d.time("for"); ok {
		if v <= 0 {
			d.problem("for", "must be longer than 0s; leave it out to last until the end of the run")
		}
		f.For = v
	}
}

// flap decodes a flap's for (which it needs), repeat and every.
func (d *faultDecoder) flap(f *Fault) {
	if !d.has("for") {
		d.missing("for", "missing; a flap needs for: how long the links stay down each time")
	}
	f.Repeat = 1
	if r, ok := d.integer("repeat", "a number of flaps such as 3"); ok {
		if r < 1 || r > 10000 {
			d.problem("repeat", "%d is out of range; repeat must be from 1 to 10000", r)
		} else {
			f.Repeat = r
		}
	}
	f.Every = 2 * f.For
	if v, ok := d.time("every"); ok {
		f.Every = v
		if f.For > 0 && v <= f.For {
			d.problem("every", "%s is not longer than for %s: the links must come up before they go down again", v, f.For)
		}
	}
}

// direction decodes which directions of the links a fault acts on.
func (d *faultDecoder) direction(f *Fault) {
	f.Direction = Both
	if s, ok := d.scalar("direction", "up, down or both"); ok {
		f.Direction = Direction(s)
		if err := oneOf("direction", f.Direction, Directions); err != nil {
			d.problem("direction", "%v", err)
		}
	}
}

// drop decodes a corrupt fault's drop probability, which it needs.
func (d *faultDecoder) drop(f *Fault) {
	s, ok := d.scalar("drop", "a probability such as 1e-3 or 0.1%")
	if !ok {
		if !d.has("drop") {
			d.missing("drop", "missing; a corrupt fault needs drop: the probability that a packet is lost, e.g. 1e-3")
		}
		return
	}
	p, err := parseFraction(s)
	switch {
	case err != nil:
		d.problem("drop", "%v", err)
	case p <= 0 || p > 1:
		d.problem("drop", "%s is out of range; drop is a probability above 0 and at most 1 (or 100%%)", s)
	}
	f.Drop = p
}

// rate decodes a degrade fault's rate, which it needs: a rate, or a
// fraction of the link's.
func (d *faultDecoder) rate(f *Fault) {
	s, ok := d.scalar("rate", "a rate such as 25Mbit or a fraction of the link's rate such as 25%")
	if !ok {
		if !d.has("rate") {
			d.missing("rate", "missing; a degrade fault needs rate: the new rate (25Mbit) or a fraction of the current one (25%%)")
		}
		return
	}
	if strings.HasSuffix(strings.TrimSpace(s), "%") {
		v, err := parseFraction(s)
		switch {
		case err != nil:
			d.problem("rate", "%v", err)
		case v <= 0 || v >= 1:
			d.problem("rate", "%s is out of range; a degraded link runs at more than 0%% and less than 100%% of its rate", s)
		}
		f.RateFactor = v
		return
	}
	switch v, err := units.ParseRate(s); {
	case err != nil:
		d.problem("rate", "%v; or a fraction of the link's rate such as 25%%", err)
	case v == 0:
		d.problem("rate", "must be greater than 0; to take links down use kind: down")
	case d.autoRate:
		d.problem("rate", "with rate: auto a degraded link's rate must be a fraction of its rate, such as 25%%: link rates are known only after calibration")
	default:
		f.RateBps = v
	}
}

// random decodes how many of the selected links or switches to pick.
func (d *faultDecoder) random(f *Fault) {
	if !d.has("random") {
		return
	}
	f.at.random = d.w.Val("random")
	if r, ok := d.integer("random", "a number of links or switches to pick at random"); ok {
		if r < 1 {
			d.problem("random", "%d is out of range; pick at least 1", r)
		} else {
			f.Random = r
		}
	}
}

func faultKindNames() string { return joinNames(FaultKinds) }

// joinNames lists names for "(valid: ...)".
func joinNames[T ~string](vs []T) string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = string(v)
	}
	return strings.Join(names, ", ")
}
