package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func hdr(t Type) Header {
	return Header{Type: t, SubflowBits: 4, EV: 0xBEEF, Flow: 0x01020304, Msg: 7, PSN: 0xFFFFFFF0, TSVal: 123456789, TSEcr: 42,
		Delay: 0x00ABCDEF, Jitter: 1000}
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name    string
		p       Packet
		wantLen int
	}{
		{"data", Packet{Header: hdr(TypeData), Offset: 4096, MsgLen: 8192, Payload: []byte("hello, fabric")}, DataLen + 13},
		{"data with path map", Packet{Header: hdr(TypeData), MsgLen: 1, Path: NewPathMap(4, 0x12345), Payload: []byte{9}}, DataLen + 1},
		{"data retx empty", Packet{Header: func() Header { h := hdr(TypeData); h.Flags = FlagRetx; return h }(), MsgLen: 0, Payload: []byte{}}, DataLen},
		{"ack", Packet{Header: func() Header { h := hdr(TypeACK); h.Flags = FlagECE | FlagDup; return h }(), CumAck: 99, SACK: 0x8000000000000001}, AckLen},
		{"probe ack", Packet{Header: func() Header { h := hdr(TypeACK); h.Flags = FlagProbeACK; return h }(), CumAck: 3}, AckLen},
		{"nack", Packet{Header: hdr(TypeNACK), NACKs: []uint32{1, 17, 33, 0xFFFFFFFF}}, NACKBaseLen + 16},
		{"tail", Packet{Header: hdr(TypeTail)}, ProbeLen},
		{"section end", Packet{Header: hdr(TypeSectionEnd)}, ProbeLen},
		{"periodic", Packet{Header: hdr(TypePeriodic)}, ProbeLen},
		{"rtx", Packet{Header: hdr(TypeRTX)}, ProbeLen},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Marshal(&tt.p)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if len(b) != tt.wantLen || tt.p.Len() != tt.wantLen {
				t.Fatalf("len = %d, Len() = %d, want %d", len(b), tt.p.Len(), tt.wantLen)
			}
			var got Packet
			if err := Parse(b, &got); err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tt.p, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("round trip (-sent +parsed):\n%s", diff)
			}
		})
	}
}

// TestByteLayout pins the documented offsets and byte order.
func TestByteLayout(t *testing.T) {
	p := Packet{Header: hdr(TypeData), Offset: 0x11223344, MsgLen: 0x55667788, Payload: []byte{0xAA}}
	p.Flags = FlagRetx
	b, err := Marshal(&p)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{
		0x46, 0x54, 2, 1, 0x01, 4, 0xBE, 0xEF, // magic version type flags sfbits ev
		1, 2, 3, 4, 0, 0, 0, 7, // flow msg
		0xFF, 0xFF, 0xFF, 0xF0, // psn
		0x07, 0x5B, 0xCD, 0x15, 0, 0, 0, 42, // tsval tsecr
		0, 0xAB, 0xCD, 0xEF, 0, 0, 0x03, 0xE8, // delay jitter
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0, 1, 0, 0, // offset msglen length reserved
		0xAA,
	}
	if diff := cmp.Diff(want, b); diff != "" {
		t.Errorf("layout (-want +got):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	good := func(p Packet) []byte {
		b, err := Marshal(&p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	data := good(Packet{Header: hdr(TypeData), MsgLen: 10, Payload: []byte("abc")})
	ack := good(Packet{Header: hdr(TypeACK)})
	nack := good(Packet{Header: hdr(TypeNACK), NACKs: []uint32{5}})
	probe := good(Packet{Header: hdr(TypeTail)})
	with := func(b []byte, f func([]byte)) []byte {
		c := bytes.Clone(b)
		f(c)
		return c
	}
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, ErrTruncated},
		{"short common", data[:CommonLen-1], ErrTruncated},
		{"magic", with(data, func(b []byte) { b[0] = 0 }), ErrMagic},
		{"version 1 (no delay words)", with(data, func(b []byte) { b[2] = 1 }), ErrVersion},
		{"version 3", with(data, func(b []byte) { b[2] = 3 }), ErrVersion},
		{"type zero", with(data, func(b []byte) { b[3] = 0 }), ErrType},
		{"type high", with(data, func(b []byte) { b[3] = 8 }), ErrType},
		{"unknown flag", with(data, func(b []byte) { b[4] = 0x80 }), ErrFlags},
		{"ack flag on data", with(data, func(b []byte) { b[4] = uint8(FlagECE) }), ErrFlags},
		{"flag on probe", with(probe, func(b []byte) { b[4] = uint8(FlagRetx) }), ErrFlags},
		{"sfbits", with(data, func(b []byte) { b[5] = 16 }), ErrField},
		{"data header short", data[:DataLen-1], ErrTruncated},
		{"data reserved", with(data, func(b []byte) { b[CommonLen+11] = 1 }), ErrReserved},
		{"path map fpsn without paths", with(data, func(b []byte) { b[CommonLen+10] = 0x07 }), ErrReserved},
		{"payload short", data[:len(data)-1], ErrLength},
		{"payload long", append(bytes.Clone(data), 0), ErrLength},
		{"past message end", with(data, func(b []byte) { binary.BigEndian.PutUint32(b[CommonLen:], 8) }), ErrField},
		{"offset overflow", with(data, func(b []byte) { binary.BigEndian.PutUint32(b[CommonLen:], 0xFFFFFFFF) }), ErrField},
		{"ack short", ack[:AckLen-1], ErrTruncated},
		{"ack long", append(bytes.Clone(ack), 0), ErrLength},
		{"nack zero count", with(nack, func(b []byte) { b[CommonLen+1] = 0 }), ErrField},
		{"nack count high", with(nack, func(b []byte) { binary.BigEndian.PutUint16(b[CommonLen:], MaxNACKPSNs+1) }), ErrField},
		{"nack count past end", with(nack, func(b []byte) { b[CommonLen+1] = 2 }), ErrTruncated},
		{"nack trailing", append(bytes.Clone(nack), 0, 0), ErrLength},
		{"nack reserved", with(nack, func(b []byte) { b[CommonLen+3] = 1 }), ErrReserved},
		{"nack short", nack[:NACKBaseLen-1], ErrTruncated},
		{"probe long", append(bytes.Clone(probe), 0), ErrLength},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p Packet
			err := Parse(tt.in, &p)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Parse = %v, want %v", err, tt.want)
			}
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Field == "" {
				t.Errorf("error %v is not a *ParseError naming a field", err)
			}
			if KindIndex(err) < 0 {
				t.Errorf("KindIndex(%v) = -1", err)
			}
		})
	}
}

func TestMarshalRefuses(t *testing.T) {
	tests := []struct {
		name string
		p    Packet
	}{
		{"type", Packet{Header: Header{Type: 9}}},
		{"flags", Packet{Header: Header{Type: TypeTail, Flags: FlagRetx}}},
		{"sfbits", Packet{Header: Header{Type: TypeData, SubflowBits: 16}}},
		{"empty nack", Packet{Header: Header{Type: TypeNACK}}},
		{"huge nack", Packet{Header: Header{Type: TypeNACK}, NACKs: make([]uint32, MaxNACKPSNs+1)}},
		{"huge payload", Packet{Header: Header{Type: TypeData}, Payload: make([]byte, MaxPayload+1)}},
		{"path map without paths", Packet{Header: Header{Type: TypeData}, Path: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Marshal(&tt.p); !errors.Is(err, ErrInvalid) {
				t.Errorf("Marshal = %v, want ErrInvalid", err)
			}
		})
	}
}

func TestAppendDataFillsInPlace(t *testing.T) {
	p := Packet{Header: hdr(TypeData), Offset: 2, MsgLen: 10}
	b, payload, err := AppendData(make([]byte, 3, 64), &p, 5)
	if err != nil {
		t.Fatal(err)
	}
	copy(payload, "world")
	var got Packet
	if err := Parse(b[3:], &got); err != nil {
		t.Fatal(err)
	}
	if string(got.Payload) != "world" || got.Offset != 2 {
		t.Errorf("got payload %q offset %d", got.Payload, got.Offset)
	}
}

func TestParseReusesNACKs(t *testing.T) {
	b, _ := Marshal(&Packet{Header: hdr(TypeNACK), NACKs: []uint32{1, 2, 3}})
	p := Packet{NACKs: make([]uint32, 0, 8)}
	allocs := testing.AllocsPerRun(100, func() {
		if err := Parse(b, &p); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Parse allocated %v times", allocs)
	}
}

func TestSeq(t *testing.T) {
	if !SeqLess(0xFFFFFFFF, 0) || SeqLess(0, 0xFFFFFFFF) || !SeqLEq(5, 5) || SeqDiff(2, 0xFFFFFFFE) != 4 {
		t.Error("serial arithmetic wrong around wrap")
	}
	if InitialPSN(1) == InitialPSN(2) {
		t.Error("InitialPSN is not spreading flows")
	}
}

func BenchmarkParseData(b *testing.B) {
	buf, _ := Marshal(&Packet{Header: hdr(TypeData), MsgLen: 4096, Payload: make([]byte, 4000)})
	var p Packet
	for b.Loop() {
		_ = Parse(buf, &p)
	}
}

// TestPathMapLayout pins the path halfword: paths in bits 15..11, FPSN's
// low 11 bits below.
func TestPathMapLayout(t *testing.T) {
	p := Packet{Header: hdr(TypeData), Path: NewPathMap(3, 0xABCDE)}
	b, err := Marshal(&p)
	if err != nil {
		t.Fatal(err)
	}
	if got := binary.BigEndian.Uint16(b[CommonLen+10:]); got != 3<<11|0x4DE {
		t.Errorf("path halfword %#04x, want %#04x", got, 3<<11|0x4DE)
	}
}

func TestPathMap(t *testing.T) {
	for _, c := range []struct {
		name      string
		paths     int
		fpsn, psn uint32
		pred      uint32
		ok        bool
	}{
		{"no mapping", 0, 100, 200, 0, false},
		{"too many paths", MaxMapPaths + 1, 100, 200, 0, false},
		{"first packet of the epoch", 4, 1000, 1000, 0, false},
		{"last without predecessor", 4, 1000, 1003, 0, false},
		{"first with predecessor", 4, 1000, 1004, 1000, true},
		{"one path", 1, 1000, 1001, 1000, true},
		{"31 paths", 31, 1000, 1031, 1000, true},
		{"epoch across 2^11", 4, 0x7FE, 0x801, 0, false},
		{"epoch across 2^11, later", 4, 0x7FE, 0x802, 0x7FE, true},
		{"epoch across 2^32", 2, 0xFFFFFFFF, 1, 0xFFFFFFFF, true},
		{"long epoch lifts later", 4, 1000, 1000 + 2048 + 2, 0, false},
		{"long epoch, further", 4, 1000, 1000 + 2048 + 7, 1000 + 2048 + 3, true},
	} {
		m := NewPathMap(c.paths, c.fpsn)
		pred, ok := m.Predecessor(c.psn)
		if pred != c.pred || ok != c.ok {
			t.Errorf("%s: Predecessor(%#x) = %#x, %v; want %#x, %v", c.name, c.psn, pred, ok, c.pred, c.ok)
		}
		if ok && (m.Paths() != c.paths || !SeqLEq(m.FPSN(c.psn), pred)) {
			t.Errorf("%s: paths %d, FPSN %#x", c.name, m.Paths(), m.FPSN(c.psn))
		}
	}
}
