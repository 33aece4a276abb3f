package transport_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/netio"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/hostagent/wire"
)

// mss is the payload of a full packet on wireConn: 1472 less the DATA
// header.
const mss = 1472 - wire.DataLen

// fixedCC is a congestion control whose window the test sets, recording
// what the engine tells it.
type fixedCC struct {
	flow   transport.CCFlow
	window int
	acks   []transport.CCAck
	losses []transport.CCLoss
	rtos   []int
}

func (c *fixedCC) Name() string                                { return "fixed" }
func (c *fixedCC) NewFlow(f transport.CCFlow) transport.FlowCC { c.flow = f; return c }
func (c *fixedCC) OnACK(a transport.CCAck)                     { c.acks = append(c.acks, a) }
func (c *fixedCC) OnLoss(l transport.CCLoss)                   { c.losses = append(c.losses, l) }
func (c *fixedCC) OnRTO(_ clock.Time, lost int)                { c.rtos = append(c.rtos, lost) }
func (c *fixedCC) Window() int                                 { return c.window }

func newCCEndpoint(t *testing.T, c *fixedCC, rate float64) (*transport.Endpoint, *wireConn, *clock.Virtual) {
	t.Helper()
	clk := clock.NewVirtual()
	conn := &wireConn{addr: netip.MustParseAddr("192.0.2.1")}
	ep, err := transport.NewEndpoint(transport.Config{
		Scheme: fixedScheme{}, CC: c, Rate: rate, Window: 64 << 10, BaseRTT: 100 * time.Microsecond,
		MinRTO: time.Millisecond, InitialRTO: 10 * time.Millisecond,
	}, clk, conn)
	if err != nil {
		t.Fatal(err)
	}
	return ep, conn, clk
}

func dataSent(t *testing.T, conn *wireConn) []*wire.Packet {
	var out []*wire.Packet
	for _, d := range conn.sent {
		if p := parse(t, d); p.Type == wire.TypeData {
			out = append(out, p)
		}
	}
	return out
}

// ack acknowledges p (cumulatively up to it) after d, with ECE if ce.
func ack(t *testing.T, ep *transport.Endpoint, clk *clock.Virtual, flow uint32, p *wire.Packet, d time.Duration, ce bool) {
	t.Helper()
	clk.RunFor(d)
	a := &wire.Packet{Header: wire.Header{Type: wire.TypeACK, EV: 7, Flow: flow, PSN: p.PSN, TSEcr: p.TSVal}, CumAck: p.PSN + 1}
	if ce {
		a.Flags |= wire.FlagECE
	}
	ep.HandleDatagram(netio.Datagram{Peer: peer, EV: 7, Payload: marshal(t, a)})
}

// TestCCWindowLimitsFlight: the controller's window, not Config.Window,
// bounds what is in flight; each ACK reports what it acknowledged, its
// mark and its RTT; the pacing rate is window over RTT.
func TestCCWindowLimitsFlight(t *testing.T) {
	c := &fixedCC{window: 3 * mss}
	ep, conn, clk := newCCEndpoint(t, c, 0)
	f, err := ep.OpenFlow(peer)
	if err != nil {
		t.Fatal(err)
	}
	if want := (transport.CCFlow{MSS: mss, PacketBytes: mss + wire.DataLen + 42, BaseRTT: 100 * time.Microsecond, MaxWindow: 64 << 10}); c.flow != want {
		t.Errorf("flow %+v, want %+v", c.flow, want)
	}
	if _, err := f.Send(10 * mss); err != nil {
		t.Fatal(err)
	}
	clk.RunFor(time.Millisecond) // long enough for the pacer; no ACK comes
	sent := dataSent(t, conn)
	if len(sent) != 3 {
		t.Fatalf("%d packets in flight, want the window's 3", len(sent))
	}
	// Paced at the window over the base RTT (no sample yet): 3 packets
	// per 100 us, one every 33 us.
	if g := sent[2].TSVal - sent[1].TSVal; g < 33000 || g > 34000 {
		t.Errorf("packets %d ns apart, want 33 us: the window over the base RTT", g)
	}
	ack(t, ep, clk, f.ID(), sent[0], 0, true)
	a := c.acks[len(c.acks)-1]
	want := transport.CCAck{At: a.At, Bytes: mss, Packets: 1, CE: true, RTT: a.RTT, SRTT: a.RTT, MinRTT: a.RTT,
		Inflight: 2 * mss, CumAck: sent[0].PSN + 1, NextPSN: sent[0].PSN + 3}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("ACK as the controller saw it (-want +got):\n%s", diff)
	}
	if a.RTT < time.Millisecond {
		t.Errorf("RTT sample %v, want about the millisecond waited", a.RTT)
	}
	clk.RunFor(time.Millisecond)
	if n := len(dataSent(t, conn)); n != 4 {
		t.Errorf("after one ACK %d packets sent, want 4", n)
	}
	rec := f.Record().CC
	// Window 3 x mss payload bytes, 1514 on the wire each, over the
	// smoothed RTT.
	wantRate := 3 * (mss + 82) * 8 / time.Duration(f.Record().SRTTNs).Seconds()
	if rec == nil || rec.Name != "fixed" || rec.WindowBytes != 3*mss || rec.RateBps < 0.99*wantRate || rec.RateBps > 1.01*wantRate {
		t.Errorf("record %+v, want window %d at %.0f bit/s", rec, 3*mss, wantRate)
	}
}

// TestCCPacingCappedAtLineRate: a window far above the BDP paces at the
// line rate, not faster.
func TestCCPacingCappedAtLineRate(t *testing.T) {
	c := &fixedCC{window: 1 << 30}
	ep, _, _ := newCCEndpoint(t, c, 1e9)
	f, _ := ep.OpenFlow(peer)
	if r := f.Record(); r.CC.RateBps != 1e9 || r.Pacing.TargetBps != 1e9 {
		t.Errorf("pacing at %v (record %v), want the line rate", r.CC.RateBps, r.Pacing.TargetBps)
	}
}

// TestCCHearsLosses: a NACKed packet is reported as a loss with its
// cause; a timeout reports each packet it declares lost, then itself.
func TestCCHearsLosses(t *testing.T) {
	c := &fixedCC{window: 1 << 20}
	ep, conn, clk := newCCEndpoint(t, c, 0)
	f, _ := ep.OpenFlow(peer)
	_, _ = f.Send(3 * mss)
	clk.RunFor(time.Microsecond * 300)
	sent := dataSent(t, conn)
	if len(sent) != 3 {
		t.Fatalf("sent %d", len(sent))
	}
	clk.RunFor(time.Microsecond)
	ep.HandleDatagram(netio.Datagram{Peer: peer, EV: 7, Payload: marshal(t, &wire.Packet{
		Header: wire.Header{Type: wire.TypeNACK, EV: 7, Flow: f.ID(), PSN: sent[2].PSN, TSEcr: sent[2].TSVal},
		NACKs:  []uint32{sent[0].PSN},
	})})
	if len(c.losses) != 1 || c.losses[0].Cause != transport.CauseNACK || c.losses[0].PSN != sent[0].PSN || c.losses[0].Bytes != mss {
		t.Fatalf("after a NACK the controller heard %+v", c.losses)
	}
	c.losses = nil
	// Nothing is acknowledged: the timer fires for the two packets sent
	// first (the retransmission of the third is newer).
	clk.RunFor(10500 * time.Microsecond)
	if len(c.rtos) != 1 || c.rtos[0] != 2 || len(c.losses) != 2 {
		t.Fatalf("after a timeout: losses %+v, timeouts %v", c.losses, c.rtos)
	}
	for _, l := range c.losses {
		if l.Cause != transport.CauseRTO {
			t.Errorf("loss %+v: want cause rto", l)
		}
	}
}
