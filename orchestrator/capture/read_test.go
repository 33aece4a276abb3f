package capture

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/ftlab/ftlab/bpf"
	"github.com/ftlab/ftlab/hostagent/wire"
	"github.com/ftlab/ftlab/internal/testlab"
)

// rawFrame is an Ethernet, IPv4 and UDP frame carrying p.
func rawFrame(t *testing.T, p *wire.Packet) []byte {
	t.Helper()
	body, err := wire.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, ethLen+ipv4Min+udpLen, ethLen+ipv4Min+udpLen+len(body))
	binary.BigEndian.PutUint16(b[12:], ethIPv4)
	ip := b[ethLen:]
	ip[0], ip[8], ip[9] = 0x45, 64, protoUDP
	binary.BigEndian.PutUint16(ip[2:], uint16(ipv4Min+udpLen+len(body)))
	copy(ip[12:], []byte{10, 0, 0, 2})
	copy(ip[16:], []byte{10, 1, 0, 2})
	udp := ip[ipv4Min:]
	binary.BigEndian.PutUint16(udp[0:], 0x1234)
	binary.BigEndian.PutUint16(udp[2:], 4791)
	binary.BigEndian.PutUint16(udp[4:], uint16(udpLen+len(body)))
	return append(b, body...)
}

// TestReadPcapng: what the pcapng writer wrote reads back as the same
// frames, decoded, on their ports, and filters select among them.
func TestReadPcapng(t *testing.T) {
	topo := testlab.Topology(t, "fattree-k4")
	ports, err := ResolveTargets(topo, []string{"e0-0:a0-0", "h0-0-0"})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	pw, err := newPcapWriter(&buf, "test", ports, DefaultSnapLen, "")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	frames := []*Frame{
		{Port: &ports[0], Time: now, Dir: bpf.TapIn, Verdict: bpf.TapForward,
			Data: rawFrame(t, &wire.Packet{Header: wire.Header{Type: wire.TypeNACK, Flow: 9, PSN: 250}, NACKs: []uint32{7, 8}})},
		{Port: &ports[1], Time: now.Add(time.Millisecond), Dir: bpf.TapOut,
			Data: rawFrame(t, &wire.Packet{Header: wire.Header{Type: wire.TypeACK, Flow: 9, PSN: 251}})},
	}
	for _, f := range frames {
		f.Len = len(f.Data)
		if err := pw.write(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := pw.close(nil); err != nil {
		t.Fatal(err)
	}
	got, err := ReadPcapng(&buf, topo)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("read %d frames, wrote 2", len(got))
	}
	for i, f := range got {
		if f.Port.String() != ports[i].String() || !f.FT || f.Len != frames[i].Len {
			t.Errorf("frame %d: port %s, ftlab %v", i, f.Port, f.FT)
		}
	}
	if got[0].Header.Type != wire.TypeNACK || got[0].Header.PSN != 250 || got[1].Header.Type != wire.TypeACK {
		t.Errorf("headers: %+v, %+v", got[0].Header, got[1].Header)
	}
	flt, err := ParseFilter("type nack and iface a0-0", topo)
	if err != nil {
		t.Fatal(err)
	}
	if !flt.Match(got[0]) || flt.Match(got[1]) {
		t.Error("filter type nack and iface a0-0 does not pick the NACK alone")
	}
}
