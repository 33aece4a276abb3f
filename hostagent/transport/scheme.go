package transport

import (
	"iter"
	"math/rand/v2"
	"time"

	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/wire"
)

// Scheme makes the per-flow policy objects of one transport scheme (ecmp,
// rps, rss, rss+pfld, ...). It is shared by all flows of an endpoint, on
// both the sending and the receiving side, so it must not hold per-flow
// state itself.
type Scheme interface {
	// Name is the scheme's name as scenarios spell it.
	Name() string
	// NewSender returns the sending-side policy of a new flow.
	NewSender(env SenderEnv) SenderScheme
	// NewReceiver returns the receiving-side policy of a flow whose first
	// packet (DATA or probe) is first.
	NewReceiver(env ReceiverEnv, first *wire.Packet) ReceiverScheme
}

// Cause says why a packet is (re)sent or was declared lost.
type Cause uint8

// Causes.
const (
	CauseNew    Cause = iota // first transmission
	CauseNACK                // the receiver proved it missing
	CauseRTO                 // the retransmission timer expired
	CauseScheme              // the scheme declared it lost (e.g. RACK)
	CauseTLP                 // resent as a tail loss probe (RFC 8985 section 7), lost or not
)

// Causes lists every cause, in order.
var Causes = []Cause{CauseNew, CauseNACK, CauseRTO, CauseScheme, CauseTLP}

var causeNames = [...]string{"new", "nack", "rto", "scheme", "tlp"}

func (c Cause) String() string {
	if int(c) < len(causeNames) {
		return causeNames[c]
	}
	return "unknown"
}

// MarshalText makes causes readable in JSON records.
func (c Cause) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// SentPacket describes a DATA transmission, after it left.
type SentPacket struct {
	PSN        uint32
	EV         uint16
	Msg        uint32
	MsgLastPSN uint32 // last PSN of the packet's message: tail detection
	Bytes      int    // payload bytes
	Cause      Cause  // CauseNew for the first copy
	At         clock.Time
}

// Feedback is an ACK of one DATA packet.
type Feedback struct {
	PSN uint32
	EV  uint16        // the EV the acknowledged copy was sent on (echoed)
	RTT time.Duration // from the echoed timestamp of that copy
	CE  bool          // the copy arrived CE-marked
	Dup bool          // the receiver already had this PSN
	At  clock.Time
}

// AckedPacket is a PSN an ACK newly acknowledged: the PSN it answers, or
// one its cumulative or selective part covered.
type AckedPacket struct {
	PSN uint32
	// SentAt is when the delivered copy left: exact for the PSN the ACK
	// answers (Echoed: its timestamp names the copy), else the latest
	// copy's time, which is ambiguous when Copies > 1.
	SentAt clock.Time
	Copies int
	Echoed bool
	At     clock.Time
}

// AckObserver is implemented by sender schemes that must hear of every PSN
// as it becomes acknowledged, however the sender learned it (RACK: RFC
// 8985 6.2 looks at every segment newly acknowledged, cumulatively or
// selectively). The engine calls OnAcked after OnFeedback, once per PSN.
type AckObserver interface {
	OnAcked(a AckedPacket)
}

// NACKInfo is one PSN of a received NACK and what the engine made of it.
type NACKInfo struct {
	PSN       uint32
	TriggerEV uint16 // EV of the packet or probe that proved it missing
	Accepted  bool   // declared lost because of this NACK
}

// LostPacket is a packet declared lost by the retransmission timer.
type LostPacket struct {
	PSN    uint32
	EV     uint16 // EV of the lost copy
	SentAt clock.Time
}

// OutstandingPacket is a packet whose latest copy is unacknowledged and
// not yet declared lost, as SenderEnv.Outstanding lists them.
type OutstandingPacket struct {
	PSN    uint32
	EV     uint16
	SentAt clock.Time
	Copies int
}

// SenderScheme is a flow's sending-side policy. The engine calls it on the
// event loop; it may call back into its SenderEnv from any hook.
type SenderScheme interface {
	// SubflowBits is log2 of the flow's subflow count, sent in headers.
	SubflowBits() uint8
	// DataEV returns the EV for the first copy of psn.
	DataEV(psn uint32) uint16
	// RetransmitEV returns the EV for a retransmission of psn.
	RetransmitEV(psn uint32, cause Cause) uint16
	// OnSent is called after every DATA transmission.
	OnSent(p SentPacket)
	// OnFeedback is called for every ACK of a DATA packet of this flow,
	// including ACKs of packets that earlier ACKs had already covered
	// (cumulatively or selectively): each is still its copy's delivery on
	// its EV.
	OnFeedback(f Feedback)
	// OnNACK is called for every PSN of every NACK of this flow.
	OnNACK(n NACKInfo)
	// OnRTO is called when the timer expires, after the packets in lost
	// were declared lost and before their retransmissions are sent.
	OnRTO(lost []LostPacket)
	// StateBytes is the size of the scheme's per-flow state as a NIC
	// would hold it (fields at their natural widths, not Go's layout).
	StateBytes() int
	// Close stops the scheme's timers.
	Close()
}

// SenderEnv is what the engine offers a SenderScheme.
type SenderEnv interface {
	Now() clock.Time
	AfterFunc(d time.Duration, f func()) clock.Timer
	// Rand is the flow's own seeded random source.
	Rand() *rand.Rand
	// SRTT is the smoothed RTT, 0 before the first sample.
	SRTT() time.Duration
	// RTO is the current retransmission timeout, backoff included.
	RTO() time.Duration
	// NextPSN is the PSN the next new DATA packet will carry.
	NextPSN() uint32
	// SendProbe queues a header-only probe of type t on ev speaking for
	// psn. Probes are low priority: they leave, in order, when no
	// retransmission or new data may go, and are dropped unsent if
	// everything they speak for was acknowledged meanwhile.
	SendProbe(t wire.Type, ev uint16, psn uint32)
	// DeclareLost queues psn for retransmission unless it is acknowledged
	// or already lost; it reports whether it did.
	DeclareLost(psn uint32, cause Cause) bool
	// NoteReroute records that the scheme moved a subflow to a new EV.
	NoteReroute(subflow int, from, to uint16, reason string)
	// Outstanding lists unacknowledged, not-lost packets, oldest copy first.
	Outstanding() iter.Seq[OutstandingPacket]
	// Acked reports whether psn, sent already, has been acknowledged
	// (cumulatively or selectively); PSNs not yet sent are not.
	Acked(psn uint32) bool
}

// ReceiverScheme is a flow's receiving-side policy.
type ReceiverScheme interface {
	// OnData is called for every verified DATA packet, duplicates and
	// retransmissions included, after the engine has recorded it.
	OnData(p *wire.Packet)
	// OnProbe is called for every probe.
	OnProbe(p *wire.Packet)
	// StateBytes is the per-flow loss-detection state as a NIC would
	// hold it.
	StateBytes() int
}

// ReceiverEnv is what the engine offers a ReceiverScheme.
type ReceiverEnv interface {
	Now() clock.Time
	// NACK tells the sender that the PSNs in missing were proved missing
	// by trigger (a DATA packet or probe of this flow).
	NACK(trigger *wire.Packet, missing []uint32)
}

// PathMapper is implemented by sender schemes that map PSNs to paths
// round-robin and tell the receiver the mapping (psnpath): the engine puts
// PathMap(psn) in the header of every first transmission; retransmissions
// carry no mapping.
type PathMapper interface {
	PathMap(psn uint32) wire.PathMap
}

// SubflowReporter is implemented by sender schemes that have subflows, to
// report each subflow's EV history and packet count in flow records.
type SubflowReporter interface {
	Subflows() []SubflowRecord
}
