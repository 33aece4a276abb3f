package wire

// PathMap is the path field of a DATA header: the round-robin PSN-to-path
// mapping the packet was sent under, for receivers that check packet order
// per path (PSN-PATH). PSN p of a mapping with n active paths shares its
// path with p-n, p-2n, ... back to the mapping's first PSN (FPSN); a
// receiver that sees p while p-n is missing knows p-n was lost, provided
// p-n >= FPSN (before FPSN the PSNs went out under another mapping).
//
// Bits 15..11 hold n (1..MaxMapPaths), bits 10..0 the low 11 bits of FPSN.
// Zero means no mapping: retransmissions and schemes that do not map PSNs
// to paths, which is why the field could take over what was a reserved
// halfword without changing any packet those schemes send.
type PathMap uint16

// Path-map limits.
const (
	MaxMapPaths = 31    // active paths a PathMap can describe
	mapFPSNBits = 11    // FPSN bits carried
	mapFPSNMask = 0x7FF // their mask
)

// NewPathMap describes a mapping of paths active paths (1..MaxMapPaths)
// that started at fpsn. Out-of-range path counts give the zero PathMap.
func NewPathMap(paths int, fpsn uint32) PathMap {
	if paths < 1 || paths > MaxMapPaths {
		return 0
	}
	return PathMap(paths<<mapFPSNBits | int(fpsn&mapFPSNMask))
}

// Paths is the number of active paths, 0 for no mapping.
func (m PathMap) Paths() int { return int(m >> mapFPSNBits) }

// FPSN returns the mapping's first PSN as seen from psn, a PSN sent under
// it: the largest PSN <= psn with the carried low bits. A mapping that has
// run longer than 2047 PSNs lifts to a later start, which only shortens
// the range a receiver may check (never a false gap).
func (m PathMap) FPSN(psn uint32) uint32 {
	return psn - (psn-uint32(m))&mapFPSNMask
}

// Predecessor returns the PSN sent just before psn on the same path under
// the same mapping, and false if there is none (no mapping, or psn is one
// of the mapping's first Paths() PSNs).
func (m PathMap) Predecessor(psn uint32) (uint32, bool) {
	n := uint32(m.Paths())
	if n == 0 || psn-m.FPSN(psn) < n {
		return 0, false
	}
	return psn - n, true
}

// valid reports whether m is a canonical encoding: with no paths the FPSN
// bits must be zero.
func (m PathMap) valid() bool { return m.Paths() != 0 || m == 0 }
