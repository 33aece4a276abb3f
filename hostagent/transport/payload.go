package transport

import "encoding/binary"

// Message payloads are a pseudo-random pattern: byte i of message (flow,
// msg) is byte i%8 (little-endian) of word(key, i/8), where word is a
// splitmix64 hash. Any byte range can be generated or checked without the
// rest, so the sender fills packets in place and the receiver verifies
// each packet where it lands, byte for byte, and neither stores message
// data. A misplaced, stale or corrupted payload fails verification.

func patternKey(flow, msg uint32) uint64 { return mix64(uint64(flow)<<32 | uint64(msg)) }

func patternWord(key, i uint64) uint64 { return mix64(key + i*0x9E3779B97F4A7C15) }

func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 27
	x *= 0x94D049BB133111EB
	return x ^ x>>31
}

// fillPattern writes the message bytes [off, off+len(dst)) into dst.
func fillPattern(dst []byte, flow, msg, off uint32) {
	key := patternKey(flow, msg)
	pos := uint64(off)
	var w [8]byte
	for len(dst) > 0 {
		if pos%8 == 0 && len(dst) >= 8 {
			binary.LittleEndian.PutUint64(dst, patternWord(key, pos/8))
			dst, pos = dst[8:], pos+8
			continue
		}
		binary.LittleEndian.PutUint64(w[:], patternWord(key, pos/8))
		n := copy(dst, w[pos%8:])
		dst, pos = dst[n:], pos+uint64(n)
	}
}

// checkPattern reports whether src is the message bytes [off, off+len(src)).
func checkPattern(src []byte, flow, msg, off uint32) bool {
	key := patternKey(flow, msg)
	pos := uint64(off)
	var w [8]byte
	for len(src) > 0 {
		if pos%8 == 0 && len(src) >= 8 {
			if binary.LittleEndian.Uint64(src) != patternWord(key, pos/8) {
				return false
			}
			src, pos = src[8:], pos+8
			continue
		}
		binary.LittleEndian.PutUint64(w[:], patternWord(key, pos/8))
		k := int(pos % 8)
		n := min(len(src), 8-k)
		for j := 0; j < n; j++ {
			if src[j] != w[k+j] {
				return false
			}
		}
		src, pos = src[n:], pos+uint64(n)
	}
	return true
}
