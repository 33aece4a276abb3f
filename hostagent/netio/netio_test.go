package netio

import "testing"

func TestECN(t *testing.T) {
	for _, tt := range []struct {
		e       ECN
		s       string
		capable bool
	}{{NotECT, "Not-ECT", false}, {ECT1, "ECT(1)", true}, {ECT0, "ECT(0)", true}, {CE, "CE", true}, {7, "ECN(7)", true}} {
		if tt.e.String() != tt.s || tt.e.Capable() != tt.capable {
			t.Errorf("%d: %q %v", tt.e, tt.e.String(), tt.e.Capable())
		}
	}
	var got Datagram
	ReceiverFunc(func(d Datagram) { got = d }).HandleDatagram(Datagram{EV: 7})
	if got.EV != 7 {
		t.Error("ReceiverFunc did not pass the datagram")
	}
}
