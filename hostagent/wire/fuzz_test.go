package wire

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzParse feeds arbitrary bytes to Parse. Parse must not panic, must
// return an error from Kinds or succeed, and what it accepts must marshal
// back to exactly the same bytes (the format has one encoding per value).
func FuzzParse(f *testing.F) {
	for _, p := range []Packet{
		{Header: hdr(TypeData), MsgLen: 100, Offset: 10, Payload: []byte("payload")},
		{Header: hdr(TypeData), MsgLen: 100, Offset: 10, Path: NewPathMap(4, 77), Payload: []byte("payload")},
		{Header: hdr(TypeACK), CumAck: 5, SACK: 3},
		{Header: hdr(TypeNACK), NACKs: []uint32{1, 2}},
		{Header: hdr(TypeTail)},
		{Header: hdr(TypeRTX)},
	} {
		b, err := Marshal(&p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte{0x46, 0x54, 1})
	f.Fuzz(func(t *testing.T, in []byte) {
		var p Packet
		if err := Parse(in, &p); err != nil {
			if KindIndex(err) < 0 {
				t.Fatalf("error of unknown kind: %v", err)
			}
			return
		}
		out, err := Marshal(&p)
		if err != nil {
			t.Fatalf("parsed packet does not marshal: %v", err)
		}
		if diff := cmp.Diff(in, out, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("re-marshal differs (-in +out):\n%s", diff)
		}
	})
}
