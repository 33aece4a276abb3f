package netio

import (
	"encoding/binary"
	"math/bits"
)

// csumAdd adds b to a running one's-complement sum (RFC 1071) kept in 64
// bits. b is read as big-endian 16-bit words; an odd last byte is padded
// with a zero byte. Words are summed 64 bits at a time with end-around
// carries, which is the same one's-complement sum.
func csumAdd(sum uint64, b []byte) uint64 {
	var c uint64
	for len(b) >= 32 {
		sum, c = bits.Add64(sum, binary.BigEndian.Uint64(b), c)
		sum, c = bits.Add64(sum, binary.BigEndian.Uint64(b[8:]), c)
		sum, c = bits.Add64(sum, binary.BigEndian.Uint64(b[16:]), c)
		sum, c = bits.Add64(sum, binary.BigEndian.Uint64(b[24:]), c)
		b = b[32:]
	}
	for len(b) >= 8 {
		sum, c = bits.Add64(sum, binary.BigEndian.Uint64(b), c)
		b = b[8:]
	}
	sum, c = bits.Add64(sum, 0, c)
	sum += c // cannot carry again: a carry leaves the sum small
	var tail uint64
	switch len(b) {
	case 7:
		tail |= uint64(b[6]) << 8
		fallthrough
	case 6:
		tail |= uint64(b[5]) << 16
		fallthrough
	case 5:
		tail |= uint64(b[4]) << 24
		fallthrough
	case 4:
		tail |= uint64(b[3]) << 32
		fallthrough
	case 3:
		tail |= uint64(b[2]) << 40
		fallthrough
	case 2:
		tail |= uint64(b[1]) << 48
		fallthrough
	case 1:
		tail |= uint64(b[0]) << 56
	}
	sum, c = bits.Add64(sum, tail, 0)
	return sum + c
}

// csumFold folds a 64-bit one's-complement sum to 16 bits.
func csumFold(sum uint64) uint16 {
	s := (sum >> 32) + (sum & 0xffffffff)
	s = (s >> 32) + (s & 0xffffffff)
	s = (s >> 16) + (s & 0xffff)
	s = (s >> 16) + (s & 0xffff)
	s = (s >> 16) + (s & 0xffff)
	return uint16(s)
}

// udpChecksum returns the UDP checksum of a datagram (header with a zero
// checksum field, then payload) between src and dst. A computed 0 is sent
// as 0xffff (RFC 768: 0 means "no checksum").
func udpChecksum(src, dst [4]byte, udp []byte) uint16 {
	var pseudo [12]byte
	copy(pseudo[0:4], src[:])
	copy(pseudo[4:8], dst[:])
	pseudo[9] = 17 // UDP
	binary.BigEndian.PutUint16(pseudo[10:], uint16(len(udp)))
	c := ^csumFold(csumAdd(csumAdd(0, pseudo[:]), udp))
	if c == 0 {
		c = 0xffff
	}
	return c
}
