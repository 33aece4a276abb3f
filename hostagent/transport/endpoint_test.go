package transport_test

import (
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/netio"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/hostagent/wire"
)

// wireConn is a netio.Conn that records what is sent.
type wireConn struct {
	addr netip.Addr
	sent []netio.Datagram
}

func (c *wireConn) Send(d netio.Datagram) error {
	d.Payload = append([]byte(nil), d.Payload...)
	c.sent = append(c.sent, d)
	return nil
}
func (c *wireConn) LocalAddr() netip.Addr { return c.addr }
func (c *wireConn) MaxPayload() int       { return 1472 }

// fixedScheme sends everything on EV 7 and has no receiver logic.
type fixedScheme struct{}

func (fixedScheme) Name() string                                         { return "fixed" }
func (fixedScheme) NewSender(transport.SenderEnv) transport.SenderScheme { return fixedSender{} }
func (fixedScheme) NewReceiver(transport.ReceiverEnv, *wire.Packet) transport.ReceiverScheme {
	return fixedReceiver{}
}

type fixedSender struct{}

func (fixedSender) SubflowBits() uint8                          { return 0 }
func (fixedSender) DataEV(uint32) uint16                        { return 7 }
func (fixedSender) RetransmitEV(uint32, transport.Cause) uint16 { return 7 }
func (fixedSender) OnSent(transport.SentPacket)                 {}
func (fixedSender) OnFeedback(transport.Feedback)               {}
func (fixedSender) OnNACK(transport.NACKInfo)                   {}
func (fixedSender) OnRTO([]transport.LostPacket)                {}
func (fixedSender) StateBytes() int                             { return 0 }
func (fixedSender) Close()                                      {}

type fixedReceiver struct{}

func (fixedReceiver) OnData(*wire.Packet)  {}
func (fixedReceiver) OnProbe(*wire.Packet) {}
func (fixedReceiver) StateBytes() int      { return 0 }

var peer = netip.MustParseAddr("192.0.2.2")

func newEndpoint(t testing.TB) (*transport.Endpoint, *wireConn, *clock.Virtual) {
	t.Helper()
	clk := clock.NewVirtual()
	conn := &wireConn{addr: netip.MustParseAddr("192.0.2.1")}
	// A 10 ms initial RTO (the base RTT of a slow fabric), 1 ms minimum.
	ep, err := transport.NewEndpoint(transport.Config{Scheme: fixedScheme{}, MinRTO: time.Millisecond, InitialRTO: 10 * time.Millisecond}, clk, conn)
	if err != nil {
		t.Fatal(err)
	}
	return ep, conn, clk
}

func parse(t *testing.T, d netio.Datagram) *wire.Packet {
	t.Helper()
	var p wire.Packet
	if err := wire.Parse(d.Payload, &p); err != nil {
		t.Fatal(err)
	}
	return &p
}

func marshal(t *testing.T, p *wire.Packet) []byte {
	t.Helper()
	b, err := wire.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestNACKNeedsFreshEvidence checks the acceptance rule: a NACK is taken
// only if the PSN's latest copy left on the trigger's EV before the
// trigger did (or is the trigger: TestTrimmedHeaderIsNACKed).
func TestNACKNeedsFreshEvidence(t *testing.T) {
	ep, conn, clk := newEndpoint(t)
	f, err := ep.OpenFlow(peer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Send(3 * 1400); err != nil {
		t.Fatal(err)
	}
	if len(conn.sent) != 3 {
		t.Fatalf("sent %d datagrams, want 3 (unpaced)", len(conn.sent))
	}
	first, last := parse(t, conn.sent[0]), parse(t, conn.sent[2])
	nackOf := func(ev uint16, trigger *wire.Packet, psn uint32) {
		clk.RunFor(time.Microsecond)
		ep.HandleDatagram(netio.Datagram{Peer: peer, EV: ev, Payload: marshal(t, &wire.Packet{
			Header: wire.Header{Type: wire.TypeNACK, EV: ev, Flow: f.ID(), PSN: trigger.PSN, TSEcr: trigger.TSVal},
			NACKs:  []uint32{psn},
		})})
	}
	nack := func(ev uint16, trigger *wire.Packet) { nackOf(ev, trigger, first.PSN) }
	retx := func() int {
		n := 0
		for _, d := range conn.sent[3:] {
			if p := parse(t, d); p.Type == wire.TypeData && p.Flags&wire.FlagRetx != 0 {
				n++
			}
		}
		return n
	}
	nack(8, last) // trigger on another EV: no evidence
	if retx() != 0 {
		t.Fatal("NACK from another path accepted")
	}
	nackOf(7, first, last.PSN) // trigger earlier than the copy: no evidence
	if retx() != 0 {
		t.Fatal("NACK triggered by an earlier packet accepted")
	}
	nack(7, last) // same path, later: lost
	if retx() != 1 {
		t.Fatalf("good NACK: %d retransmissions, want 1", retx())
	}
	nack(7, last) // same evidence again: the retransmission is newer
	if retx() != 1 {
		t.Fatal("stale NACK accepted twice")
	}
}

// nextSends runs the clock until conn has sent n more datagrams, one at a
// time, and returns when each went.
func nextSends(conn *wireConn, clk *clock.Virtual, n int) []clock.Time {
	var times []clock.Time
	for i := 0; i < n; i++ {
		sent := len(conn.sent)
		for len(conn.sent) == sent && clk.Step() {
		}
		times = append(times, clk.Now())
	}
	return times
}

// TestRTOBackoff sends a message into a black hole: the timer must fire
// with exponential backoff, and an ACK of the last copy completes it.
func TestRTOBackoff(t *testing.T) {
	ep, conn, clk := newEndpoint(t)
	f, _ := ep.OpenFlow(peer)
	_, _ = f.Send(100)
	times := nextSends(conn, clk, 4)
	// Initial RTO 10 ms (no sample yet), then doubling, rounded
	// up to the 250 µs timer granularity.
	want := []clock.Time{10e6, 30e6, 70e6, 150e6}
	for i := range want {
		if times[i] != want[i] {
			t.Fatalf("retransmissions at %v, want %v", times, want)
		}
	}
	last := parse(t, conn.sent[len(conn.sent)-1])
	ep.HandleDatagram(netio.Datagram{Peer: peer, EV: 7, Payload: marshal(t, &wire.Packet{
		Header: wire.Header{Type: wire.TypeACK, EV: 7, Flow: f.ID(), PSN: last.PSN, TSEcr: last.TSVal}, CumAck: last.PSN + 1,
	})})
	if !f.Idle() || f.Record().RTOs != 4 || f.Record().Retx != 4 {
		t.Errorf("after the ACK: idle %v, record %+v", f.Idle(), f.Record())
	}
}

// TestMalformedNeverPanics throws random and mutated datagrams at an
// endpoint with live flows in both directions.
func TestMalformedNeverPanics(t *testing.T) {
	ep, _, clk := newEndpoint(t)
	f, _ := ep.OpenFlow(peer)
	_, _ = f.Send(10000)
	good := [][]byte{
		marshal(t, &wire.Packet{Header: wire.Header{Type: wire.TypeData, Flow: 5, PSN: wire.InitialPSN(5)}, MsgLen: 4, Payload: []byte{1, 2, 3, 4}}),
		marshal(t, &wire.Packet{Header: wire.Header{Type: wire.TypeACK, Flow: f.ID(), PSN: wire.InitialPSN(f.ID())}, CumAck: 3}),
		marshal(t, &wire.Packet{Header: wire.Header{Type: wire.TypeNACK, Flow: f.ID()}, NACKs: []uint32{1, wire.InitialPSN(f.ID())}}),
		marshal(t, &wire.Packet{Header: wire.Header{Type: wire.TypeTail, Flow: 5}}),
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 20000; i++ {
		var b []byte
		if i%2 == 0 {
			b = append([]byte(nil), good[r.IntN(len(good))]...)
			for j := r.IntN(4); j >= 0 && len(b) > 0; j-- {
				b[r.IntN(len(b))] = byte(r.Uint32())
			}
			b = b[:r.IntN(len(b)+1)]
		} else {
			b = make([]byte, r.IntN(64))
			for j := range b {
				b[j] = byte(r.Uint32())
			}
		}
		ep.HandleDatagram(netio.Datagram{Peer: peer, EV: uint16(r.Uint32()), ECN: netio.ECN(r.IntN(4)), Payload: b})
		if i%1000 == 0 {
			clk.RunFor(time.Millisecond)
		}
	}
	st := ep.Stats()
	if st.MalformedTotal() == 0 || st.DatagramsIn != 20000 {
		t.Errorf("stats %+v", st)
	}
}

func TestConfigErrors(t *testing.T) {
	clk := clock.NewVirtual()
	conn := &wireConn{addr: netip.MustParseAddr("192.0.2.1")}
	for _, c := range []transport.Config{
		{},
		{Scheme: fixedScheme{}, Rate: -1},
		{Scheme: fixedScheme{}, MaxSegment: 5000},
		{Scheme: fixedScheme{}, Window: 10},
		{Scheme: fixedScheme{}, MinRTO: time.Second, MaxRTO: time.Millisecond},
	} {
		if _, err := transport.NewEndpoint(c, clk, conn); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
}

// TestMaxRTOScalesWithRTT: on a time-dilated fabric (a 250 ms base RTT)
// the default RTO bounds keep their room in RTTs: the 4-RTT minimum is
// above the fixed 1 s cap, which gives way to 64 RTTs, and the backoff
// doubles from the 8-RTT initial RTO up to that cap.
func TestMaxRTOScalesWithRTT(t *testing.T) {
	clk := clock.NewVirtual()
	conn := &wireConn{addr: netip.MustParseAddr("192.0.2.1")}
	ep, err := transport.NewEndpoint(transport.Config{Scheme: fixedScheme{}, BaseRTT: 250 * time.Millisecond}, clk, conn)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := ep.OpenFlow(peer)
	_, _ = f.Send(100)
	// 2 s, then 4, 8 and 16 s of backoff, then capped at 16 s.
	want := []clock.Time{2e9, 6e9, 14e9, 30e9, 46e9}
	if times := nextSends(conn, clk, len(want)); !slices.Equal(times, want) {
		t.Fatalf("retransmissions at %v, want %v", times, want)
	}
}

// TestPaperRTO: with RTO "paper" the timeout is the fabric's maximum
// unloaded RTT plus the allowance, before any sample and after, however
// short the RTTs measured; it still backs off and an ACK resets that.
func TestPaperRTO(t *testing.T) {
	clk := clock.NewVirtual()
	conn := &wireConn{addr: netip.MustParseAddr("192.0.2.1")}
	ep, err := transport.NewEndpoint(transport.Config{Scheme: fixedScheme{}, RTO: transport.RTOPaper,
		MaxRTT: 3 * time.Millisecond, RTOAllowance: 2 * time.Millisecond, MinRTO: 50 * time.Millisecond}, clk, conn)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := ep.OpenFlow(peer)
	_, _ = f.Send(100)
	times := nextSends(conn, clk, 3)
	// 5 ms (3 + 2; min_rto does not apply), then 10 and 20 ms of backoff.
	if want := []clock.Time{5e6, 15e6, 35e6}; !slices.Equal(times, want) {
		t.Fatalf("retransmissions at %v, want %v", times, want)
	}
	last := parse(t, conn.sent[len(conn.sent)-1])
	clk.RunFor(100 * time.Microsecond) // an RTT sample far below the RTO
	ep.HandleDatagram(netio.Datagram{Peer: peer, EV: 7, Payload: marshal(t, &wire.Packet{
		Header: wire.Header{Type: wire.TypeACK, EV: 7, Flow: f.ID(), PSN: last.PSN, TSEcr: last.TSVal}, CumAck: last.PSN + 1,
	})})
	if r := f.Record(); r.RTONs != int64(5*time.Millisecond) || r.SRTTNs != int64(100*time.Microsecond) {
		t.Errorf("after an ACK with a 100 µs sample: RTO %v, SRTT %v; want 5 ms and 100 µs", time.Duration(r.RTONs), time.Duration(r.SRTTNs))
	}
	for _, c := range []transport.Config{
		{Scheme: fixedScheme{}, RTO: "fixed"},
		{Scheme: fixedScheme{}, RTO: transport.RTOPaper, MaxRTT: time.Second, RTOAllowance: time.Second},
	} {
		if _, err := transport.NewEndpoint(c, clk, conn); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
}

// TestTrimmedHeaderIsNACKed: the header of a DATA copy a switch trimmed
// makes its receiver NACK that PSN at once, naming the trimmed copy as the
// trigger; the sender takes it as evidence about that very copy and
// retransmits it, once. A trimmed copy of a PSN already received, and a
// NACK naming an older copy as the trigger, change nothing.
func TestTrimmedHeaderIsNACKed(t *testing.T) {
	snd, sconn, sclk := newEndpoint(t)
	rcv, rconn, _ := newEndpoint(t)
	f, err := snd.OpenFlow(peer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Send(3 * 1400); err != nil {
		t.Fatal(err)
	}
	if len(sconn.sent) != 3 {
		t.Fatalf("sent %d datagrams, want 3 (unpaced)", len(sconn.sent))
	}
	trimmed := func(d netio.Datagram) netio.Datagram {
		return netio.Datagram{Peer: peer, EV: d.EV, Payload: d.Payload[:64]} // a trimming switch keeps 64 bytes of UDP payload (bpf.TrimKeep)
	}
	var hdr wire.Packet
	if err := wire.ParseTrimmed(trimmed(sconn.sent[1]).Payload, &hdr); err != nil {
		t.Fatal(err)
	}
	if err := wire.ParseTrimmed(sconn.sent[1].Payload, &hdr); err == nil {
		t.Error("ParseTrimmed took a whole DATA packet")
	}
	rcv.HandleDatagram(netio.Datagram{Peer: peer, EV: sconn.sent[0].EV, Payload: sconn.sent[0].Payload})
	rcv.HandleDatagram(trimmed(sconn.sent[0])) // its PSN is here already
	rcv.HandleDatagram(trimmed(sconn.sent[1]))
	var nacks []*wire.Packet
	for _, d := range rconn.sent {
		if p := parse(t, d); p.Type == wire.TypeNACK {
			nacks = append(nacks, p)
		}
	}
	mid := parse(t, sconn.sent[1])
	if len(nacks) != 1 || len(nacks[0].NACKs) != 1 || nacks[0].NACKs[0] != mid.PSN || nacks[0].PSN != mid.PSN || nacks[0].TSEcr != mid.TSVal {
		t.Fatalf("NACKs %+v, want one for PSN %d triggered by the trimmed copy", nacks, mid.PSN)
	}
	if st := rcv.Stats(); st.TrimmedIn != 2 || st.MalformedTotal() != 0 {
		t.Errorf("receiver stats: %d trimmed, %d malformed; want 2 and 0", st.TrimmedIn, st.MalformedTotal())
	}
	deliverNACK := func() {
		sclk.RunFor(time.Microsecond)
		snd.HandleDatagram(netio.Datagram{Peer: peer, EV: nacks[0].EV, Payload: marshal(t, nacks[0])})
	}
	retx := func() []uint32 {
		var psns []uint32
		for _, d := range sconn.sent[3:] {
			if p := parse(t, d); p.Type == wire.TypeData && p.Flags&wire.FlagRetx != 0 {
				psns = append(psns, p.PSN)
			}
		}
		return psns
	}
	deliverNACK()
	if got := retx(); len(got) != 1 || got[0] != mid.PSN {
		t.Fatalf("after the trim NACK: retransmissions %v, want [%d]", got, mid.PSN)
	}
	deliverNACK() // the same trimmed copy again: the retransmission is newer
	if got := retx(); len(got) != 1 {
		t.Errorf("a stale trim NACK retransmitted again: %v", got)
	}
}
