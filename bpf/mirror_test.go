package bpf

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"net/netip"
	"testing"
)

// TestMirror checks the exported mirror against the tests' own mirror of
// the C (fhMix, nthSetBit), which the program tests check against the
// loaded program, on random inputs.
func TestMirror(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 100000 {
		s, d, p, pr, seed := rng.Uint32(), rng.Uint32(), rng.Uint32(), rng.Uint32N(256), rng.Uint32()
		want := fhMix(fhMix(fhMix(fhMix(fhMix(0x6a09e667, seed), s), d), p), pr)
		if got := FlowHash(s, d, p, pr, seed); got != want {
			t.Fatalf("FlowHash(%#x, %#x, %#x, %d, %#x) = %#x, want %#x", s, d, p, pr, seed, got, want)
		}
		valid := rng.Uint64()
		switch i % 4 {
		case 0:
			valid &= 0xff
		case 1:
			valid &= 0xffff
		case 2:
			valid = 0
		}
		r := rng.Uint32()
		want2 := -1
		if n := bits.OnesCount64(valid); n > 0 {
			want2 = nthSetBit(valid, int(r%uint32(n)))
		}
		if got := NthValid(valid, r); got != want2 {
			t.Fatalf("NthValid(%#x, %d) = %d, want %d", valid, r, got, want2)
		}
	}
}

// TestPacketWords checks that PacketWords loads the words as the program
// does (and as flowHashOf does from a frame).
func TestPacketWords(t *testing.T) {
	src, dst := [4]byte{10, 0, 1, 2}, [4]byte{10, 3, 0, 2}
	s, d, p := PacketWords(src, dst, 0x8000, 4791)
	var b [4]byte
	binary.NativeEndian.PutUint32(b[:], s)
	if b != src {
		t.Errorf("saddr bytes %v, want %v", b, src)
	}
	binary.NativeEndian.PutUint32(b[:], d)
	if b != dst {
		t.Errorf("daddr bytes %v, want %v", b, dst)
	}
	binary.NativeEndian.PutUint32(b[:], p)
	if binary.BigEndian.Uint16(b[0:2]) != 0x8000 || binary.BigEndian.Uint16(b[2:4]) != 4791 {
		t.Errorf("ports bytes %v", b)
	}
	// The same hash as the frame-based mirror that the program tests use.
	for sport := uint16(1); sport < 200; sport++ {
		in := frame{src: netip.AddrFrom4(src), dst: netip.AddrFrom4(dst), proto: protoUDP, sport: sport, dport: 4791, payload: 100}.bytes()
		s, d, p := PacketWords(src, dst, sport, 4791)
		if got, want := FlowHash(s, d, p, protoUDP, 77), flowHashOf(in, 77); got != want {
			t.Fatalf("sport %d: FlowHash %#x, frame mirror %#x", sport, got, want)
		}
	}
}
