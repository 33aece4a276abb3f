package runner

import (
	"testing"
	"time"

	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/orchestrator/results"
	"github.com/ftlab/ftlab/orchestrator/workload"
)

// scriptedAgents hands out the events it was given, each at its offset
// from the start of the drain.
type scriptedAgents struct{ events chan AgentEvent }

func (s *scriptedAgents) Send(workload.Message) error           { return nil }
func (s *scriptedAgents) Events() <-chan AgentEvent             { return s.events }
func (s *scriptedAgents) Stop() ([]transport.FlowRecord, error) { return nil, nil }

// TestDrain: a complete run drains until every sender reported its
// message acknowledged and then the strays' time, not a fixed time; a
// report that never comes ends the drain at its limit. Each report that
// came is kept. (Only lower bounds and a bound far from the expected time
// are asserted: a loaded machine is late, never early.)
func TestDrain(t *testing.T) {
	const strays, limit = 30 * time.Millisecond, time.Second
	for _, tt := range []struct {
		name    string
		reports []time.Duration // when message i's sender reports it; < 0: never
		atLeast time.Duration
		before  time.Duration // 0: the limit is expected
	}{
		{"every report in", []time.Duration{10 * time.Millisecond, 60 * time.Millisecond}, 60*time.Millisecond + strays, limit / 2},
		{"already in", nil, strays, limit / 2},
		{"a report missing", []time.Duration{10 * time.Millisecond, -1}, limit, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			msgs := make([]workload.Message, 2)
			r := &results.Run{}
			ag := &scriptedAgents{events: make(chan AgentEvent, 4)}
			x := newExchange(r, ag, msgs)
			if tt.reports == nil {
				for _, m := range x.msgs {
					m.Sent = &transport.MessageRecord{}
				}
			}
			for i, at := range tt.reports {
				if at >= 0 {
					time.AfterFunc(at, func() {
						ag.events <- AgentEvent{Kind: EventSent, Msg: i, Sent: &transport.MessageRecord{Packets: i + 1}}
					})
				}
			}
			start := time.Now()
			x.drain(strays, limit)
			took := time.Since(start)
			if took < tt.atLeast || (tt.before > 0 && took >= tt.before) {
				t.Errorf("drained %v; want at least %v and, if every report came, well under the %v limit", took, tt.atLeast, limit)
			}
			for i, at := range tt.reports {
				if got := x.msgs[i].Sent; (at >= 0) != (got != nil) || (got != nil && got.Packets != i+1) {
					t.Errorf("message %d: report %+v, sent at %v", i, got, at)
				}
			}
		})
	}
}
