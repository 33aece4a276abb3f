package scheme

import "github.com/ftlab/ftlab/hostagent/wire"

// bitmap is PFLD's per-flow receive window: one bit per PSN for the
// window [base, base+size), indexed by absolute PSN modulo size, sliding
// forward (never back) when a PSN beyond the window arrives. Bits inside
// the window are exact; PSNs below it are unknown.
type bitmap struct {
	words []uint64
	size  uint32
	base  uint32
}

func newBitmap(bits int, base uint32) bitmap {
	return bitmap{words: make([]uint64, bits/64), size: uint32(bits), base: base}
}

// state says what the bitmap knows of a PSN.
type state uint8

const (
	unknown  state = iota // below the window: slid past
	received              // bit set
	missing               // in or beyond the window, bit clear
)

func (b *bitmap) state(psn uint32) state {
	if wire.SeqLess(psn, b.base) {
		return unknown
	}
	if psn-b.base >= b.size {
		return missing // nothing at or past the top has arrived
	}
	i := psn % b.size
	if b.words[i/64]&(1<<(i%64)) != 0 {
		return received
	}
	return missing
}

// mark records psn, sliding the window forward if psn is past its top.
func (b *bitmap) mark(psn uint32) {
	if wire.SeqLess(psn, b.base) {
		return
	}
	if d := psn - b.base; d >= b.size {
		shift := d - b.size + 1
		if shift >= b.size {
			clear(b.words)
		} else {
			for q := b.base; q != b.base+shift; q++ {
				i := q % b.size
				b.words[i/64] &^= 1 << (i % 64)
			}
		}
		b.base += shift
	}
	i := psn % b.size
	b.words[i/64] |= 1 << (i % 64)
}

// stateBytes is the bitmap and its base PSN.
func (b *bitmap) stateBytes() int { return int(b.size/8) + 4 }
