package agent_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ftlab/ftlab/hostagent/agent"
	"github.com/ftlab/ftlab/hostagent/control"
	"github.com/ftlab/ftlab/hostagent/netio"
	"github.com/ftlab/ftlab/hostagent/scheme"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/hostagent/wire"
	"github.com/ftlab/ftlab/internal/params"
	"github.com/ftlab/ftlab/internal/testlab"
)

// memNet is an in-memory network of memConns: lossless, instant, FIFO.
// Readiness is signalled through a pipe, so the agent's loop polls it
// like a socket. It lets the protocol be tested without root.
type memNet struct {
	mu    sync.Mutex
	hosts map[netip.Addr]*memConn
	// delay and jitter are added to every agents' packet's header words,
	// as the switches of a fabric with link delays do.
	delay, jitter uint32
}

type memConn struct {
	net   *memNet
	addr  netip.Addr
	r, w  int // pipe: a byte per wake-up
	mu    sync.Mutex
	queue []netio.Datagram
	stats netio.SocketStats
}

func (n *memNet) conn(t *testing.T, addr string) *memConn {
	t.Helper()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	c := &memConn{net: n, addr: netip.MustParseAddr(addr), r: p[0], w: p[1]}
	n.mu.Lock()
	if n.hosts == nil {
		n.hosts = map[netip.Addr]*memConn{}
	}
	n.hosts[c.addr] = c
	n.mu.Unlock()
	return c
}

func (c *memConn) Send(d netio.Datagram) error {
	c.net.mu.Lock()
	peer := c.net.hosts[d.Peer]
	c.net.mu.Unlock()
	c.stats.TxDatagrams++
	if peer == nil {
		return nil // lost
	}
	p := bytes.Clone(d.Payload)
	if len(p) >= wire.CommonLen && (c.net.delay != 0 || c.net.jitter != 0) {
		binary.BigEndian.PutUint32(p[wire.DelayOff:], binary.BigEndian.Uint32(p[wire.DelayOff:])+c.net.delay)
		binary.BigEndian.PutUint32(p[wire.JitterOff:], binary.BigEndian.Uint32(p[wire.JitterOff:])+c.net.jitter)
	}
	peer.mu.Lock()
	peer.queue = append(peer.queue, netio.Datagram{Peer: c.addr, EV: d.EV, ECN: d.ECN, Payload: p})
	peer.mu.Unlock()
	_, _ = unix.Write(peer.w, []byte{1})
	return nil
}

func (c *memConn) ReadBatch(r netio.Receiver) (int, error) {
	var buf [256]byte
	for {
		if n, _ := unix.Read(c.r, buf[:]); n < len(buf) {
			break
		}
	}
	c.mu.Lock()
	q := c.queue
	c.queue = nil
	c.mu.Unlock()
	for _, d := range q {
		c.stats.RxDatagrams++
		r.HandleDatagram(d)
	}
	return len(q), nil
}

func (c *memConn) LocalAddr() netip.Addr    { return c.addr }
func (c *memConn) MaxPayload() int          { return 1472 }
func (c *memConn) Port() uint16             { return 4791 }
func (c *memConn) Fd() int                  { return c.r }
func (c *memConn) Batch() int               { return 1 << 30 } // ReadBatch drains the queue
func (c *memConn) Timestamp() error         { return nil }     // arrivals count when read
func (c *memConn) Flush() error             { return nil }
func (c *memConn) Stats() netio.SocketStats { return c.stats }
func (c *memConn) Close() error {
	c.net.mu.Lock()
	delete(c.net.hosts, c.addr)
	c.net.mu.Unlock()
	return errorsJoin(unix.Close(c.r), unix.Close(c.w))
}

func errorsJoin(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func startMem(t *testing.T, n *memNet, addr string) *agent.Handle {
	t.Helper()
	h, err := agent.Start(context.Background(), agent.Options{Conn: n.conn(t, addr)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Stop(); _ = h.Wait() })
	if h.Ready.Addr != addr || h.Ready.Port != 4791 || h.Ready.Version != control.Version {
		t.Fatalf("ready %+v", h.Ready)
	}
	return h
}

func nextEvent(t *testing.T, h *agent.Handle) control.Event {
	t.Helper()
	select {
	case ev, ok := <-h.Events():
		if !ok {
			t.Fatal("events ended")
		}
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event in 5 s")
	}
	return nil
}

func expect[T control.Event](t *testing.T, h *agent.Handle) T {
	t.Helper()
	ev := nextEvent(t, h)
	e, ok := ev.(T)
	if !ok {
		t.Fatalf("event %T %+v, want %T", ev, ev, e)
	}
	return e
}

// TestProtocol drives two agents over the in-memory network through the
// protocol: configure, messages both ways (an empty one too), stats,
// stop; deliveries match sends by key.
func TestProtocol(t *testing.T) {
	var n memNet
	a, b := startMem(t, &n, "10.0.0.2"), startMem(t, &n, "10.2.1.3")
	p := scheme.MustDefaults("rss+pfld", params.Env{RTT: transport.NominalBaseRTT})
	p.RSS.Sigma = 8
	cfg := &control.Configure{Scheme: "rss+pfld", Params: p, Transport: control.Transport{HostParams: transport.HostParams{Pacing: 10e9}, Seed: 7}}
	for _, h := range []*agent.Handle{a, b} {
		if err := h.Do(cfg); err != nil {
			t.Fatal(err)
		}
		c := expect[*control.Configured](t, h)
		if c.Scheme != "rss+pfld" || c.Transport.SegmentBytes != 1424 || c.Transport.Window != 256<<10 || c.Transport.MinRTO != time.Millisecond || c.Name != h.Ready.Addr {
			t.Fatalf("configured %+v", c)
		}
	}
	sizes := []uint64{0, 1, 100000, 3 << 20}
	for i, size := range sizes {
		if err := a.Do(&control.Send{Msg: int64(100 + i), To: b.Ready.Addr, Bytes: size}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Do(&control.Send{Msg: 7, To: a.Ready.Addr, Bytes: 5000}); err != nil {
		t.Fatal(err)
	}
	sent := map[control.MessageKey]*control.Sent{}
	recv := map[control.MessageKey]*control.Received{}
	flows := map[int64]bool{}
	for len(sent) < 5 || len(recv) < 5 || len(flows) < 5 {
		var ev control.Event
		var from *agent.Handle
		select {
		case ev = <-a.Events():
			from = a
		case ev = <-b.Events():
			from = b
		case <-time.After(5 * time.Second):
			t.Fatalf("stuck: %d sent, %d received, %d flows", len(sent), len(recv), len(flows))
		}
		switch e := ev.(type) {
		case *control.Sent:
			sent[e.Key(from.Ready.Addr)] = e
		case *control.Received:
			recv[e.Key()] = e
		case *control.Flow:
			if !e.Done || e.Record.Messages != 1 {
				t.Errorf("flow %+v", e)
			}
			flows[e.Msg] = true
		default:
			t.Fatalf("unexpected %T %+v", ev, ev)
		}
	}
	for k, s := range sent {
		r := recv[k]
		if r == nil {
			t.Fatalf("message %d (%+v) not delivered", s.Msg, k)
		}
		if r.Record.Bytes != s.Record.Bytes || !r.Record.Verified {
			t.Errorf("message %d: sent %d, delivered %d", s.Msg, s.Record.Bytes, r.Record.Bytes)
		}
		if s.Msg >= 100 && uint64(s.Record.Bytes) != sizes[s.Msg-100] {
			t.Errorf("message %d has %d bytes", s.Msg, s.Record.Bytes)
		}
	}
	if err := a.Do(&control.StatsQuery{}); err != nil {
		t.Fatal(err)
	}
	st := expect[*control.Stats](t, a)
	if st.Final || st.Sent != 4 || st.Received != 1 || st.Pending != 0 || st.Endpoint.DatagramsOut == 0 {
		t.Errorf("stats %+v", st)
	}
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	if st := expect[*control.Stats](t, a); !st.Final {
		t.Error("stop did not end with final stats")
	}
	if _, ok := <-a.Events(); ok {
		t.Error("events after the final stats")
	}
	if err := a.Wait(); err != nil {
		t.Fatal(err)
	}
}

// TestBadInput: every malformed or impossible command gets an error event
// and the agent carries on; end of input stops it cleanly.
func TestBadInput(t *testing.T) {
	var n memNet
	a := startMem(t, &n, "10.0.0.2")
	for _, tt := range []struct{ line, want string }{
		{`garbage`, "not a JSON object"},
		{`{"cmd":"launch"}`, `unknown command "launch"`},
		{`{"cmd":"send","msg":1,"to":"10.0.0.3","bytes":10,"colour":"red"}`, `unknown field "colour"`},
		{`{"cmd":"send","msg":4,"to":"10.0.0.3","bytes":10}`, "send: not configured"},
		{`{"cmd":"configure","scheme":"warp","transport":{}}`, `unknown scheme "warp"`},
		{`{"cmd":"configure","scheme":"rss","params":{"rss":{"sigmaa":4}},"transport":{}}`, `unknown field "sigmaa"`},
		{`{"cmd":"configure","scheme":"rss","params":{"rss":{"sigma":"many"}},"transport":{}}`, `sigma`},
		{`{"cmd":"configure","scheme":"rss","params":{"rss":{"sigma":12,"tau_ns":1000,"metric":"mean-rtt"}},"transport":{}}`, `rss.sigma: 12 is not a power of two`},
		{`{"cmd":"configure","scheme":"rss","params":{"pfld":{"bitmap_bits":512}},"transport":{}}`, `the rss block is missing`},
		{`{"cmd":"configure","scheme":"rss","transport":{"mtu":9000}}`, `above the socket's 1500`},
		{`{"cmd":"configure","scheme":"rss","transport":{}}`, ""},
		{`{"cmd":"configure","scheme":"rss","transport":{}}`, "already configured"},
		{`{"cmd":"send","msg":5,"to":"10.0.0.256","bytes":10}`, "not an IPv4 address"},
		{`{"cmd":"send","msg":6,"to":"10.0.0.3","bytes":-4}`, "cannot unmarshal"},
		{`{"cmd":"stop","please":1}`, `unknown field "please"`},
		{`{"cmd":"` + strings.Repeat("x", control.MaxLine) + `"}`, "line too long"},
		{`{"cmd":"stats"}`, ""},
	} {
		if err := a.WriteLine(tt.line); err != nil {
			t.Fatal(err)
		}
		ev := nextEvent(t, a)
		if tt.want == "" {
			if e, ok := ev.(*control.Error); ok {
				t.Fatalf("%.60s: error %s", tt.line, e.Error)
			}
			continue
		}
		e, ok := ev.(*control.Error)
		if !ok || !strings.Contains(e.Error, tt.want) {
			t.Fatalf("%.60s: event %T %+v, want an error containing %q", tt.line, ev, ev, tt.want)
		}
		if e.Input == "" && tt.want != "line too long" {
			t.Errorf("%.60s: error without the input", tt.line)
		}
		if strings.HasPrefix(e.Error, "send: not") && (e.Msg == nil || *e.Msg != 4) {
			t.Errorf("send error without its msg id: %+v", e)
		}
	}
	// A send to a host that is not there: the agent tries (RTOs), and stop
	// reports the unfinished message.
	if err := a.WriteLine(`{"cmd":"send","msg":9,"to":"10.9.9.9","bytes":3000}`); err != nil {
		t.Fatal(err)
	}
	if err := a.Stop(); err != nil { // also closes the input
		t.Fatal(err)
	}
	f := expect[*control.Flow](t, a)
	if f.Msg != 9 || f.Done || f.Record.Packets == 0 {
		t.Errorf("unfinished flow %+v", f)
	}
	st := expect[*control.Stats](t, a)
	if !st.Final || st.Errors != 15 || st.Pending != 1 { // one per bad line above
		t.Errorf("final stats: errors %d pending %d final %v", st.Errors, st.Pending, st.Final)
	}
	if err := a.Wait(); err != nil {
		t.Fatal(err)
	}
}

// TestEndOfInputStops: closing stdin without stop stops the agent, with
// its final stats and a nil error; cancelling the context stops it too.
func TestEndOfInputStops(t *testing.T) {
	var n memNet
	conn := n.conn(t, "10.0.0.2")
	pr, pw := io.Pipe()
	var out testlab.SyncBuffer
	done := make(chan error)
	go func() { done <- agent.Serve(context.Background(), pr, &out, agent.Options{Conn: conn}) }()
	_, _ = pw.Write([]byte(`{"cmd":"stats"}` + "\n"))
	_ = pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"event":"ready"`) || !strings.Contains(lines[2], `"final":true`) {
		t.Fatalf("output:\n%s", out.String())
	}

	ctx, cancel := context.WithCancel(context.Background())
	pr, pw = io.Pipe()
	defer pw.Close()
	out.Reset()
	go func() { done <- agent.Serve(ctx, pr, &out, agent.Options{Conn: n.conn(t, "10.0.0.3")}) }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Serve returned %v after cancel", err)
	}
	if !strings.Contains(out.String(), `"final":true`) {
		t.Fatalf("no final stats after cancel:\n%s", out.String())
	}
}

// TestSharedLoop: eight agents on one loop of a pool send to each other
// (a ring), every message is delivered once, verified; an agent that
// stops leaves the loop serving the others, and its unfinished message
// and timers go with it.
func TestSharedLoop(t *testing.T) {
	pool, err := agent.NewPool(1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // after the agents' cleanups: they run last-in first-out
		if err := pool.Close(); err != nil {
			t.Error(err)
		}
	})
	var n memNet
	const hosts = 8
	hs := make([]*agent.Handle, hosts)
	for i := range hs {
		h, err := agent.Start(context.Background(), agent.Options{Conn: n.conn(t, fmt.Sprintf("10.0.%d.2", i)), Loop: pool.Loop()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = h.Stop(); _ = h.Wait() })
		hs[i] = h
		if err := h.Do(&control.Configure{Scheme: "rss+pfld", Transport: control.Transport{HostParams: transport.HostParams{Pacing: 1e9}}}); err != nil {
			t.Fatal(err)
		}
		expect[*control.Configured](t, h)
	}
	// The last agent sends to a host that is not there, then stops.
	if err := hs[hosts-1].Do(&control.Send{Msg: 99, To: "10.9.9.9", Bytes: 3000}); err != nil {
		t.Fatal(err)
	}
	if err := hs[hosts-1].Stop(); err != nil {
		t.Fatal(err)
	}
	if f := expect[*control.Flow](t, hs[hosts-1]); f.Done {
		t.Errorf("flow to nowhere done: %+v", f)
	}
	if st := expect[*control.Stats](t, hs[hosts-1]); !st.Final || st.Loop.Agents != hosts {
		t.Errorf("final stats of the stopped agent: final %v, %d agents on its loop (want %d: it leaves after)", st.Final, st.Loop.Agents, hosts)
	}
	const size = 200000
	for i := range hosts - 1 {
		if err := hs[i].Do(&control.Send{Msg: int64(i), To: hs[(i+1)%(hosts-1)].Ready.Addr, Bytes: size}); err != nil {
			t.Fatal(err)
		}
	}
	sent, recv := 0, 0
	for i := range hosts - 1 {
		for got := 0; got < 3; got++ { // sent, flow and one delivery each
			switch e := nextEvent(t, hs[i]).(type) {
			case *control.Sent:
				sent++
			case *control.Received:
				if !e.Record.Verified || e.Record.Bytes != size {
					t.Errorf("agent %d delivered %+v", i, e.Record)
				}
				recv++
			case *control.Flow:
			default:
				t.Fatalf("agent %d: %T %+v", i, e, e)
			}
		}
	}
	if sent != hosts-1 || recv != hosts-1 {
		t.Errorf("%d sent, %d delivered, want %d each", sent, recv, hosts-1)
	}
	if err := hs[0].Do(&control.StatsQuery{}); err != nil {
		t.Fatal(err)
	}
	if st := expect[*control.Stats](t, hs[0]); st.Loop.Agents != hosts-1 || st.Loop.QuantumNs == 0 {
		t.Errorf("loop stats %+v: want %d agents and a quantum", st.Loop, hosts-1)
	}
}

// TestDelayLine: with link delays (the in-memory network adds them to
// the headers as switches do) and an access delay, every packet waits
// its path's delay, both ways, so the RTT is twice the path's; with
// jitter each path stays FIFO; and the delay line accounts for every
// packet it held, per message and per flow.
func TestDelayLine(t *testing.T) {
	const fabric, access = 3 * time.Millisecond, 2 * time.Millisecond
	for _, jitter := range []time.Duration{0, time.Millisecond} {
		t.Run(fmt.Sprint("jitter ", jitter), func(t *testing.T) {
			n := memNet{delay: uint32(fabric), jitter: uint32(jitter)}
			a, b := startMem(t, &n, "10.0.0.2"), startMem(t, &n, "10.2.1.3")
			cfg := &control.Configure{Scheme: "ecmp", Transport: control.Transport{
				HostParams: transport.HostParams{Pacing: 1e9, MinRTO: 200 * time.Millisecond, InitialRTO: 200 * time.Millisecond},
				Seed:       5, DelayLine: true, AccessDelayNs: int64(access),
			}}
			for _, h := range []*agent.Handle{a, b} {
				if err := h.Do(cfg); err != nil {
					t.Fatal(err)
				}
				expect[*control.Configured](t, h)
			}
			const size = 300000
			if err := a.Do(&control.Send{Msg: 1, To: b.Ready.Addr, Bytes: size}); err != nil {
				t.Fatal(err)
			}
			r := expect[*control.Received](t, b).Record
			expect[*control.Sent](t, a)
			f := expect[*control.Flow](t, a).Record
			path := fabric + access
			if r.Delay == nil || f.Delay == nil {
				t.Fatalf("no delay accounts: delivery %+v, flow %+v", r.Delay, f.Delay)
			}
			if r.Delay.Packets < uint64(r.Packets) || time.Duration(r.Delay.DelaySum/int64(r.Delay.Packets)) != path {
				t.Errorf("delivery: %d packets held of %d, mean delay %v, want %v", r.Delay.Packets, r.Packets,
					time.Duration(r.Delay.DelaySum/int64(max(r.Delay.Packets, 1))), path)
			}
			if f.Delay.Packets == 0 || time.Duration(f.Delay.DelaySum/int64(f.Delay.Packets)) != path {
				t.Errorf("flow: %d ACKs held, mean delay %v, want %v", f.Delay.Packets, time.Duration(f.Delay.DelaySum/int64(max(f.Delay.Packets, 1))), path)
			}
			if rtt := time.Duration(f.MinRTTNs); rtt < 2*path || rtt > 2*path+time.Duration(jitter)*2+50*time.Millisecond {
				t.Errorf("min RTT %v, want at least %v", rtt, 2*path)
			}
			if r.ReorderedSameEV != 0 {
				t.Errorf("%d packets reordered on one EV", r.ReorderedSameEV)
			}
			t.Logf("min RTT %v (2 x %v of path delay); delivery: %d held, late mean %.0fµs max %v",
				time.Duration(f.MinRTTNs), path, r.Delay.Packets, r.Delay.MeanLateNs()/1e3, time.Duration(r.Delay.LateMaxNs))
			if err := b.Do(&control.StatsQuery{}); err != nil {
				t.Fatal(err)
			}
			if st := expect[*control.Stats](t, b); st.Delay == nil || st.Delay.Packets < r.Delay.Packets || st.DelayHeld == 0 {
				t.Errorf("stats: delay %+v, held max %d", st.Delay, st.DelayHeld)
			}
		})
	}
}
