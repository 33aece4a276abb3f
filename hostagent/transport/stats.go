package transport

import "github.com/ftlab/ftlab/hostagent/wire"

// Stats are an endpoint's counters over all flows.
type Stats struct {
	DatagramsIn  uint64 `json:"datagrams_in"`
	DatagramsOut uint64 `json:"datagrams_out"`
	SendErrors   uint64 `json:"send_errors"` // the conn refused a datagram
	// Malformed counts datagrams Parse rejected, by wire.Kinds index.
	Malformed      [8]uint64 `json:"malformed"`
	CorruptPayload uint64    `json:"corrupt_payload"` // DATA that failed verification
	ProtocolErrors uint64    `json:"protocol_errors"` // parsed but inconsistent (size change, overlap, out of span)
	UnknownFlow    uint64    `json:"unknown_flow"`    // ACK/NACK for no flow of ours
	EVMismatch     uint64    `json:"ev_mismatch"`     // header EV differs from the source port
	Duplicates     uint64    `json:"duplicates"`      // DATA copies of PSNs already received
	// TrimmedIn are DATA headers whose payload a trimming switch cut;
	// each is NACKed unless its PSN is already here.
	TrimmedIn uint64 `json:"trimmed_in"`
	// SpuriousRetxLate are retransmitted copies that arrived after their
	// message was delivered (ReceiveRecords count the earlier ones).
	SpuriousRetxLate uint64 `json:"spurious_retx_late"`
	ACKsSent         uint64 `json:"acks_sent"`
	NACKsSent        uint64 `json:"nacks_sent"` // NACK datagrams
	NACKedPSNs       uint64 `json:"nacked_psns"`
	ProbesSent       uint64 `json:"probes_sent"`
	// ProbesSkipped were queued but not sent: while they waited behind
	// data, everything they speak for was acknowledged.
	ProbesSkipped uint64 `json:"probes_skipped"`
	StaleACKs     uint64 `json:"stale_acks"` // ACKs of PSNs already acknowledged
}

// MalformedTotal sums Malformed.
func (s *Stats) MalformedTotal() uint64 {
	var n uint64
	for _, v := range s.Malformed {
		n += v
	}
	return n
}

var _ = [1]struct{}{}[len(wire.Kinds)-8] // Malformed has one slot per kind
