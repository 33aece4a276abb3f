package runner

import (
	"context"

	"github.com/ftlab/ftlab/hostagent/control"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/hostagent/wire"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/orchestrator/results"
	"github.com/ftlab/ftlab/orchestrator/scenario"
	"github.com/ftlab/ftlab/orchestrator/workload"
)

// Agents drives the transport endpoints of a lab's hosts for one run.
type Agents interface {
	// Send starts a message now, from its source host to its destination.
	Send(m workload.Message) error
	// Events delivers what the agents report, until Stop.
	Events() <-chan AgentEvent
	// Stop shuts every agent down and returns their per-flow records.
	Stop() ([]transport.FlowRecord, error)
}

// PacketCounter is implemented by Agents that report the hosts' packet
// counts (results.PacketCounts) once stopped.
type PacketCounter interface {
	Packets() *results.PacketCounts
}

// packetCountsOf reads one agent's final stats.
func packetCountsOf(st *control.Stats) results.PacketCounts {
	c := results.PacketCounts{
		DataSent: st.Conn.TxByType[wire.TypeData], DataReceived: st.Conn.RxByType[wire.TypeData],
		Trimmed:         st.Endpoint.TrimmedIn,
		ControlSent:     st.Conn.TxByType[wire.TypeACK] + st.Conn.TxByType[wire.TypeNACK],
		ControlReceived: st.Conn.RxByType[wire.TypeACK] + st.Conn.RxByType[wire.TypeNACK],
		SpuriousLate:    st.Endpoint.SpuriousRetxLate,
		HostDrops:       st.Conn.TxErrors + st.Conn.RxDropped,
	}
	for t := wire.TypeTail; t <= wire.TypeRTX; t++ {
		c.ProbesSent += st.Conn.TxByType[t]
		c.ProbesReceived += st.Conn.RxByType[t]
	}
	return c
}

// AgentEvent is one report of an agent.
type AgentEvent struct {
	Kind     EventKind
	Msg      int // the workload message it is about
	Sent     *transport.MessageRecord
	Received *transport.ReceiveRecord
	Err      error // EventError: the agent failed; the run cannot go on
}

// EventKind says what an agent reports.
type EventKind int

const (
	EventSent     EventKind = iota // the sender's last packet of Msg was acknowledged
	EventReceived                  // the receiver delivered Msg, verified
	EventError                     // the agent failed
)

// AgentStarter starts the agents of every host of a lab for one run of a
// cell.
type AgentStarter func(ctx context.Context, st *lab.State, store *lab.Store, cfg *scenario.Config, run *scenario.Run) (Agents, error)
