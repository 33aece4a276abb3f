package bpf

import (
	"encoding/binary"
	"math/bits"
)

// Go mirror of the ECMP choice in c/policy.h (flow_hash and nth_set_bit),
// for tools that need to know which uplink a flow takes without asking the
// data plane: the runner maps a subflow's EV to its first-hop uplink.

// Constants of flow_hash.
const (
	fhMul1 = 0x8f5d3b27
	fhMul2 = 0xc2b4a96d
	fhInit = 0x6a09e667
)

func flowHashMix(h, w uint32) uint32 {
	h ^= w
	h ^= h >> 15
	h *= fhMul1
	h ^= h >> 13
	h *= fhMul2
	h ^= h >> 16
	return h
}

// FlowHash is flow_hash: the ECMP hash of a packet's 5-tuple words under a
// switch's seed (bpf.Config.Seed). The words are what the program loads
// from the packet: saddr and daddr are the IPv4 header's address bytes and
// ports the first 4 transport bytes (source then destination port, 0 for
// fragments and protocols other than UDP and TCP), each loaded as a
// native-endian u32 from network-order bytes; proto is the IP protocol.
// PacketWords builds them from ordinary values.
func FlowHash(saddr, daddr uint32, ports uint32, proto uint32, seed uint32) uint32 {
	h := flowHashMix(fhInit, seed)
	h = flowHashMix(h, saddr)
	h = flowHashMix(h, daddr)
	h = flowHashMix(h, ports)
	return flowHashMix(h, proto)
}

// PacketWords returns the saddr, daddr and ports words of FlowHash for a
// packet from src:sport to dst:dport, as the program loads them.
func PacketWords(src, dst [4]byte, sport, dport uint16) (saddr, daddr, ports uint32) {
	var p [4]byte
	binary.BigEndian.PutUint16(p[0:2], sport)
	binary.BigEndian.PutUint16(p[2:4], dport)
	return binary.NativeEndian.Uint32(src[:]), binary.NativeEndian.Uint32(dst[:]), binary.NativeEndian.Uint32(p[:])
}

// NthValid is nth_set_bit: the uplink (bit index) of the (r mod n)-th set
// bit of valid, counting from bit 0, where n is the number of set bits;
// -1 (UPLINK_NONE) when valid is empty. ECMP calls it with the flow hash.
func NthValid(valid uint64, r uint32) int {
	n := bits.OnesCount64(valid)
	if n == 0 {
		return -1
	}
	for range r % uint32(n) {
		valid &= valid - 1
	}
	return bits.TrailingZeros64(valid)
}
