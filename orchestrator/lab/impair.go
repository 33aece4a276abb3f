package lab

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/switchd"
)

// Impairment is what `ftlab link set` changed on one direction of a link
// of a lab that is up: the same changes a scenario's corrupt and degrade
// faults make (switchd.Lab.SetCorruption, SetRate), recorded in the lab's
// state so that `link show` and `stats` can say what the data plane is
// doing. A direction without any change has no Impairment.
type Impairment struct {
	Link string `json:"link"`
	// Direction is up (from the link's lower-tier end, towards the core)
	// or down; From and To name its ends.
	Direction string `json:"direction"`
	From      string `json:"from"`
	To        string `json:"to"`
	// Drop is the probability that the receiving switch drops a packet
	// at its ingress, counted as corrupt (0: none).
	Drop float64 `json:"drop,omitempty"`
	// RateBps is the rate the direction serializes at instead of the
	// topology's (0: the topology's).
	RateBps uint64 `json:"rate_bps,omitempty"`
}

func (im Impairment) empty() bool { return im.Drop == 0 && im.RateBps == 0 }

// Describe says what the impairment does, e.g. "drop 5%, rate 50Mbit".
func (im Impairment) Describe() string {
	var parts []string
	if im.Drop > 0 {
		parts = append(parts, "drop "+strconv.FormatFloat(im.Drop*100, 'g', 4, 64)+"%")
	}
	if im.RateBps > 0 {
		parts = append(parts, "rate "+units.FormatRate(im.RateBps))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// Directions of a link as `link set --direction` names them.
const (
	DirectionUp   = "up"   // from the lower-tier end (A), towards the core
	DirectionDown = "down" // towards the hosts
	DirectionBoth = "both"
)

// directionName names the direction sent from side s.
func directionName(s topology.Side) string {
	if s == topology.SideA {
		return DirectionUp
	}
	return DirectionDown
}

// SidesOf returns the link sides sending in direction d (up, down or
// both).
func SidesOf(d string) ([]topology.Side, error) {
	switch d {
	case DirectionUp:
		return []topology.Side{topology.SideA}, nil
	case DirectionDown:
		return []topology.Side{topology.SideB}, nil
	case DirectionBoth, "":
		return []topology.Side{topology.SideA, topology.SideB}, nil
	}
	return nil, fmt.Errorf("direction %q is unknown (valid: up, down, both)", d)
}

// LinkChange is one `link set`: what to change on the chosen directions
// of a link. Nil fields are left as they are.
type LinkChange struct {
	// Direction is up, down or both ("" is both).
	Direction string
	// Drop is the new drop probability, in [0, 1]; 0 ends the drops.
	Drop *float64
	// Rate is the new rate; see ParseRateChange.
	Rate *RateChange
	// Delay is the new one-way delay.
	Delay *time.Duration
	// Clear removes every impairment of the chosen directions first.
	Clear bool
}

// RateChange is a new rate for a link direction: Bps, or Fraction of the
// topology's rate; both 0 restores the topology's rate.
type RateChange struct {
	Bps      uint64
	Fraction float64
}

// ParseRateChange parses a rate as `link set --rate` takes it: a rate
// (50Mbit), a share of the topology's rate (50%), or "restore".
func ParseRateChange(s string) (RateChange, error) {
	if s == "restore" {
		return RateChange{}, nil
	}
	if num, ok := strings.CutSuffix(s, "%"); ok {
		f, err := strconv.ParseFloat(num, 64)
		if err != nil || math.IsNaN(f) || f <= 0 || f > 100 {
			return RateChange{}, fmt.Errorf("%q is not a share of the link's rate above 0%% and at most 100%%", s)
		}
		return RateChange{Fraction: f / 100}, nil
	}
	bps, err := units.ParseRate(s)
	if err != nil {
		return RateChange{}, err
	}
	if bps == 0 {
		return RateChange{}, fmt.Errorf("%q: a link's rate must be above 0 (restore puts back the topology's)", s)
	}
	return RateChange{Bps: bps}, nil
}

// ParseDrop parses a drop probability: 0.05, 5e-2 or 5%.
func ParseDrop(s string) (float64, error) {
	num, pct := strings.CutSuffix(s, "%")
	p, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a probability such as 0.05 or 5%%", s)
	}
	if pct {
		p /= 100
	}
	if math.IsNaN(p) || p < 0 || p > 1 {
		return 0, fmt.Errorf("%s is out of range: a drop probability is between 0 and 1 (100%%)", s)
	}
	return p, nil
}

// ErrNoDelay says the data plane cannot delay a link's packets: the
// per-link delay is a link parameter this ftlab does not have yet.
var ErrNoDelay = errors.New("a link delay needs the data plane's delay support (the link parameter delay), which this ftlab does not have")

// SetImpairment changes links of a lab that is up at runtime, as a
// scenario's faults do: drops at the receiving switch's ingress and the
// rate of a direction, on the directions c names of the link between
// nodes a and b. Everything is checked before anything changes; the
// result is recorded in the lab's state and returned (the link's
// impairments after the change).
func (s *Store) SetImpairment(ctx context.Context, name, a, b string, c LinkChange) ([]Impairment, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	if c.Delay != nil {
		return nil, ErrNoDelay
	}
	sides, err := SidesOf(c.Direction)
	if err != nil {
		return nil, err
	}
	st, release, err := s.lockUp(name)
	if err != nil {
		return nil, err
	}
	defer release()
	l, err := LinkBetween(st.Topology, a, b)
	if err != nil {
		return nil, fmt.Errorf("lab %q: %w", name, err)
	}
	if err := checkChange(st, l, sides, c); err != nil {
		return nil, fmt.Errorf("link %s: %w", l.Name, err)
	}
	ctl := s.Control(st)
	for _, side := range sides {
		im := st.impairment(l, side)
		next := im
		if c.Clear {
			next.Drop, next.RateBps = 0, 0
		}
		if c.Drop != nil {
			next.Drop = *c.Drop
		}
		if c.Rate != nil {
			next.RateBps = c.Rate.Bps
			if c.Rate.Fraction > 0 {
				next.RateBps = max(1, uint64(c.Rate.Fraction*float64(l.Params(side).RateBps)))
			}
			if next.RateBps == l.Params(side).RateBps {
				next.RateBps = 0 // the topology's own
			}
		}
		if next.Drop != im.Drop {
			if err := ctl.SetCorruption(l, side, next.Drop); err != nil {
				return nil, fmt.Errorf("link %s %s: %w", l.Name, next.Direction, err)
			}
		}
		if next.RateBps != im.RateBps {
			if err := ctl.SetRate(l, side, next.RateBps); err != nil {
				return nil, fmt.Errorf("link %s %s: %w", l.Name, next.Direction, err)
			}
		}
		st.setImpairment(next)
		// Record each direction as it is applied, so the record never
		// says less than the data plane does.
		if err := s.write(st); err != nil {
			return nil, err
		}
	}
	return st.LinkImpairments(l.Name), ctx.Err()
}

// lockUp takes a lab's lock and returns its state, which must be up.
func (s *Store) lockUp(name string) (*State, func(), error) {
	release, err := s.lock(name)
	if err != nil {
		return nil, nil, err
	}
	st, err := s.Get(name)
	if err == nil && st.Phase != PhaseUp {
		err = fmt.Errorf("lab %q is %s, not up", name, st.Phase)
	}
	if err != nil {
		release()
		return nil, nil, err
	}
	return st, release, nil
}

// checkChange reports every reason the change cannot be made on the lab's
// data plane, before anything is changed.
func checkChange(st *State, l *topology.Link, sides []topology.Side, c LinkChange) error {
	var errs []error
	dp := st.DataPlane
	if c.Drop != nil && *c.Drop > 0 {
		if dp.DataPlane != switchd.DataPlaneBPF {
			errs = append(errs, fmt.Errorf("--drop needs the eBPF data plane (this lab runs %s)", dp.DataPlane))
		}
		for _, side := range sides {
			rx := l.End(1 - side)
			if n, _ := st.Topology.Node(rx.Node); !n.Role.IsSwitch() {
				errs = append(errs, fmt.Errorf("--drop: the %s direction ends at host %s, and drops are made at a switch's ingress; use --direction %s",
					directionName(side), rx.Node, directionName(1-side)))
			}
		}
	}
	if c.Rate != nil && (dp.DataPlane != switchd.DataPlaneBPF || dp.Mode != switchd.ModeShaped) {
		errs = append(errs, errors.New("--rate needs the eBPF data plane in shaped mode, where links have a rate (ftlab up --mode shaped)"))
	}
	if c.Drop == nil && c.Rate == nil && !c.Clear {
		errs = append(errs, errors.New("nothing to change: give --drop, --rate, --delay or --clear"))
	}
	return errors.Join(errs...)
}

// LinkBetween returns the link between nodes a and b of t. The error
// names what is wrong: an unknown node (with the valid ones), or two nodes
// that are not linked (with the first one's neighbours).
func LinkBetween(t *topology.Topology, a, b string) (*topology.Link, error) {
	var unknown []string
	for _, n := range []string{a, b} {
		if _, ok := t.Node(n); !ok {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		return nil, unknownNodes(t, unknown)
	}
	l, _, ok := t.LinkBetween(a, b)
	if !ok {
		n, _ := t.Node(a)
		var peers []string
		for _, p := range n.Ports {
			peers = append(peers, t.Peer(p).Node)
		}
		return nil, fmt.Errorf("no link between %s and %s (%s links to %s)", a, b, a, strings.Join(peers, ", "))
	}
	return l, nil
}

// NodeOf returns node name of t; the error lists the valid names.
func NodeOf(t *topology.Topology, name string) (*topology.Node, error) {
	n, ok := t.Node(name)
	if !ok {
		return nil, unknownNodes(t, []string{name})
	}
	return n, nil
}

func unknownNodes(t *topology.Topology, unknown []string) error {
	names := make([]string, len(t.Nodes))
	for i := range t.Nodes {
		names[i] = t.Nodes[i].Name
	}
	return fmt.Errorf("no node %s (nodes: %s)", strings.Join(quoteAll(unknown), " or "), strings.Join(names, ", "))
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// impairment returns the recorded impairment of one direction of a link,
// an empty one if it has none.
func (st *State) impairment(l *topology.Link, side topology.Side) Impairment {
	dir := directionName(side)
	for _, im := range st.Impairments {
		if im.Link == l.Name && im.Direction == dir {
			return im
		}
	}
	return Impairment{Link: l.Name, Direction: dir, From: l.End(side).Node, To: l.End(1 - side).Node}
}

// setImpairment records im, replacing the direction's previous one; an
// empty one is removed. The list stays in link then direction order.
func (st *State) setImpairment(im Impairment) {
	st.Impairments = slices.DeleteFunc(st.Impairments, func(x Impairment) bool {
		return x.Link == im.Link && x.Direction == im.Direction
	})
	if !im.empty() {
		st.Impairments = append(st.Impairments, im)
	}
	order := map[string]int{}
	for i := range st.Topology.Links {
		order[st.Topology.Links[i].Name] = i
	}
	slices.SortFunc(st.Impairments, func(x, y Impairment) int {
		if d := order[x.Link] - order[y.Link]; d != 0 {
			return d
		}
		return dirRank(x.Direction) - dirRank(y.Direction)
	})
}

func dirRank(d string) int {
	if d == DirectionUp {
		return 0
	}
	return 1
}

// LinkImpairments returns the impairments of one link.
func (st *State) LinkImpairments(link string) []Impairment {
	var out []Impairment
	for _, im := range st.Impairments {
		if im.Link == link {
			out = append(out, im)
		}
	}
	return out
}

// EffectiveParams returns the parameters one direction of a link runs
// at: the topology's, with an impaired rate in place of its own.
func (st *State) EffectiveParams(l *topology.Link, side topology.Side) topology.LinkParams {
	p := *l.Params(side)
	if r := st.impairment(l, side).RateBps; r > 0 {
		p.RateBps = r
	}
	return p
}

// ApplyRates gives the ports' parameters the rates their links run at
// now, where `link set --rate` changed them, so that measurements of the
// ports (fidelity's saturated links) compare against the real rate.
func (st *State) ApplyRates(ports []switchd.PortStats) {
	if len(st.Impairments) == 0 {
		return
	}
	byName := map[string]*topology.Link{}
	for i := range st.Topology.Links {
		byName[st.Topology.Links[i].Name] = &st.Topology.Links[i]
	}
	for i := range ports {
		l := byName[ports[i].Link]
		if l == nil {
			continue
		}
		side := topology.SideA
		if l.B.Node == ports[i].Switch {
			side = topology.SideB
		}
		ports[i].Params.RateBps = st.EffectiveParams(l, side).RateBps
	}
}

// Dropped is how many packets the impairment's drops took, as the
// receiving switch port counted them (corrupt) in ports.
func (im Impairment) Dropped(ports []switchd.PortStats) uint64 {
	for _, p := range ports {
		if p.Switch == im.To && p.Link == im.Link {
			return p.Counters.DropCorrupt
		}
	}
	return 0
}
