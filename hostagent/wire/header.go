package wire

import "fmt"

// Magic is the first halfword of every packet ("FT").
const Magic uint16 = 0x4654

// Version is the only header version this package speaks. Version 2
// added the delay and jitter words the switches accumulate.
const Version uint8 = 2

// Sizes in bytes.
const (
	CommonLen     = 36              // the header every packet starts with
	DataLen       = CommonLen + 12  // DATA header, before the payload
	AckLen        = CommonLen + 12  // a whole ACK
	NACKBaseLen   = CommonLen + 4   // a NACK before its PSN list
	ProbeLen      = CommonLen       // a whole probe
	MaxNACKPSNs   = 256             // PSNs one NACK may carry
	MaxSubflowBit = 15              // largest sfbits: sigma up to 32768
	MaxPayload    = 65535 - DataLen // payload length fits the 16-bit field
	SACKBits      = 64              // PSNs below psn covered by an ACK's sack
)

// Offsets of the words every switch on a packet's way adds to (see the
// package doc): fixed, whatever the type, so the data plane finds them at
// a constant distance from the UDP header.
const (
	DelayOff  = 28
	JitterOff = 32
)

// Type says what a packet is.
type Type uint8

// Packet types. The probe types carry no payload.
const (
	TypeData       Type = 1 // a message segment
	TypeACK        Type = 2 // acknowledges one DATA packet
	TypeNACK       Type = 3 // lists PSNs proved missing
	TypeTail       Type = 4 // probe after the last packet of a subflow in a message
	TypeSectionEnd Type = 5 // probe closing an EV section when a subflow is rerouted
	TypePeriodic   Type = 6 // proactive probe every P packets of a subflow
	TypeRTX        Type = 7 // probe sent right after a retransmission
)

var typeNames = [...]string{
	TypeData: "DATA", TypeACK: "ACK", TypeNACK: "NACK", TypeTail: "TAIL",
	TypeSectionEnd: "SECTION_END", TypePeriodic: "PERIODIC", TypeRTX: "RTX",
}

func (t Type) String() string {
	if t.Valid() {
		return typeNames[t]
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}

// Valid reports whether t is a known type.
func (t Type) Valid() bool { return t >= TypeData && t <= TypeRTX }

// IsProbe reports whether t is one of the header-only probe types.
func (t Type) IsProbe() bool { return t >= TypeTail && t <= TypeRTX }

// Flags are per-packet bits; which ones a type may carry is fixed.
type Flags uint8

// Flag bits.
const (
	FlagRetx     Flags = 0x01 // DATA: this copy is a retransmission
	FlagECE      Flags = 0x02 // ACK: the acknowledged packet arrived CE-marked
	FlagDup      Flags = 0x04 // ACK: the acknowledged copy was a duplicate
	FlagProbeACK Flags = 0x08 // ACK: answers a probe, not a DATA packet
)

// allowedFlags lists the flags each type may carry; any other bit set is
// a malformed packet.
func allowedFlags(t Type) Flags {
	switch t {
	case TypeData:
		return FlagRetx
	case TypeACK:
		return FlagECE | FlagDup | FlagProbeACK
	default:
		return 0
	}
}

// Header is the common part of every packet.
type Header struct {
	Type        Type
	Flags       Flags
	SubflowBits uint8  // log2(sigma) of the sending flow
	EV          uint16 // entropy value (UDP source port)
	Flow        uint32
	Msg         uint32
	PSN         uint32
	TSVal       uint32
	TSEcr       uint32
	// Delay is the propagation delay, in ns, of the links the packet has
	// crossed so far, which every switch adds at ingress; Jitter is the
	// sum of those links' jitter bounds. Senders send 0.
	Delay, Jitter uint32
}

// Packet is a parsed or to-be-marshaled packet. Only the fields of its type
// are meaningful; Marshal ignores the others and Parse leaves them zero.
type Packet struct {
	Header

	// DATA
	Offset  uint32
	MsgLen  uint32
	Path    PathMap // first transmissions under a PSN-to-path mapping; else 0
	Payload []byte  // on Parse, aliases the input buffer

	// ACK
	CumAck uint32
	SACK   uint64

	// NACK. On Parse the slice is reused (appended from length 0) so a
	// receiver that parses into the same Packet does not allocate.
	NACKs []uint32
}

// Len returns the marshaled size of p.
func (p *Packet) Len() int {
	switch p.Type {
	case TypeData:
		return DataLen + len(p.Payload)
	case TypeACK:
		return AckLen
	case TypeNACK:
		return NACKBaseLen + 4*len(p.NACKs)
	default:
		return CommonLen
	}
}
