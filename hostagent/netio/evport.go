package netio

import "encoding/binary"

// EV to UDP source port mapping.
//
// The EV is a 16-bit value and every value is legal, but a UDP source port
// of 0 means "no port" and some stacks and middleboxes treat it specially,
// so EV 0 is sent from EVZeroPort instead. Every other EV is its own port.
// EVZeroPort (0x8000) is chosen because it keeps the low bits of EV 0 (RSS
// and PFLD put the subflow id there) and because it is as far as possible,
// in PFLD's PSN-derived EV space, from EV 0 itself: sections 0 and 0x8000
// of a subflow are 32768 PSNs apart, never in flight together. The only
// cost is that EVs 0 and 0x8000 hash to the same path, like any hash
// collision; per-EV FIFO order, what PFLD needs, is unaffected.
//
// A receiver maps the source port back: a port other than EVZeroPort is
// the EV; for EVZeroPort the transport header's EV field decides between 0
// and 0x8000 (the header always carries the EV, and a header EV that does
// not map to the port is left for the transport to count as a mismatch).

// EVZeroPort is the source port EV 0 is sent from.
const EVZeroPort uint16 = 0x8000

// EVPort returns the UDP source port that carries ev.
func EVPort(ev uint16) uint16 {
	if ev == 0 {
		return EVZeroPort
	}
	return ev
}

// PortEV returns the EV of a datagram that arrived from UDP source port
// port with the given payload: the port itself, except that EVZeroPort is
// EV 0 when the payload's transport header says 0.
func PortEV(port uint16, payload []byte) uint16 {
	if port == EVZeroPort && len(payload) >= 8 && binary.BigEndian.Uint16(payload) == headerMagic &&
		binary.BigEndian.Uint16(payload[6:8]) == 0 {
		return 0
	}
	return port
}

// headerMagic and the offsets below are the transport header's (package
// wire); they are repeated here so netio stays below wire.
const (
	headerMagic   = 0x4654
	headerTypeOff = 3
	numTypes      = 8
)

// packetType returns the transport header type of a payload (1..7), or 0
// when the payload is not one of ours.
func packetType(p []byte) int {
	if len(p) < 4 || binary.BigEndian.Uint16(p) != headerMagic {
		return 0
	}
	if t := int(p[headerTypeOff]); t < numTypes {
		return t
	}
	return 0
}
