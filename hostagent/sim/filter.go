package sim

// Filter sees every packet as it enters a path and reports whether to drop
// it. Filters run in the order added; the first that drops wins.
type Filter func(p *Packet) (drop bool)

// DropNth drops the nth packet (1-based) for which match is true, and no
// other. With match parsing the payload (wire.Parse) this loses exactly
// the packet a test wants: the last data packet, a retransmission, a
// probe, a NACK.
func DropNth(n int, match func(p *Packet) bool) Filter {
	seen := 0
	return func(p *Packet) bool {
		if !match(p) {
			return false
		}
		seen++
		return seen == n
	}
}

// DropAll drops every packet for which match is true.
func DropAll(match func(p *Packet) bool) Filter { return match }
