// Package agent runs a host's transport endpoint on real sockets and
// serves the control protocol (package control) to the orchestrator:
// Serve reads commands from one stream and writes events to another, the
// agent binary's stdin and stdout.
//
// Everything of an agent runs on one event loop (Loop): command handling,
// the endpoint's timers, socket reads and sends. A loop serves any number
// of agents: in-process agents share one loop per core (Pool, given in
// Options.Loop); an agent process runs its own. Commands arrive from a
// reader goroutine through Loop.Post; events are encoded on the loop and
// written by a writer goroutine, so a slow reader of the events never
// stalls the transport.
package agent

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"sync"
	"time"

	"github.com/ftlab/ftlab/hostagent/cc"
	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/control"
	"github.com/ftlab/ftlab/hostagent/netio"
	"github.com/ftlab/ftlab/hostagent/scheme"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/hostagent/wire"
	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/params"
)

// DefaultPort is the agents' UDP port when none is given.
const DefaultPort = 4791

// DefaultSocketMTU sizes socket buffers when Options.MTU is 0: the largest
// link MTU a topology may have. The segment size comes from configure.
const DefaultSocketMTU = 9216

// Conn is the packet I/O an agent needs; *netio.SocketConn is the real
// one, opened in Deferred mode so the loop's idle hook flushes each
// iteration's sends with one sendmmsg.
type Conn interface {
	netio.Conn
	Port() uint16
	Fd() int                                 // readable when ReadBatch has work
	ReadBatch(r netio.Receiver) (int, error) // non-blocking
	Batch() int                              // most datagrams one ReadBatch returns
	Timestamp() error                        // stamp arrivals from now on (Datagram.RxNs)
	Flush() error
	Stats() netio.SocketStats
	Close() error
}

// Options configure Serve.
type Options struct {
	// Port is the UDP port of every agent (default DefaultPort).
	Port uint16
	// Addr is this host's address (default: discovered from the
	// namespace's only up, non-loopback IPv4 interface address).
	Addr netip.Addr
	// Namespace, if set, opens the sockets inside that named network
	// namespace (in-process agents); otherwise in the caller's.
	Namespace string
	// MTU sizes the socket buffers (default DefaultSocketMTU).
	MTU int
	// Batch is the sendmmsg/recvmmsg batch (default netio.DefaultBatch).
	Batch int
	// Mark, if not 0, marks everything the agent sends (SO_MARK), so the
	// lab's dequeue monitor can measure the host's egress queue.
	Mark uint32
	// Conn, if set, is used instead of opening sockets (tests). Serve
	// closes it.
	Conn Conn
	// Loop, if set, is the running event loop the agent runs on, shared
	// with other agents (see Pool); otherwise Serve runs a loop of its own.
	Loop *Loop
}

// Open opens the agent's sockets as opts say.
func Open(opts Options) (*netio.SocketConn, error) {
	cfg := netio.SocketConfig{
		Port: opts.Port, Addr: opts.Addr, MTU: opts.MTU, Batch: opts.Batch, Deferred: true, Mark: opts.Mark,
	}
	if cfg.Port == 0 {
		cfg.Port = DefaultPort
	}
	if cfg.MTU == 0 {
		cfg.MTU = DefaultSocketMTU
	}
	var c *netio.SocketConn
	open := func() (err error) {
		c, err = netio.ListenSocket(cfg)
		return err
	}
	var err error
	if opts.Namespace != "" {
		err = nsutil.DoNamed(opts.Namespace, open)
	} else {
		err = open()
	}
	return c, err
}

// Serve runs an agent: it opens the sockets, writes the ready event to
// out, executes the commands read from in and writes their events, until
// a stop command or the end of in (it then returns nil) or until ctx is
// done (it returns ctx.Err()). Either way it first writes a flow event for
// every message not yet acknowledged and a final stats event. Serve does
// not wait for a read from in that is still blocked when it returns.
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	w := newWriter(out)
	fail := func(err error) error {
		w.event(&control.Error{Error: err.Error()})
		return errors.Join(err, w.close())
	}
	conn := opts.Conn
	if conn == nil {
		c, err := Open(opts)
		if err != nil {
			return fail(fmt.Errorf("agent: %w", err))
		}
		conn = c
	}
	defer conn.Close()
	loop := opts.Loop
	if loop == nil {
		own, err := NewLoop()
		if err != nil {
			return fail(fmt.Errorf("agent: event loop: %w", err))
		}
		loopCtx, stopLoop := context.WithCancel(context.Background())
		ran := make(chan error, 1)
		go func() { ran <- own.Run(loopCtx) }()
		defer func() {
			stopLoop()
			<-ran
			own.Close()
		}()
		loop = own
	}

	a := &agent{
		conn: conn, out: w, done: make(chan struct{}),
		flows: make(map[uint32]*outFlow), used: make(map[uint32]bool),
	}
	var err error
	loop.Do(func() { err = a.attach(loop) })
	if err != nil {
		return fail(fmt.Errorf("agent: %w", err))
	}
	w.event(&control.Ready{Version: control.Version, Addr: conn.LocalAddr().String(), Port: conn.Port()})
	go a.readCommands(in)

	select {
	case <-a.done:
	case <-ctx.Done():
		err = ctx.Err()
	case <-loop.Done():
		err = errors.New("agent: the event loop ended")
	}
	loop.Do(a.finish)
	select {
	case <-a.done: // stopped by command or end of input: not an error (the close orders a.stopped's write before this)
		err = nil
	default:
	}
	if werr := w.close(); werr != nil {
		err = errors.Join(err, werr)
	}
	return err
}

// attach puts the agent on the loop: its socket is watched and its sends
// flushed at the end of every iteration (loop goroutine).
func (a *agent) attach(l *Loop) error {
	a.loop = l
	a.slot = l.NewSlot()
	batch := a.conn.Batch()
	_, err := a.slot.Watch(a.conn.Fd(), func() bool {
		a.noteRead()
		n, err := a.conn.ReadBatch(a)
		if err != nil {
			a.fail(fmt.Errorf("receive: %w", err))
			return false
		}
		return n >= batch
	})
	if err != nil {
		a.slot.Close()
		return fmt.Errorf("watch socket: %w", err)
	}
	a.slot.OnIdle(func() { _ = a.conn.Flush() }) // refusals are counted in the conn's stats
	return nil
}

// outFlow is a message being sent: one flow each.
type outFlow struct {
	msg  int64
	flow *transport.Flow
	done bool // acknowledged; the flow closes on the next loop iteration
}

// agent is Serve's state; it belongs to the loop.
type agent struct {
	loop *Loop
	slot *Slot // the agent's timers, watch and hook on the loop
	conn Conn
	out  *writer
	ep   *transport.Endpoint
	done chan struct{} // closed when the agent is told to stop
	gone bool          // finished: later posts do nothing

	// line holds arrivals for the fabric's link delays (nil: none).
	line    *delayLine
	wallOff int64                             // wall clock minus loop time, taken before each read
	rxDelay map[msgKey]*transport.DelayRecord // delay line accounts of messages being received
	txDelay map[uint32]*transport.DelayRecord // ... and of the ACKs of flows being sent

	flows   map[uint32]*outFlow // by flow id, until the message is acknowledged
	used    map[uint32]bool     // flow ids ever used: never reused
	stopped bool                // by command or end of input

	sent, received, errors int
	pendingAtStop          int
	early, ceData, eceACKs uint64
}

// readCommands feeds lines from in to the loop.
func (a *agent) readCommands(in io.Reader) {
	lr := control.NewLineReader(in, control.MaxLine)
	for {
		line, err := lr.Next()
		switch {
		case err == nil:
			line := append([]byte(nil), line...)
			a.loop.Post(func() { a.command(line) })
			continue
		case errors.Is(err, control.ErrLineTooLong):
			a.loop.Post(func() { a.fail(err) })
			continue
		case err == io.EOF:
			a.loop.Post(a.shutdown)
		default:
			a.loop.Post(func() { a.fail(fmt.Errorf("reading commands: %w", err)); a.shutdown() })
		}
		return
	}
}

// HandleDatagram takes received datagrams: into the delay line when the
// fabric has delays, else straight to the endpoint (handle).
func (a *agent) HandleDatagram(d netio.Datagram) {
	if a.ep == nil {
		a.early++
		return
	}
	if a.line != nil {
		// The kernel's stamp says when it came; a datagram without one
		// (a conn that does not stamp) came by now.
		arrival := a.slot.Now()
		if d.RxNs != 0 {
			arrival = min(arrival, clock.Time(d.RxNs-a.wallOff))
		}
		a.line.push(d, arrival)
		return
	}
	a.handle(d)
}

// noteRead takes the clocks before a read, to place the kernel's arrival
// stamps (wall clock) on the loop's (monotonic).
func (a *agent) noteRead() {
	a.wallOff = time.Now().UnixNano() - int64(a.slot.Now())
}

// msgKey names a message being received.
type msgKey struct {
	peer      netip.Addr
	flow, msg uint32
}

// released takes a datagram out of the delay line: its lateness is
// counted for the message it belongs to (DATA, probes: the receiving
// side's record) or the flow it answers (ACK, NACK: the sending side's),
// then it goes to the endpoint.
func (a *agent) released(d netio.Datagram, delay, late int64) {
	if p := d.Payload; len(p) >= wire.CommonLen {
		flow, msg := binary.BigEndian.Uint32(p[8:]), binary.BigEndian.Uint32(p[12:])
		var rec *transport.DelayRecord
		switch t := wire.Type(p[3]); {
		case t == wire.TypeACK || t == wire.TypeNACK:
			if rec = a.txDelay[flow]; rec == nil {
				rec = &transport.DelayRecord{}
				a.txDelay[flow] = rec
			}
		case t == wire.TypeData || t.IsProbe():
			k := msgKey{d.Peer, flow, msg}
			if rec = a.rxDelay[k]; rec == nil {
				rec = &transport.DelayRecord{}
				a.rxDelay[k] = rec
			}
		}
		if rec != nil {
			rec.Add(delay, late)
		}
	}
	a.handle(d)
}

// flowRecord is a flow's record with its delay line account.
func (a *agent) flowRecord(f *transport.Flow) transport.FlowRecord {
	r := f.Record()
	if rec := a.txDelay[f.ID()]; rec != nil {
		r.Delay = rec
		delete(a.txDelay, f.ID())
	}
	return r
}

// handle passes a datagram to the endpoint, counting the ECN feedback
// loop on the way: DATA that arrived CE here, and ACKs that echo a CE
// mark (ECE) from the peer.
func (a *agent) handle(d netio.Datagram) {
	if p := d.Payload; len(p) > 4 && p[0] == 0x46 && p[1] == 0x54 {
		switch wire.Type(p[3]) {
		case wire.TypeData:
			if d.ECN == netio.CE {
				a.ceData++
			}
		case wire.TypeACK:
			if wire.Flags(p[4])&wire.FlagECE != 0 {
				a.eceACKs++
			}
		}
	}
	a.ep.HandleDatagram(d)
}

func (a *agent) fail(err error) {
	a.errors++
	a.out.event(&control.Error{Error: err.Error()})
}

func (a *agent) command(line []byte) {
	cmd, err := control.DecodeCommand(line)
	if err != nil {
		a.errors++
		a.out.event(&control.Error{Error: err.Error(), Input: control.Shorten(line)})
		return
	}
	if a.stopped || a.gone {
		return
	}
	switch c := cmd.(type) {
	case *control.Configure:
		if err := a.configure(c); err != nil {
			a.errors++
			a.out.event(&control.Error{Error: "configure: " + err.Error(), Input: control.Shorten(line)})
		}
	case *control.Send:
		if err := a.send(c); err != nil {
			a.errors++
			msg := c.Msg
			a.out.event(&control.Error{Error: "send: " + err.Error(), Msg: &msg, Input: control.Shorten(line)})
		}
	case *control.StatsQuery:
		a.out.event(a.stats(false))
	case *control.Stop:
		a.shutdown()
	}
}

func (a *agent) shutdown() {
	if !a.stopped {
		a.stopped = true
		close(a.done)
	}
}

func (a *agent) configure(c *control.Configure) error {
	if a.ep != nil {
		return errors.New("already configured")
	}
	t := c.Transport
	if t.BaseRTTNs == 0 {
		t.BaseRTTNs = int64(transport.NominalBaseRTT)
	}
	p := c.Params
	if p == nil { // the scheme's defaults, at the fabric's base RTT
		var err error
		if p, err = scheme.Defaults(c.Scheme, params.Env{RTT: time.Duration(t.BaseRTTNs)}); err != nil {
			return err
		}
	}
	sch, err := scheme.New(c.Scheme, p)
	if err != nil {
		return err
	}
	algo, cp := c.CC, c.CCParams
	if algo == "" {
		algo = cc.None
	}
	if cp == nil { // the algorithm's defaults, at the fabric's base RTT
		if cp, err = cc.Defaults(algo, params.Env{RTT: time.Duration(t.BaseRTTNs)}); err != nil {
			return err
		}
	}
	ctl, err := cc.New(algo, cp)
	if err != nil {
		return err
	}
	if t.MTU == 0 {
		t.MTU = 1500
	}
	if max := a.conn.MaxPayload() + 28; t.MTU > max {
		return fmt.Errorf("mtu %d above the socket's %d (start the agent with a larger MTU)", t.MTU, max)
	}
	if t.SegmentBytes == 0 {
		t.SegmentBytes = t.MTU - netio.IPv4UDPOverhead - wire.DataLen
	}
	if t.Seed == 0 {
		var b [8]byte
		_, _ = crand.Read(b[:])
		t.Seed = binary.LittleEndian.Uint64(b[:]) | 1
	}
	name := c.Name
	if name == "" {
		name = a.conn.LocalAddr().String()
	}
	ep, err := transport.NewEndpoint(transport.Config{
		Scheme: sch, CC: ctl, Name: name, Rate: float64(t.Pacing), Overhead: t.OverheadBytes,
		Window: int(t.Window), MaxSegment: t.SegmentBytes, BaseRTT: time.Duration(t.BaseRTTNs),
		RTO: t.RTO, MaxRTT: time.Duration(t.MaxRTTNs), RTOAllowance: t.RTOAllowance,
		InitialRTO: t.InitialRTO, MinRTO: t.MinRTO, MaxRTO: time.Duration(t.MaxRTONs),
		RTOGranularity: time.Duration(t.RTOGranularityNs), Seed: t.Seed,
		OnMessageSent: a.onSent, OnMessageReceived: a.onReceived,
	}, a.slot, a.conn)
	if err != nil {
		return err
	}
	a.ep = ep
	a.loop.SetSpin(time.Duration(t.SpinNs))
	a.loop.SetQuantum(quantum(t))
	if t.DelayLine {
		if err := a.conn.Timestamp(); err != nil {
			return err
		}
		a.rxDelay, a.txDelay = map[msgKey]*transport.DelayRecord{}, map[uint32]*transport.DelayRecord{}
		// Releases may coalesce, but within a quarter of the quantum (a
		// sixteenth of a packet time), well inside the verdict's limit.
		a.line = newDelayLine(a.slot, quantum(t)/4, time.Duration(t.AccessDelayNs), time.Duration(t.AccessJitterNs), t.Seed,
			a.conn.MaxPayload(), a.released)
	}
	eff := ep.Config()
	t.Window = uint64(eff.Window)
	t.OverheadBytes = eff.Overhead
	t.InitialRTO, t.MinRTO, t.MaxRTONs = eff.InitialRTO, eff.MinRTO, int64(eff.MaxRTO)
	t.RTO, t.MaxRTTNs, t.RTOAllowance = eff.RTO, int64(eff.MaxRTT), eff.RTOAllowance
	t.RTOGranularityNs = int64(eff.RTOGranularity)
	a.out.event(&control.Configured{Scheme: sch.Name(), Params: p, CC: algo, CCParams: cp, Transport: t, Name: name})
	return nil
}

// QuantumShare is the default batching quantum of an agent's loop, as a
// share of one full-size packet's time on the host's link at the pacing
// rate, up to MaxQuantum: timers that run up to a quarter of a packet late
// leave the link's serialization (HTB, at the same rate) its pace, and
// the pacer makes up for the lateness, which MaxQuantum keeps well within
// the 250 µs a pacer may catch up by; at 40 Mbit/s and a 1500-byte MTU
// the quantum is 76 µs.
const (
	QuantumShare = 0.25
	MaxQuantum   = 100 * time.Microsecond
)

// quantum is the loop's batching quantum for a host with settings t
// (MTU filled in).
func quantum(t control.Transport) time.Duration {
	if t.QuantumNs > 0 {
		return time.Duration(t.QuantumNs)
	}
	if t.Pacing == 0 {
		return 0 // unpaced: the window paces, and wants arrivals at once
	}
	frameBits := float64(t.MTU+14) * 8
	return min(time.Duration(QuantumShare*frameBits/float64(t.Pacing)*1e9), MaxQuantum)
}

func (a *agent) send(c *control.Send) error {
	if a.ep == nil {
		return errors.New("not configured")
	}
	peer, err := c.Peer()
	if err != nil {
		return err
	}
	var f *transport.Flow
	for {
		if f, err = a.ep.OpenFlow(peer); err != nil {
			return err
		}
		if !a.used[f.ID()] {
			break
		}
		// A receiver keeps a flow's state for good: never reuse an id.
		f.Close()
	}
	a.used[f.ID()] = true
	a.flows[f.ID()] = &outFlow{msg: c.Msg, flow: f}
	if _, err := f.Send(int(c.Bytes)); err != nil {
		delete(a.flows, f.ID())
		f.Close()
		return err
	}
	return nil
}

func (a *agent) onSent(rec transport.MessageRecord) {
	of := a.flows[rec.Flow]
	if of == nil {
		return // cannot happen: one message per flow, flows close after it
	}
	a.sent++
	of.done = true
	a.out.event(&control.Sent{Msg: of.msg, Record: rec})
	// Close the flow once the engine is done with this ACK.
	a.loop.Post(func() {
		if a.gone || a.flows[rec.Flow] != of {
			return
		}
		delete(a.flows, rec.Flow)
		a.out.event(&control.Flow{Msg: of.msg, Done: true, Record: a.flowRecord(of.flow)})
		of.flow.Close()
	})
}

func (a *agent) onReceived(rec transport.ReceiveRecord) {
	a.received++
	if peer, err := netip.ParseAddr(rec.Peer); err == nil && a.line != nil {
		k := msgKey{peer, rec.Flow, rec.Msg}
		rec.Delay = a.rxDelay[k]
		delete(a.rxDelay, k)
	}
	a.out.event(&control.Received{From: rec.Peer, Record: rec})
}

// maxFinalReads bounds the batches finish reads.
const maxFinalReads = 16

// finish reports unacknowledged messages and the final stats, and takes
// the agent off the loop (loop goroutine, or after the loop ended).
func (a *agent) finish() {
	// What already arrived is read first, so the final records and
	// counters include it (a stop command can overtake a batch the loop
	// has not yet read).
	for range maxFinalReads {
		a.noteRead()
		if n, err := a.conn.ReadBatch(a); err != nil || n < a.conn.Batch() {
			break
		}
	}
	a.gone = true
	for id, of := range a.flows {
		if !of.done {
			a.pendingAtStop++
		}
		a.out.event(&control.Flow{Msg: of.msg, Done: of.done, Record: a.flowRecord(of.flow)})
		of.flow.Close()
		delete(a.flows, id)
	}
	_ = a.conn.Flush()
	a.out.event(a.stats(true))
	a.slot.Close()
}

// pending counts messages started and not yet acknowledged.
func (a *agent) pending() int {
	n := a.pendingAtStop
	for _, of := range a.flows {
		if !of.done {
			n++
		}
	}
	return n
}

func (a *agent) stats(final bool) *control.Stats {
	ls := a.loop.Stats()
	s := &control.Stats{
		Final: final, Conn: a.conn.Stats(), Sent: a.sent, Received: a.received, Pending: a.pending(),
		Errors: a.errors, EarlyDatagrams: a.early, CEData: a.ceData, ECEACKs: a.eceACKs,
		Loop: control.LoopStats{
			Iterations: ls.Iterations, Sleeps: ls.Sleeps, Spins: ls.Spins, Holdoffs: ls.Holdoffs, Timers: ls.Timers,
			Posted: ls.Posted, Reads: ls.Reads, LateMaxNs: ls.LateMaxNs, CPUNs: ls.CPUNs, WaitNs: ls.WaitNs,
			Agents: a.loop.Agents(), QuantumNs: int64(a.loop.Quantum()),
		},
	}
	if ls.Timers > 0 {
		s.Loop.LateMeanNs = ls.LateSumNs / int64(ls.Timers)
	}
	if a.ep != nil {
		s.Endpoint = a.ep.Stats()
		s.ReceiverFlows, s.ReceiverStateBytes = a.ep.ReceiverStateBytes()
	}
	if a.line != nil {
		total := a.line.total
		s.Delay, s.DelayHeld = &total, a.line.heldMax
	}
	return s
}

// writer writes events on its own goroutine from an unbounded queue.
type writer struct {
	mu    sync.Mutex
	cond  *sync.Cond
	queue [][]byte
	done  bool
	err   error
	exit  chan struct{}
}

func newWriter(out io.Writer) *writer {
	w := &writer{exit: make(chan struct{})}
	w.cond = sync.NewCond(&w.mu)
	go w.run(out)
	return w
}

// event encodes e and queues it (any goroutine).
func (w *writer) event(e control.Event) {
	b, err := control.AppendEvent(nil, e)
	if err != nil {
		b, _ = control.AppendEvent(nil, &control.Error{Error: err.Error()})
	}
	w.mu.Lock()
	w.queue = append(w.queue, b)
	w.mu.Unlock()
	w.cond.Signal()
}

func (w *writer) run(out io.Writer) {
	defer close(w.exit)
	var buf []byte
	for {
		w.mu.Lock()
		for len(w.queue) == 0 && !w.done {
			w.cond.Wait()
		}
		q, done := w.queue, w.done
		w.queue = nil
		w.mu.Unlock()
		buf = buf[:0]
		for _, b := range q {
			buf = append(buf, b...)
		}
		if len(buf) > 0 && w.err == nil {
			if _, err := out.Write(buf); err != nil {
				w.err = fmt.Errorf("agent: writing events: %w", err)
			}
		}
		if done && len(q) == 0 {
			return
		}
	}
}

// close writes what is queued and stops the writer.
func (w *writer) close() error {
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
	w.cond.Signal()
	<-w.exit
	return w.err
}
