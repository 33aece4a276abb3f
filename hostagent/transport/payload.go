package transport

import "encoding/binary"

// Message payloads are a keyed pattern: 8-byte word i of message (flow,
// msg) is key + i*patternStep (mod 2^64, little-endian), where the key is
// a splitmix64 hash of (flow, msg). Any byte range can be generated or
// checked without the rest, so the sender fills packets in place and the
// receiver verifies each packet where it lands, exactly (every word is
// compared, and an aligned packet costs one add and one compare per
// word), and neither stores message data. A corrupted byte changes its
// word; a misplaced payload (another offset) differs in every word, since
// patternStep is odd and so i*patternStep never repeats below 2^64 words;
// a stale one (another message) differs unless the two keys happen to lie
// a multiple of patternStep within the message's length apart, a chance
// of about one in 2^64 divided by the words of the message.

const patternStep = 0x9E3779B97F4A7C15 // odd: the golden ratio in 64 bits

func patternKey(flow, msg uint32) uint64 { return mix64(uint64(flow)<<32 | uint64(msg)) }

func patternWord(key, i uint64) uint64 { return key + i*patternStep }

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
	if k := pos % 8; k != 0 && len(dst) > 0 { // up to the next word
		binary.LittleEndian.PutUint64(w[:], patternWord(key, pos/8))
		n := copy(dst, w[k:])
		dst, pos = dst[n:], pos+uint64(n)
	}
	word := patternWord(key, pos/8)
	n := len(dst) &^ 7
	for i := 0; i < n; i += 8 {
		binary.LittleEndian.PutUint64(dst[i:i+8], word)
		word += patternStep
	}
	if dst = dst[n:]; len(dst) > 0 {
		binary.LittleEndian.PutUint64(w[:], word)
		copy(dst, w[:])
	}
}

// checkPattern reports whether src is the message bytes [off, off+len(src)).
func checkPattern(src []byte, flow, msg, off uint32) bool {
	key := patternKey(flow, msg)
	pos := uint64(off)
	var w [8]byte
	if k := pos % 8; k != 0 && len(src) > 0 {
		binary.LittleEndian.PutUint64(w[:], patternWord(key, pos/8))
		n := min(len(src), int(8-k))
		if string(src[:n]) != string(w[k:k+uint64(n)]) {
			return false
		}
		src, pos = src[n:], pos+uint64(n)
	}
	word := patternWord(key, pos/8)
	n := len(src) &^ 7
	for i := 0; i < n; i += 8 {
		if binary.LittleEndian.Uint64(src[i:i+8]) != word {
			return false
		}
		word += patternStep
	}
	if src = src[n:]; len(src) > 0 {
		binary.LittleEndian.PutUint64(w[:], word)
		if string(src) != string(w[:len(src)]) {
			return false
		}
	}
	return true
}
