package transport_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/netio"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/hostagent/wire"
)

// timedConn records what is sent and when.
type timedConn struct {
	wireConn
	clk *clock.Virtual
	at  []clock.Time
}

func (c *timedConn) Send(d netio.Datagram) error {
	c.at = append(c.at, c.clk.Now())
	return c.wireConn.Send(d)
}

// probingScheme queues two probes behind every DATA copy it sends, as a
// scheme with tail, periodic and RTX probes may after one packet.
type probingScheme struct{ fixedScheme }

func (probingScheme) NewSender(env transport.SenderEnv) transport.SenderScheme {
	return &probingSender{env: env}
}

type probingSender struct {
	fixedSender
	env transport.SenderEnv
}

func (s *probingSender) OnSent(p transport.SentPacket) {
	s.env.SendProbe(wire.TypeTail, p.EV, p.PSN)
	s.env.SendProbe(wire.TypePeriodic, p.EV, p.PSN)
}

// TestProbesAreLowPriority: probes go only in slots no data could use.
// A paced flow with data always ready sends all of it back to back at its
// pacing slots, the probes after; a flow held by its window sends the
// probes while it waits, and the data an ACK lets go waits for at most
// one probe's serialization.
func TestProbesAreLowPriority(t *testing.T) {
	const rate = 1e9 // bit/s
	seg := 1472 - wire.DataLen
	slot := func(payload int) time.Duration { // serialization of a UDP payload at the pacing rate
		return time.Duration(float64(payload+transport.DefaultOverhead) * 8e9 / rate)
	}
	setup := func(t *testing.T, window int) (*timedConn, *transport.Flow, *transport.Endpoint, *clock.Virtual) {
		clk := clock.NewVirtual()
		conn := &timedConn{wireConn: wireConn{addr: netip.MustParseAddr("192.0.2.1")}, clk: clk}
		ep, err := transport.NewEndpoint(transport.Config{Scheme: probingScheme{}, Rate: rate, Window: window,
			MinRTO: time.Second, InitialRTO: time.Second}, clk, conn)
		if err != nil {
			t.Fatal(err)
		}
		f, err := ep.OpenFlow(peer)
		if err != nil {
			t.Fatal(err)
		}
		return conn, f, ep, clk
	}

	t.Run("data ready", func(t *testing.T) {
		conn, f, _, clk := setup(t, 1<<20)
		const n = 10
		if _, err := f.Send(n * seg); err != nil {
			t.Fatal(err)
		}
		clk.RunFor(time.Millisecond)
		if len(conn.sent) != 3*n {
			t.Fatalf("%d datagrams, want %d DATA and %d probes", len(conn.sent), n, 2*n)
		}
		for i, d := range conn.sent {
			p := parse(t, d)
			if (i < n) != (p.Type == wire.TypeData) {
				t.Fatalf("datagram %d is %v: every DATA packet must leave before any probe", i, p.Type)
			}
			if i < n && conn.at[i] != clock.Time(i)*clock.Time(slot(wire.DataLen+seg)) {
				t.Errorf("DATA %d left at %v, want its pacing slot %v", i, conn.at[i], time.Duration(i)*slot(wire.DataLen+seg))
			}
		}
	})

	t.Run("window held", func(t *testing.T) {
		conn, f, ep, clk := setup(t, 2*seg)
		if _, err := f.Send(4 * seg); err != nil {
			t.Fatal(err)
		}
		// 2 DATA, then their 4 probes in the slots the window leaves idle.
		for len(conn.sent) < 3 && clk.Step() {
		}
		if len(conn.sent) != 3 || parse(t, conn.sent[1]).Type != wire.TypeData || parse(t, conn.sent[2]).Type == wire.TypeData {
			t.Fatalf("want 2 DATA, then a probe: %d datagrams", len(conn.sent))
		}
		// ACK the first packet just after the first probe started: the
		// next DATA may wait for that probe, not for the 3 behind it.
		first := parse(t, conn.sent[0])
		ackAt := conn.at[2] + 1
		clk.RunUntil(ackAt)
		ep.HandleDatagram(netio.Datagram{Peer: peer, EV: 7, Payload: marshal(t, &wire.Packet{
			Header: wire.Header{Type: wire.TypeACK, EV: 7, Flow: f.ID(), PSN: first.PSN, TSEcr: first.TSVal}, CumAck: first.PSN + 1,
		})})
		clk.RunFor(100 * time.Microsecond)
		for i, d := range conn.sent {
			if p := parse(t, d); p.Type == wire.TypeData && p.PSN == first.PSN+2 {
				probe := slot(wire.CommonLen)
				if wait := time.Duration(conn.at[i] - ackAt); wait > probe {
					t.Errorf("DATA let go by the ACK at %v left %v later; a probe takes %v", time.Duration(ackAt), wait, probe)
				}
				return
			}
		}
		t.Fatal("the ACK let no DATA go")
	})
}

// ackingScheme records what an AckObserver hears, and its flow's env.
type ackingScheme struct {
	fixedScheme
	rec *ackRecord
}

type ackRecord struct {
	env   transport.SenderEnv
	acked []transport.AckedPacket
}

func (s ackingScheme) NewSender(env transport.SenderEnv) transport.SenderScheme {
	s.rec.env = env
	return ackingSender{rec: s.rec}
}

type ackingSender struct {
	fixedSender
	rec *ackRecord
}

func (s ackingSender) OnAcked(a transport.AckedPacket) { s.rec.acked = append(s.rec.acked, a) }

// TestAckObserver: a scheme that observes acknowledgments hears of every
// PSN once, as it becomes acknowledged: the one an ACK answers with the
// exact send time of the copy it echoes, the ones its selective part
// covers with their latest copy's; Acked agrees.
func TestAckObserver(t *testing.T) {
	rec := &ackRecord{}
	clk := clock.NewVirtual()
	conn := &wireConn{addr: netip.MustParseAddr("192.0.2.1")}
	ep, err := transport.NewEndpoint(transport.Config{Scheme: ackingScheme{rec: rec}, MinRTO: time.Second, InitialRTO: time.Second}, clk, conn)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := ep.OpenFlow(peer)
	_, _ = f.Send(4 * 1400)
	clk.RunFor(time.Microsecond)
	pk := []*wire.Packet{parse(t, conn.sent[0]), parse(t, conn.sent[1]), parse(t, conn.sent[2]), parse(t, conn.sent[3])}
	ack := func(p *wire.Packet, cum uint32, sack uint64) {
		clk.RunFor(10 * time.Microsecond)
		ep.HandleDatagram(netio.Datagram{Peer: peer, EV: 7, Payload: marshal(t, &wire.Packet{
			Header: wire.Header{Type: wire.TypeACK, EV: 7, Flow: f.ID(), PSN: p.PSN, TSEcr: p.TSVal}, CumAck: cum, SACK: sack,
		})})
	}
	ack(pk[3], pk[0].PSN, 0b010) // answers PSN 3, selectively acknowledges PSN 1 (bit 1: 3-1-1)
	ack(pk[1], pk[0].PSN, 0)     // PSN 1 again: no news
	if len(rec.acked) != 2 || rec.acked[0].PSN != pk[3].PSN || !rec.acked[0].Echoed || rec.acked[0].SentAt != clock.Time(pk[3].TSVal) ||
		rec.acked[1].PSN != pk[1].PSN || rec.acked[1].Echoed || rec.acked[1].Copies != 1 {
		t.Fatalf("heard %+v", rec.acked)
	}
	if !rec.env.Acked(pk[1].PSN) || rec.env.Acked(pk[0].PSN) || rec.env.Acked(pk[2].PSN) || rec.env.Acked(pk[3].PSN+1) {
		t.Error("Acked disagrees with the ACKs")
	}
	ack(pk[2], pk[3].PSN+1, 0) // cumulative: 0 and 2 are news
	if len(rec.acked) != 4 || !rec.env.Acked(pk[0].PSN) {
		t.Errorf("after the cumulative ACK: heard %+v", rec.acked)
	}
}
