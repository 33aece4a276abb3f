package transport

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"

	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/netio"
	"github.com/ftlab/ftlab/hostagent/wire"
)

// Endpoint is one host's transport: its sending flows and its receiving
// flows. All methods must be called on the clock's event loop.
type Endpoint struct {
	cfg       Config
	name      string
	clk       clock.Clock
	conn      netio.Conn
	rng       *rand.Rand
	senders   map[uint32]*sender
	receivers map[flowKey]*receiver
	stats     Stats
	buf       []byte      // outgoing datagram scratch
	pk        wire.Packet // incoming parse scratch
}

var _ netio.Receiver = (*Endpoint)(nil)

// NewEndpoint returns an endpoint sending through conn. Hand it the
// conn's received datagrams (HandleDatagram).
func NewEndpoint(cfg Config, clk clock.Clock, conn netio.Conn) (*Endpoint, error) {
	if err := cfg.fill(conn.MaxPayload()); err != nil {
		return nil, err
	}
	name := cfg.Name
	if name == "" {
		name = conn.LocalAddr().String()
	}
	return &Endpoint{
		cfg: cfg, name: name, clk: clk, conn: conn,
		rng:       rand.New(rand.NewPCG(cfg.Seed, 0x686f7374)),
		senders:   make(map[uint32]*sender),
		receivers: make(map[flowKey]*receiver),
		buf:       make([]byte, 0, conn.MaxPayload()),
	}, nil
}

// Config returns the configuration with defaults filled in.
func (e *Endpoint) Config() Config { return e.cfg }

// Stats returns the endpoint's counters.
func (e *Endpoint) Stats() Stats { return e.stats }

// OpenFlow starts a flow to peer with a fresh random flow id.
func (e *Endpoint) OpenFlow(peer netip.Addr) (*Flow, error) {
	if !peer.IsValid() {
		return nil, fmt.Errorf("transport: open flow: invalid peer address")
	}
	if len(e.senders) >= 1<<24 {
		return nil, fmt.Errorf("transport: open flow to %v: too many flows", peer)
	}
	id := e.rng.Uint32()
	for e.senders[id] != nil {
		id = e.rng.Uint32()
	}
	s := newSender(e, id, peer)
	e.senders[id] = s
	return &Flow{s: s}, nil
}

// Flows returns the records of the open sending flows, by flow id.
func (e *Endpoint) Flows() []FlowRecord {
	out := make([]FlowRecord, 0, len(e.senders))
	for _, s := range e.senders {
		out = append(out, s.record())
	}
	slices.SortFunc(out, func(a, b FlowRecord) int { return cmp.Compare(a.Flow, b.Flow) })
	return out
}

// ReceiverStateBytes sums the receiving schemes' per-flow state.
func (e *Endpoint) ReceiverStateBytes() (flows, bytes int) {
	for _, r := range e.receivers {
		flows++
		bytes += r.scheme.StateBytes()
	}
	return flows, bytes
}

// HandleDatagram takes one received datagram. Anything malformed is
// counted and dropped; nothing a peer sends can make it panic.
func (e *Endpoint) HandleDatagram(d netio.Datagram) {
	e.stats.DatagramsIn++
	pk := &e.pk
	if err := wire.Parse(d.Payload, pk); err != nil {
		if wire.ParseTrimmed(d.Payload, pk) == nil {
			e.onTrimmed(d, pk)
			return
		}
		if i := wire.KindIndex(err); i >= 0 {
			e.stats.Malformed[i]++
		}
		return
	}
	if pk.EV != d.EV {
		e.stats.EVMismatch++ // counted, not fatal: the header is authoritative
	}
	switch pk.Type {
	case wire.TypeACK, wire.TypeNACK:
		s := e.senders[pk.Flow]
		if s == nil || s.peer != d.Peer {
			e.stats.UnknownFlow++
			return
		}
		if pk.Type == wire.TypeACK {
			s.onACK(pk)
		} else {
			s.onNACK(pk)
		}
	default: // DATA and probes
		key := flowKey{d.Peer, pk.Flow}
		r := e.receivers[key]
		if r == nil {
			r = newReceiver(e, key, pk)
			e.receivers[key] = r
		}
		if pk.Type == wire.TypeData {
			r.onData(pk, d.ECN)
		} else {
			r.onProbe(pk)
		}
	}
}

// onTrimmed takes the header of a DATA packet a switch trimmed: the
// packet's receiver NACKs its PSN at once, whatever the scheme.
func (e *Endpoint) onTrimmed(d netio.Datagram, pk *wire.Packet) {
	e.stats.TrimmedIn++
	key := flowKey{d.Peer, pk.Flow}
	r := e.receivers[key]
	if r == nil {
		r = newReceiver(e, key, pk)
		e.receivers[key] = r
	}
	r.onTrimmed(pk)
}

// ccFlow describes this endpoint's flows to a congestion controller.
func (e *Endpoint) ccFlow() CCFlow {
	return CCFlow{
		MSS: e.cfg.MaxSegment, PacketBytes: e.cfg.MaxSegment + wire.DataLen + e.cfg.Overhead,
		LineRate: e.cfg.Rate, BaseRTT: e.cfg.BaseRTT, MaxWindow: e.cfg.Window,
	}
}

// send hands a datagram to the conn.
func (e *Endpoint) send(d netio.Datagram) {
	e.stats.DatagramsOut++
	if err := e.conn.Send(d); err != nil {
		e.stats.SendErrors++ // a local drop: recovered like any loss
	}
}

// sendControl marshals and sends an ACK or NACK, from the EV in its header.
func (e *Endpoint) sendControl(peer netip.Addr, p *wire.Packet) {
	b, err := wire.Append(e.buf[:0], p)
	if err != nil {
		panic(fmt.Sprintf("transport: encoding a %v: %v", p.Type, err)) // built here: a bug
	}
	e.buf = b
	e.send(netio.Datagram{Peer: peer, EV: p.EV, ECN: netio.NotECT, Payload: b})
}
