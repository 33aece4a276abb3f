package netio

import (
	"math/rand/v2"
	"testing"
)

// refSum is RFC 1071 done the slow way.
func refSum(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s>>16 != 0 {
		s = s>>16 + s&0xffff
	}
	return uint16(s)
}

func TestChecksum(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 200 {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		if got, want := csumFold(csumAdd(0, b)), refSum(b); got != want {
			t.Fatalf("len %d: %#04x, want %#04x", n, got, want)
		}
		ff := make([]byte, n)
		for i := range ff {
			ff[i] = 0xff
		}
		if got, want := csumFold(csumAdd(0, ff)), refSum(ff); got != want {
			t.Fatalf("len %d of 0xff: %#04x, want %#04x", n, got, want)
		}
	}
	// A datagram whose checksum is included sums to 0xffff.
	udp := []byte{0x12, 0x34, 0x12, 0xb7, 0, 13, 0, 0, 'h', 'e', 'l', 'l', 'o'}
	src, dst := [4]byte{10, 0, 0, 1}, [4]byte{10, 0, 0, 2}
	c := udpChecksum(src, dst, udp)
	udp[6], udp[7] = byte(c>>8), byte(c)
	pseudo := []byte{10, 0, 0, 1, 10, 0, 0, 2, 0, 17, 0, 13}
	if s := csumFold(csumAdd(csumAdd(0, pseudo), udp)); s != 0xffff {
		t.Fatalf("checksum %#04x does not verify: %#04x", c, s)
	}
}

func TestEVPort(t *testing.T) {
	hdr := func(ev uint16) []byte { return []byte{0x46, 0x54, 1, 1, 0, 0, byte(ev >> 8), byte(ev)} }
	for _, ev := range []uint16{0, 1, 0x7fff, 0x8000, 0xffff} {
		port := EVPort(ev)
		if port == 0 {
			t.Fatalf("EV %d sent from port 0", ev)
		}
		if got := PortEV(port, hdr(ev)); got != ev {
			t.Errorf("EV %d -> port %d -> EV %d", ev, port, got)
		}
	}
	if PortEV(EVZeroPort, []byte{1, 2}) != EVZeroPort || PortEV(EVZeroPort, hdr(5)) != EVZeroPort {
		t.Error("EVZeroPort without a header saying 0 must stay 0x8000")
	}
	if packetType(hdr(0)) != 1 || packetType([]byte{1, 2, 3, 4}) != 0 || packetType([]byte{0x46, 0x54, 1, 9}) != 0 {
		t.Error("packetType")
	}
}

func BenchmarkChecksum1472(b *testing.B) {
	buf := make([]byte, 1472)
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		_ = udpChecksum([4]byte{1, 2, 3, 4}, [4]byte{5, 6, 7, 8}, buf)
	}
}
