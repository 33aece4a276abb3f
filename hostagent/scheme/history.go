package scheme

import (
	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/transport"
)

// history records each subflow's EVs over time and its packet count, for
// flow records.
type history []transport.SubflowRecord

func newHistory(evs []uint16, now clock.Time) history {
	h := make(history, len(evs))
	for i, ev := range evs {
		h[i] = transport.SubflowRecord{ID: i, EVs: []transport.EVChange{{AtNs: int64(now), EV: ev, Reason: "initial"}}}
	}
	return h
}

func (h history) change(s int, now clock.Time, ev uint16, reason string) {
	h[s].EVs = append(h[s].EVs, transport.EVChange{AtNs: int64(now), EV: ev, Reason: reason})
}

func (h history) sent(s int) { h[s].Packets++ }

// Subflows returns a copy of the history.
func (h history) Subflows() []transport.SubflowRecord {
	out := make([]transport.SubflowRecord, len(h))
	for i, r := range h {
		r.EVs = append([]transport.EVChange(nil), r.EVs...)
		out[i] = r
	}
	return out
}

// nopReceiver is the receiving side of schemes without receiver logic.
type nopReceiver struct{}

func (nopReceiver) OnData(*wirePacket)  {}
func (nopReceiver) OnProbe(*wirePacket) {}
func (nopReceiver) StateBytes() int     { return 0 }
