package wire

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseHeaderCutShort: a capture's first bytes of a DATA packet give
// its common header, which Parse refuses as truncated.
func TestParseHeaderCutShort(t *testing.T) {
	p := Packet{Header: Header{Type: TypeData, Flags: FlagRetx, SubflowBits: 3, EV: 0x1234, Flow: 7, Msg: 2, PSN: 99, TSVal: 5},
		MsgLen: 1000, Payload: make([]byte, 1000)}
	b, err := Marshal(&p)
	if err != nil {
		t.Fatal(err)
	}
	var full Packet
	if err := Parse(b[:64], &full); !errors.Is(err, ErrLength) {
		t.Fatalf("Parse of 64 bytes: %v, want a length error", err)
	}
	var h Header
	if err := ParseHeader(b[:CommonLen], &h); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(p.Header, h); d != "" {
		t.Errorf("header (-want +got):\n%s", d)
	}
	if err := ParseHeader(b[:CommonLen-1], &h); !errors.Is(err, ErrTruncated) {
		t.Errorf("ParseHeader of %d bytes: %v, want truncated", CommonLen-1, err)
	}
	b[0] = 0
	if err := ParseHeader(b, &h); !errors.Is(err, ErrMagic) {
		t.Errorf("bad magic: %v", err)
	}
}
