package transport

import (
	"encoding/binary"
	"testing"
)

// BenchmarkPattern: the cost of making and of verifying one full-size
// DATA payload (1424 bytes, at an 8-byte aligned offset, as every
// segment's is), against a plain copy of it (the floor: the socket copies
// every payload once anyway) and against hashing every word (the pattern
// before it became an add per word).
func BenchmarkPattern(b *testing.B) {
	buf, src := make([]byte, 1424), make([]byte, 1424)
	b.Run("fill", func(b *testing.B) {
		b.SetBytes(int64(len(buf)))
		for i := 0; b.Loop(); i++ {
			fillPattern(buf, 7, 3, uint32(i%64)*1424)
		}
	})
	b.Run("check", func(b *testing.B) {
		fillPattern(buf, 7, 3, 1424)
		b.SetBytes(int64(len(buf)))
		for b.Loop() {
			if !checkPattern(buf, 7, 3, 1424) {
				b.Fatal("check failed")
			}
		}
	})
	b.Run("baseline=copy", func(b *testing.B) {
		b.SetBytes(int64(len(buf)))
		for b.Loop() {
			copy(buf, src)
		}
	})
	b.Run("baseline=hash-per-word", func(b *testing.B) {
		b.SetBytes(int64(len(buf)))
		key := patternKey(7, 3)
		for i := 0; b.Loop(); i++ {
			for j := 0; j+8 <= len(buf); j += 8 {
				binary.LittleEndian.PutUint64(buf[j:], mix64(key+uint64(i+j)*patternStep))
			}
		}
	})
}
