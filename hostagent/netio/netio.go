package netio

import (
	"fmt"
	"net/netip"
)

// ECN is the two-bit ECN codepoint of the IP header (RFC 3168).
type ECN uint8

// Codepoints.
const (
	NotECT ECN = 0b00 // not ECN-capable
	ECT1   ECN = 0b01 // ECN-capable, codepoint 1
	ECT0   ECN = 0b10 // ECN-capable, codepoint 0: what data packets carry
	CE     ECN = 0b11 // congestion experienced: set by a switch
)

func (e ECN) String() string {
	switch e {
	case NotECT:
		return "Not-ECT"
	case ECT1:
		return "ECT(1)"
	case ECT0:
		return "ECT(0)"
	case CE:
		return "CE"
	}
	return fmt.Sprintf("ECN(%d)", uint8(e))
}

// Capable reports whether a switch may mark e with CE instead of dropping.
func (e ECN) Capable() bool { return e != NotECT }

// Datagram is one UDP payload with the metadata the transport uses.
type Datagram struct {
	// Peer is the remote host: the destination on Send, the source on
	// receive.
	Peer netip.Addr
	// EV is the entropy value: the UDP source port of the sender.
	EV uint16
	// ECN is the codepoint to send with, or the one received.
	ECN ECN
	// Payload is the UDP payload.
	Payload []byte
	// RxNs is when the datagram arrived at the host, as the kernel stamped
	// it (CLOCK_REALTIME ns; SocketConn.Timestamp); 0 when not stamped.
	RxNs int64
}

// Conn sends datagrams; see the package doc for the contract.
type Conn interface {
	// Send transmits d (d.Peer is the destination).
	Send(d Datagram) error
	// LocalAddr is this host's address, as peers see it.
	LocalAddr() netip.Addr
	// MaxPayload is the largest UDP payload that fits the path MTU.
	MaxPayload() int
}

// Receiver takes received datagrams on the event loop.
type Receiver interface {
	HandleDatagram(d Datagram)
}

// ReceiverFunc adapts a function to Receiver.
type ReceiverFunc func(d Datagram)

// HandleDatagram calls f(d).
func (f ReceiverFunc) HandleDatagram(d Datagram) { f(d) }

// IPv4UDPOverhead is the bytes an IPv4 and a UDP header add to a payload.
const IPv4UDPOverhead = 20 + 8
