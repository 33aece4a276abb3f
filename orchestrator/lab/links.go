package lab

import (
	"context"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/orchestrator/fabric"
)

// LinkView is one link of a lab as `ftlab link show` lists it: its state
// now and what each direction runs at.
type LinkView struct {
	Name  string         `json:"name"`
	Stage topology.Stage `json:"stage"`
	A     string         `json:"a"`
	B     string         `json:"b"`
	MTU   int            `json:"mtu"`
	// State is up, failed (on purpose: ftlab link down, a fault) or down
	// (an interface is down or missing without a failure recorded).
	State string `json:"state"`
	// Up is the direction A -> B (towards the core), Down B -> A.
	Up   DirectionView `json:"up"`
	Down DirectionView `json:"down"`
}

// DirectionView is one direction of a link: the parameters it runs at
// (the topology's, with `link set` changes in place) and its impairment.
type DirectionView struct {
	From string `json:"from"`
	To   string `json:"to"`
	// RateBps is the rate it runs at now; TopologyRateBps the topology's.
	RateBps         uint64 `json:"rate_bps"`
	TopologyRateBps uint64 `json:"topology_rate_bps"`
	BufferBytes     uint64 `json:"buffer_bytes"`
	ECNBytes        uint64 `json:"ecn_bytes"`
	// DelayNs is the one-way delay it adds (none: see ErrNoDelay).
	DelayNs int64 `json:"delay_ns"`
	// Drop is the probability a packet is dropped at the receiving
	// switch's ingress.
	Drop float64 `json:"drop"`
	// Impaired says `link set` changed this direction.
	Impaired bool `json:"impaired"`
}

// Links lists every link of lab name with its state, as the kernel shows
// it now, and what each direction runs at.
func (s *Store) Links(ctx context.Context, name string) ([]LinkView, error) {
	st, err := s.Get(name)
	if err != nil {
		return nil, err
	}
	v := statusOf(st, s.Namer(name), fabric.Inspect(ctx, st.Topology, s.Namer(name), 0))
	out := make([]LinkView, len(st.Topology.Links))
	for i := range st.Topology.Links {
		l := &st.Topology.Links[i]
		out[i] = LinkView{Name: l.Name, Stage: l.Stage, A: l.A.Node, B: l.B.Node, MTU: l.MTU, State: v.Links[i].State,
			Up: st.directionView(l, topology.SideA), Down: st.directionView(l, topology.SideB)}
	}
	return out, nil
}

func (st *State) directionView(l *topology.Link, side topology.Side) DirectionView {
	p := st.EffectiveParams(l, side)
	im := st.impairment(l, side)
	return DirectionView{
		From: l.End(side).Node, To: l.End(1 - side).Node,
		RateBps: p.RateBps, TopologyRateBps: l.Params(side).RateBps, BufferBytes: p.BufferBytes, ECNBytes: p.ECNBytes,
		Drop: im.Drop, Impaired: !im.empty(),
	}
}
