package transport

import (
	"math/bits"

	"github.com/ftlab/ftlab/hostagent/wire"
)

// psnSet is the receiver's exact record of received PSNs: every PSN before
// base has arrived; a bitmap covers [start, start+64*len(words)) with
// start <= base, start a multiple of 64 steps behind base.
type psnSet struct {
	base  uint32
	start uint32
	words []uint64
}

func newPSNSet(isn uint32) psnSet { return psnSet{base: isn, start: isn} }

// has reports whether psn has arrived.
func (s *psnSet) has(psn uint32) bool {
	if wire.SeqLess(psn, s.base) {
		return true
	}
	off := psn - s.start
	w := off / 64
	if w >= uint32(len(s.words)) {
		return false
	}
	return s.words[w]&(1<<(off%64)) != 0
}

// add records psn (which must not be before base) and advances base over
// the contiguous prefix.
func (s *psnSet) add(psn uint32) {
	off := psn - s.start
	w := int(off / 64)
	for w >= len(s.words) {
		s.words = append(s.words, 0)
	}
	s.words[w] |= 1 << (off % 64)
	// Advance base over set bits, dropping full words from the front.
	for len(s.words) > 0 {
		bit := (s.base - s.start) % 64
		run := bits.TrailingZeros64(^(s.words[0] >> bit))
		if run == 0 {
			return
		}
		if int(bit)+run < 64 {
			s.base += uint32(run)
			return
		}
		s.base = s.start + 64
		s.start += 64
		s.words = s.words[1:]
	}
}

// sack returns the bitmap of PSNs psn-1-i, i = 0..63, that have arrived.
func (s *psnSet) sack(psn uint32) uint64 {
	var m uint64
	for i := uint32(0); i < wire.SACKBits; i++ {
		if s.has(psn - 1 - i) {
			m |= 1 << i
		}
	}
	return m
}

// ranges is a sorted set of disjoint half-open byte ranges: which bytes of
// a message have arrived. It stays short: one range per hole plus one.
type ranges []struct{ lo, hi uint32 }

// add inserts [lo, hi) and reports false, changing nothing, if it overlaps
// bytes already present.
func (r *ranges) add(lo, hi uint32) bool {
	if lo == hi {
		return true
	}
	rs := *r
	// First range ending after lo.
	i := 0
	for i < len(rs) && rs[i].hi <= lo {
		i++
	}
	if i < len(rs) && rs[i].lo < hi {
		return false
	}
	joinL := i > 0 && rs[i-1].hi == lo
	joinR := i < len(rs) && rs[i].lo == hi
	switch {
	case joinL && joinR:
		rs[i-1].hi = rs[i].hi
		rs = append(rs[:i], rs[i+1:]...)
	case joinL:
		rs[i-1].hi = hi
	case joinR:
		rs[i].lo = lo
	default:
		rs = append(rs, struct{ lo, hi uint32 }{})
		copy(rs[i+1:], rs[i:])
		rs[i].lo, rs[i].hi = lo, hi
	}
	*r = rs
	return true
}
