package harness

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/sim"
	"github.com/ftlab/ftlab/hostagent/transport"
)

// Message is one message to send.
type Message struct {
	From, To int
	Size     int
	At       time.Duration // when to queue it
	Flow     int           // messages with the same (From, To, Flow) share a flow
}

// Scenario is a network, a transport configuration and a workload.
type Scenario struct {
	Net sim.Config
	// Transport is every endpoint's configuration; Seed is offset by the
	// host index and the record callbacks are the harness's.
	Transport transport.Config
	// Setup may change paths and add filters before the run.
	Setup func(n *sim.Network)
	// Messages to send.
	Messages []Message
	// Limit stops the run at this virtual time (default 10 s).
	Limit time.Duration
}

// Result is everything a run produced.
type Result struct {
	Net       *sim.Network
	Endpoints []*transport.Endpoint
	Sent      []transport.MessageRecord // in completion order
	Received  []transport.ReceiveRecord // in delivery order
	Flows     []transport.FlowRecord    // at the end of the run
	// IDs maps Messages[i] to its (flow, msg) on the wire.
	IDs    []MessageID
	End    clock.Time
	Events uint64 // simulator events run
}

// MessageID names a message on the wire.
type MessageID struct{ Flow, Msg uint32 }

// ErrIncomplete is returned (with the partial Result) when the time limit
// passed before every message was acknowledged.
var ErrIncomplete = errors.New("harness: not every message completed")

// Run runs s to completion or its time limit.
func Run(s Scenario) (*Result, error) {
	n, err := sim.New(s.Net)
	if err != nil {
		return nil, fmt.Errorf("harness: network: %w", err)
	}
	if s.Setup != nil {
		s.Setup(n)
	}
	limit := s.Limit
	if limit == 0 {
		limit = 10 * time.Second
	}
	res := &Result{Net: n, IDs: make([]MessageID, len(s.Messages))}
	clk := n.Clock()
	for i := 0; i < n.Config().Hosts; i++ {
		cfg := s.Transport
		cfg.Seed += uint64(i) * 0x9E3779B97F4A7C15
		cfg.Name = fmt.Sprintf("h%d", i)
		cfg.OnMessageSent = func(r transport.MessageRecord) { res.Sent = append(res.Sent, r) }
		cfg.OnMessageReceived = func(r transport.ReceiveRecord) { res.Received = append(res.Received, r) }
		ep, err := transport.NewEndpoint(cfg, clk, n.Host(i))
		if err != nil {
			return nil, fmt.Errorf("harness: endpoint h%d: %w", i, err)
		}
		n.Host(i).Attach(ep)
		res.Endpoints = append(res.Endpoints, ep)
	}
	type flowKey struct{ from, to, flow int }
	flows := map[flowKey]*transport.Flow{}
	var openErr error
	for i, m := range s.Messages {
		if m.From == m.To || m.From < 0 || m.To < 0 || m.From >= len(res.Endpoints) || m.To >= len(res.Endpoints) {
			return nil, fmt.Errorf("harness: message %d from h%d to h%d", i, m.From, m.To)
		}
		clk.AfterFunc(m.At, func() {
			k := flowKey{m.From, m.To, m.Flow}
			f := flows[k]
			if f == nil {
				var err error
				if f, err = res.Endpoints[m.From].OpenFlow(n.Host(m.To).LocalAddr()); err != nil {
					openErr = errors.Join(openErr, err)
					return
				}
				flows[k] = f
			}
			id, err := f.Send(m.Size)
			if err != nil {
				openErr = errors.Join(openErr, fmt.Errorf("message %d: %w", i, err))
			}
			res.IDs[i] = MessageID{Flow: f.ID(), Msg: id}
		})
	}
	end := clock.Time(limit)
	for len(res.Sent) < len(s.Messages) && clk.Pending() > 0 {
		if !clk.Step() || clk.Now() > end {
			break
		}
	}
	res.End = clk.Now()
	res.Events = clk.Fired()
	keys := make([]flowKey, 0, len(flows))
	for k := range flows {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b flowKey) int {
		return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.to, b.to), cmp.Compare(a.flow, b.flow))
	})
	for _, k := range keys {
		res.Flows = append(res.Flows, flows[k].Record())
	}
	if openErr != nil {
		return res, fmt.Errorf("harness: %w", openErr)
	}
	if len(res.Sent) < len(s.Messages) {
		return res, fmt.Errorf("%w: %d of %d by %v", ErrIncomplete, len(res.Sent), len(s.Messages), res.End)
	}
	return res, nil
}
