package bpf

import (
	"encoding/binary"
	"math/bits"
	"net/netip"
)

// Hand-built test frames and the reference computations the tests check
// the programs against.

const (
	ethIPv4 = 0x0800
	ethARP  = 0x0806
	ethIPv6 = 0x86dd

	protoICMP = 1
	protoTCP  = 6
	protoUDP  = 17
)

// frame describes an Ethernet frame; zero fields take defaults (IPv4, UDP,
// TTL 64, ports 1000 -> 2000).
type frame struct {
	srcMAC, dstMAC [6]byte
	etherType      uint16
	src, dst       netip.Addr
	proto          uint8
	sport, dport   uint16
	ttl            uint8
	tos            uint8
	ipOpts         []byte // a multiple of 4 bytes
	frag           uint16 // the flags+offset field, e.g. 0x2000 = MF
	payload        int    // transport payload bytes
	data           []byte // the transport payload itself, instead of payload bytes of a pattern
}

var (
	hostMAC  = [6]byte{0x02, 0x01, 0, 0, 0, 0x99}
	inMAC    = [6]byte{0x02, 0x02, 0, 0, 0, 0x98}
	defSrc   = netip.MustParseAddr("10.1.0.2")
	defDst   = netip.MustParseAddr("10.0.0.3")
	defSport = uint16(1000)
	defDport = uint16(2000)
)

func (f frame) bytes() []byte {
	if f.etherType == 0 {
		f.etherType = ethIPv4
	}
	if f.srcMAC == ([6]byte{}) {
		f.srcMAC = hostMAC
	}
	if f.dstMAC == ([6]byte{}) {
		f.dstMAC = inMAC
	}
	b := make([]byte, 14)
	copy(b[0:6], f.dstMAC[:])
	copy(b[6:12], f.srcMAC[:])
	binary.BigEndian.PutUint16(b[12:14], f.etherType)
	if f.etherType != ethIPv4 {
		return append(b, make([]byte, 46)...) // e.g. an ARP body
	}
	if !f.src.IsValid() {
		f.src = defSrc
	}
	if !f.dst.IsValid() {
		f.dst = defDst
	}
	if f.proto == 0 {
		f.proto = protoUDP
	}
	if f.ttl == 0 {
		f.ttl = 64
	}
	if f.sport == 0 {
		f.sport = defSport
	}
	if f.dport == 0 {
		f.dport = defDport
	}
	if f.data != nil {
		f.payload = len(f.data)
	}
	var l4 []byte
	switch f.proto {
	case protoUDP:
		l4 = make([]byte, 8+f.payload)
		binary.BigEndian.PutUint16(l4[0:2], f.sport)
		binary.BigEndian.PutUint16(l4[2:4], f.dport)
		binary.BigEndian.PutUint16(l4[4:6], uint16(len(l4)))
	case protoTCP:
		l4 = make([]byte, 20+f.payload)
		binary.BigEndian.PutUint16(l4[0:2], f.sport)
		binary.BigEndian.PutUint16(l4[2:4], f.dport)
		l4[12] = 5 << 4
	default:
		l4 = make([]byte, f.payload)
	}
	for i := range f.payload {
		l4[len(l4)-f.payload+i] = byte(i * 7)
	}
	copy(l4[len(l4)-f.payload:], f.data)
	ihl := 20 + len(f.ipOpts)
	ip := make([]byte, ihl)
	ip[0] = 0x40 | byte(ihl/4)
	ip[1] = f.tos
	binary.BigEndian.PutUint16(ip[2:4], uint16(ihl+len(l4)))
	binary.BigEndian.PutUint16(ip[4:6], 0x1234)
	binary.BigEndian.PutUint16(ip[6:8], f.frag)
	ip[8] = f.ttl
	ip[9] = f.proto
	s4, d4 := f.src.As4(), f.dst.As4()
	copy(ip[12:16], s4[:])
	copy(ip[16:20], d4[:])
	copy(ip[20:], f.ipOpts)
	binary.BigEndian.PutUint16(ip[10:12], inetChecksum(ip, 0))
	if f.proto == protoUDP {
		binary.BigEndian.PutUint16(l4[6:8], udpChecksum(ip, l4))
	}
	return append(append(b, ip...), l4...)
}

// inetChecksum is the Internet checksum of b (with a starting sum).
func inetChecksum(b []byte, sum uint32) uint16 {
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

func udpChecksum(ip, l4 []byte) uint16 {
	var sum uint32
	for i := 12; i < 20; i += 2 {
		sum += uint32(ip[i])<<8 | uint32(ip[i+1])
	}
	sum += protoUDP + uint32(len(l4))
	c := inetChecksum(l4, sum)
	if c == 0 {
		c = 0xffff
	}
	return c
}

// ipHeader returns the IPv4 header of an Ethernet frame.
func ipHeader(b []byte) []byte {
	ihl := int(b[14]&0xf) * 4
	return b[14 : 14+ihl]
}

// ipChecksumOK recomputes the IPv4 header checksum from scratch.
func ipChecksumOK(b []byte) bool { return inetChecksum(ipHeader(b), 0) == 0 }

// forwarded is what a switch should emit for frame in out of port:
// MACs of the port, TTL - 1, checksum recomputed from scratch.
func forwarded(in []byte, port int) []byte {
	out := append([]byte(nil), in...)
	pm, mm := peerMAC(port), portMAC(port)
	copy(out[0:6], pm[:])
	copy(out[6:12], mm[:])
	ip := ipHeader(out)
	ip[8]--
	ip[10], ip[11] = 0, 0
	binary.BigEndian.PutUint16(ip[10:12], inetChecksum(ip, 0))
	return out
}

// Go mirror of flow_hash in c/policy.h.
func fhMix(h, w uint32) uint32 {
	h ^= w
	h ^= h >> 15
	h *= 0x8f5d3b27
	h ^= h >> 13
	h *= 0xc2b4a96d
	h ^= h >> 16
	return h
}

// flowHashOf hashes a frame's 5-tuple words exactly as the program loads
// them (native-endian loads of the network-order bytes).
func flowHashOf(b []byte, seed uint32) uint32 {
	ip := ipHeader(b)
	l4 := b[14+len(ip):]
	var ports uint32
	frag := binary.BigEndian.Uint16(ip[6:8])&0x3fff != 0
	if !frag && (ip[9] == protoUDP || ip[9] == protoTCP) {
		ports = binary.NativeEndian.Uint32(l4[0:4])
	}
	return FlowHash(binary.NativeEndian.Uint32(ip[12:16]), binary.NativeEndian.Uint32(ip[16:20]), ports, uint32(ip[9]), seed)
}

// nthSetBit mirrors nth_set_bit.
func nthSetBit(bm uint64, n int) int {
	for range n {
		bm &= bm - 1
	}
	return bits.TrailingZeros64(bm)
}

// ecmpUplink is the uplink index ecmp picks for a frame.
func ecmpUplink(b []byte, seed uint32, valid uint64) int {
	return NthValid(valid, flowHashOf(b, seed))
}
