package wire

// PSNs are 32-bit serial numbers (RFC 1982 style): a flow may wrap, and
// comparisons hold as long as the PSNs compared are less than 2^31 apart.

// SeqDiff returns a-b as a signed distance.
func SeqDiff(a, b uint32) int32 { return int32(a - b) }

// SeqLess reports whether a comes before b.
func SeqLess(a, b uint32) bool { return int32(a-b) < 0 }

// SeqLEq reports whether a comes before b or is b.
func SeqLEq(a, b uint32) bool { return int32(a-b) <= 0 }

// InitialPSN is the first PSN of a flow. Deriving it from the flow id lets
// the receiver know where the flow starts without a handshake, while flows
// between the same two hosts still start at unrelated PSNs (which matters
// because PFLD derives entropy values from PSNs).
func InitialPSN(flow uint32) uint32 {
	x := flow*0x9E3779B1 + 0x7F4A7C15
	x ^= x >> 16
	x *= 0x85EBCA6B
	x ^= x >> 13
	x *= 0xC2B2AE35
	x ^= x >> 16
	return x
}
