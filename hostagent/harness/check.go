package harness

import (
	"fmt"
	"slices"
	"time"

	"github.com/ftlab/ftlab/hostagent/transport"
)

// CheckExactlyOnce verifies that every message of s was delivered exactly
// once, whole and verified, to the right host, and acknowledged; and that
// no endpoint saw a protocol error or a payload that failed verification.
func (r *Result) CheckExactlyOnce(s Scenario) error {
	type key struct {
		host string
		id   MessageID
	}
	got := map[key][]transport.ReceiveRecord{}
	for _, rec := range r.Received {
		k := key{rec.Host, MessageID{rec.Flow, rec.Msg}}
		got[k] = append(got[k], rec)
	}
	acked := map[MessageID]int{}
	for _, rec := range r.Sent {
		acked[MessageID{rec.Flow, rec.Msg}]++
	}
	for i, m := range s.Messages {
		id := r.IDs[i]
		recs := got[key{fmt.Sprintf("h%d", m.To), id}]
		switch {
		case len(recs) != 1:
			return fmt.Errorf("message %d (%+v) delivered %d times", i, id, len(recs))
		case recs[0].Bytes != m.Size || !recs[0].Verified:
			return fmt.Errorf("message %d: delivered %d bytes verified=%v, sent %d", i, recs[0].Bytes, recs[0].Verified, m.Size)
		case acked[id] != 1:
			return fmt.Errorf("message %d: acknowledged %d times", i, acked[id])
		}
	}
	if len(r.Received) != len(s.Messages) {
		return fmt.Errorf("%d deliveries for %d messages", len(r.Received), len(s.Messages))
	}
	for i, ep := range r.Endpoints {
		st := ep.Stats()
		if st.ProtocolErrors != 0 || st.CorruptPayload != 0 || st.MalformedTotal() != 0 {
			return fmt.Errorf("h%d: protocol errors %d, corrupt payloads %d, malformed %d", i, st.ProtocolErrors, st.CorruptPayload, st.MalformedTotal())
		}
	}
	return nil
}

// Totals sums the records of a run.
type Totals struct {
	Messages        int
	Retransmissions int
	SpuriousTx      int // spurious retransmissions, as the sender learned of them
	SpuriousRx      int // spurious retransmissions, as the receivers counted them
	RTOs            int // timer expiries (flow records)
	Reroutes        int
	NACKs           int // NACKed PSNs received by senders
	NACKsAccepted   int
	Probes          transport.ProbeCounts
	Losses          int
}

// Totals sums the run's records.
func (r *Result) Totals() Totals {
	var t Totals
	for _, m := range r.Sent {
		t.Messages++
		t.Retransmissions += m.Retransmissions
		t.SpuriousTx += m.RetxSpurious
		t.NACKs += m.NACKs
		t.NACKsAccepted += m.NACKsAccepted
		t.Probes.Tail += m.Probes.Tail
		t.Probes.SectionEnd += m.Probes.SectionEnd
		t.Probes.Periodic += m.Probes.Periodic
		t.Probes.RTX += m.Probes.RTX
		t.Losses += len(m.Losses)
	}
	for _, rec := range r.Received {
		t.SpuriousRx += rec.RetxSpurious
	}
	for _, ep := range r.Endpoints {
		t.SpuriousRx += int(ep.Stats().SpuriousRetxLate)
	}
	for _, f := range r.Flows {
		t.RTOs += f.RTOs
		t.Reroutes += f.Reroutes
	}
	return t
}

// DetectionDelays returns the detection delays of losses with the given
// cause (all causes if none given), sorted.
func (r *Result) DetectionDelays(causes ...transport.Cause) []time.Duration {
	var out []time.Duration
	for _, m := range r.Sent {
		for _, l := range m.Losses {
			if len(causes) == 0 || slices.Contains(causes, l.Cause) {
				out = append(out, time.Duration(l.DelayNs))
			}
		}
	}
	slices.Sort(out)
	return out
}
