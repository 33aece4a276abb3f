package transport

import (
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"net/netip"
	"time"

	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/netio"
	"github.com/ftlab/ftlab/hostagent/wire"
)

// outMsg is a message being sent.
type outMsg struct {
	id                uint32
	size              int
	firstPSN, lastPSN uint32
	npkts, acked      int
	reroutesAtStart   int
	rtoSeen           int // sender's rtoCount when this message last counted an RTO
	rec               MessageRecord
}

// probe is a queued probe.
type probe struct {
	t   wire.Type
	ev  uint16
	psn uint32
}

// sender is one flow's sending side.
type sender struct {
	ep     *Endpoint
	id     uint32
	peer   netip.Addr
	scheme SenderScheme
	mapper PathMapper  // the scheme, if it maps PSNs to paths
	acks   AckObserver // the scheme, if it hears of every acknowledged PSN
	sfBits uint8
	rng    *rand.Rand

	msgs     []*outMsg // queued and active messages, in PSN order
	byPSN    []*outMsg // messages whose first packet is not yet sent, FIFO
	nextMsg  uint32
	nextPSN  uint32 // next PSN to send for the first time
	assigned uint32 // next PSN to assign to a queued message

	ring     txRing
	list     txList
	inflight int
	// window is the in-flight limit: Config.Window, or the congestion
	// window under it when a cc runs (cc is nil for cc: none).
	window     int
	cc         *ccState
	ackedBytes int // payload newly acknowledged by the ACK being handled
	retxQ      []uint32
	ctlQ       []probe

	pacer     pacer
	paceTimer clock.Timer
	rtt       rttEstimator
	rtoTimer  clock.Timer
	rtoCount  int
	stamp     clock.Time // latest transmission stamp: strictly increasing
	pumping   bool
	closed    bool

	packets, retx, reroutes int
}

// Flow is the application's handle on a sending flow.
type Flow struct{ s *sender }

// ErrClosed is returned when sending on a closed flow.
var ErrClosed = errors.New("transport: flow closed")

// ID is the flow id on the wire.
func (f *Flow) ID() uint32 { return f.s.id }

// Peer is the destination host.
func (f *Flow) Peer() netip.Addr { return f.s.peer }

// Send queues a message of size bytes (0 is allowed: one empty packet) and
// returns its id. The flow sends it after the messages queued before it.
func (f *Flow) Send(size int) (uint32, error) { return f.s.enqueue(size) }

// Idle reports whether every queued message has been acknowledged.
func (f *Flow) Idle() bool { return len(f.s.msgs) == 0 }

// Record returns the flow's record so far.
func (f *Flow) Record() FlowRecord { return f.s.record() }

// Close stops the flow's timers; messages not yet acknowledged are
// abandoned (no record is emitted for them).
func (f *Flow) Close() { f.s.close() }

func newSender(ep *Endpoint, id uint32, peer netip.Addr) *sender {
	s := &sender{
		ep: ep, id: id, peer: peer,
		rng:   rand.New(rand.NewPCG(ep.rng.Uint64(), uint64(id))),
		rtt:   newRTTEstimator(&ep.cfg),
		pacer: pacer{rate: ep.cfg.Rate, overhead: ep.cfg.Overhead},
	}
	s.nextPSN = wire.InitialPSN(id)
	s.assigned = s.nextPSN
	s.ring.base = s.nextPSN
	s.stamp = ep.clk.Now() - 1
	s.scheme = ep.cfg.Scheme.NewSender(s)
	s.sfBits = s.scheme.SubflowBits()
	s.mapper, _ = s.scheme.(PathMapper)
	s.acks, _ = s.scheme.(AckObserver)
	s.window = ep.cfg.Window
	if cc := ep.cfg.CC; cc != nil {
		s.cc = newCCState(cc, ep.ccFlow())
		s.applyCC()
	}
	return s
}

func (s *sender) enqueue(size int) (uint32, error) {
	if s.closed {
		return 0, ErrClosed
	}
	if size < 0 || int64(size) > 1<<32-1 {
		return 0, fmt.Errorf("transport: message of %d bytes: want 0..4GiB-1", size)
	}
	seg := s.ep.cfg.MaxSegment
	npkts := max(1, (size+seg-1)/seg)
	if len(s.msgs) > 0 && int(s.assigned-s.ring.base)+npkts > 1<<30 {
		return 0, fmt.Errorf("transport: flow %d: too much queued", s.id)
	}
	m := &outMsg{id: s.nextMsg, size: size, firstPSN: s.assigned, npkts: npkts, reroutesAtStart: s.reroutes}
	m.lastPSN = m.firstPSN + uint32(npkts) - 1
	m.rtoSeen = s.rtoCount
	m.rec = MessageRecord{
		Kind: "message", Host: s.ep.name, Peer: s.peer.String(), Scheme: s.ep.cfg.Scheme.Name(),
		Flow: s.id, Msg: m.id, Bytes: size, Packets: npkts, StartNs: ns(s.ep.clk.Now()),
	}
	s.nextMsg++
	s.assigned += uint32(npkts)
	s.msgs = append(s.msgs, m)
	s.byPSN = append(s.byPSN, m)
	s.pump()
	return m.id, nil
}

// windowAllows reports whether n more payload bytes may go in flight.
func (s *sender) windowAllows(n int) bool {
	return s.inflight == 0 || s.inflight+n <= s.window
}

// pump sends whatever may be sent now and arms the pacer for the rest.
func (s *sender) pump() {
	if s.pumping || s.closed {
		return
	}
	s.pumping = true
	defer func() { s.pumping = false }()
	for s.hasWork() {
		now := s.ep.clk.Now()
		if at := s.pacer.ready(); at > now {
			s.pacer.hold()
			if s.paceTimer == nil {
				s.paceTimer = s.ep.clk.AfterFunc(at.Sub(now), s.pump)
			} else {
				s.paceTimer.Reset(at.Sub(now))
			}
			return
		}
		if !s.sendOne(now) {
			return
		}
	}
	// Nothing (more) may go: whatever comes next was held back by the
	// window or had not been queued, not by the pacer.
	s.pacer.idle()
}

// hasWork reports whether anything is queued that may go: data the window
// lets go, or a probe.
func (s *sender) hasWork() bool { return s.dataReady() || len(s.ctlQ) > 0 }

// dataReady reports whether a retransmission or new data is queued and
// the window lets it go, dropping retransmissions that became needless.
func (s *sender) dataReady() bool {
	for len(s.retxQ) > 0 {
		p := s.ring.get(s.retxQ[0])
		if p != nil && p.lost && !p.acked {
			return s.windowAllows(p.n)
		}
		s.retxQ = s.retxQ[1:]
	}
	if s.nextPSN != s.assigned {
		return s.windowAllows(s.ep.cfg.MaxSegment)
	}
	return false
}

// sendOne sends the highest-priority packet: a retransmission, new data,
// and only when neither may go, a probe. Probes are low priority
// (Ordered Chaos IV-B2): a probe only fills a slot data could not use,
// so data waits for a probe at most while one probe serializes. Every
// probe is queued after the data it speaks for has left, so it still
// follows that data on its path. hasWork has established there is
// something to send; false means nothing went.
func (s *sender) sendOne(now clock.Time) bool {
	if !s.dataReady() {
		pr := s.ctlQ[0]
		s.ctlQ = s.ctlQ[1:]
		s.sendProbe(now, pr)
		return true
	}
	if len(s.retxQ) > 0 {
		p := s.ring.get(s.retxQ[0])
		s.retxQ = s.retxQ[1:]
		s.retx++
		p.msg.rec.Retransmissions++
		s.transmit(now, p, s.scheme.RetransmitEV(p.psn, p.cause), p.cause)
		return true
	}
	psn := s.nextPSN
	m := s.byPSN[0]
	idx := int(psn - m.firstPSN)
	off := idx * s.ep.cfg.MaxSegment
	p := &txPacket{psn: psn, msg: m, off: uint32(off), n: min(s.ep.cfg.MaxSegment, m.size-off)}
	s.ring.push(p)
	s.nextPSN++
	if psn == m.lastPSN {
		s.byPSN = s.byPSN[1:]
	}
	s.transmit(now, p, s.scheme.DataEV(psn), CauseNew)
	return true
}

// nextStamp returns the stamp of a transmission now: the time, nudged so
// that stamps of one flow strictly increase (NACK evidence compares them).
func (s *sender) nextStamp(now clock.Time) clock.Time {
	s.stamp = max(now, s.stamp+1)
	return s.stamp
}

func (s *sender) transmit(now clock.Time, p *txPacket, ev uint16, cause Cause) {
	stamp := s.nextStamp(now)
	hdr := wire.Packet{Header: wire.Header{
		Type: wire.TypeData, SubflowBits: s.sfBits, EV: ev, Flow: s.id, Msg: p.msg.id, PSN: p.psn,
		TSVal: uint32(stamp),
	}, Offset: p.off, MsgLen: uint32(p.msg.size)}
	if cause != CauseNew {
		hdr.Flags = wire.FlagRetx
	} else if s.mapper != nil {
		hdr.Path = s.mapper.PathMap(p.psn)
	}
	b, payload, err := wire.AppendData(s.ep.buf[:0], &hdr, p.n)
	if err != nil {
		panic(fmt.Sprintf("transport: encoding a DATA packet: %v", err)) // the engine built it: a bug
	}
	fillPattern(payload, s.id, p.msg.id, p.off)
	s.ep.send(netio.Datagram{Peer: s.peer, EV: ev, ECN: netio.ECT0, Payload: b})
	s.ep.buf = b
	s.pacer.sent(now, len(b))
	s.packets++

	if p.copies == 0 {
		p.first = stamp
	}
	p.copies++
	p.last, p.lastEV = stamp, ev
	p.lost = false
	if !p.inflight {
		p.inflight = true
		s.inflight += p.n
	}
	s.list.pushBack(p)
	s.scheme.OnSent(SentPacket{PSN: p.psn, EV: ev, Msg: p.msg.id, MsgLastPSN: p.msg.lastPSN, Bytes: p.n, Cause: cause, At: stamp})
	s.armRTO()
}

// sendProbe sends a queued probe, unless what it speaks for was
// acknowledged while it waited behind data: every PSN up to its own (all
// have left the ring), or, for an RTX probe, the retransmitted PSN.
func (s *sender) sendProbe(now clock.Time, pr probe) {
	p := s.ring.get(pr.psn)
	if p == nil || (pr.t == wire.TypeRTX && p.acked) {
		s.ep.stats.ProbesSkipped++
		return
	}
	stamp := s.nextStamp(now)
	pk := wire.Packet{Header: wire.Header{
		Type: pr.t, SubflowBits: s.sfBits, EV: pr.ev, Flow: s.id, PSN: pr.psn, Msg: p.msg.id, TSVal: uint32(stamp),
	}}
	p.msg.rec.Probes.add(pr.t)
	b, err := wire.Append(s.ep.buf[:0], &pk)
	if err != nil {
		panic(fmt.Sprintf("transport: encoding a %v probe: %v", pr.t, err)) // scheme asked for a bad type: a bug
	}
	s.ep.buf = b
	s.ep.stats.ProbesSent++
	s.ep.send(netio.Datagram{Peer: s.peer, EV: pr.ev, ECN: netio.ECT0, Payload: b})
	s.pacer.sent(now, len(b))
}

// declareLost takes p out of flight and queues it for retransmission.
func (s *sender) declareLost(p *txPacket, cause Cause, now clock.Time) bool {
	if p == nil || p.acked || p.lost || p.copies == 0 {
		return false
	}
	p.lost, p.cause = true, cause
	s.list.remove(p)
	if p.inflight {
		p.inflight = false
		s.inflight -= p.n
	}
	s.retxQ = append(s.retxQ, p.psn)
	p.msg.rec.Losses = append(p.msg.rec.Losses, LossRecord{
		PSN: p.psn, Cause: cause, DelayNs: int64(now - p.last), Retx: p.copies > 1,
	})
	if s.cc != nil {
		s.cc.ctl.OnLoss(CCLoss{At: now, PSN: p.psn, Bytes: p.n, Cause: cause, Inflight: s.inflight, CumAck: s.ring.base, NextPSN: s.nextPSN})
		s.applyCC()
	}
	return true
}

func (s *sender) close() {
	if s.closed {
		return
	}
	s.closed = true
	if s.paceTimer != nil {
		s.paceTimer.Stop()
	}
	if s.rtoTimer != nil {
		s.rtoTimer.Stop()
	}
	s.scheme.Close()
	delete(s.ep.senders, s.id)
}

func (s *sender) record() FlowRecord {
	r := FlowRecord{
		Kind: "flow", Host: s.ep.name, Peer: s.peer.String(), Scheme: s.ep.cfg.Scheme.Name(), Flow: s.id,
		Messages: int(s.nextMsg), Packets: s.packets, Retx: s.retx, Reroutes: s.reroutes, RTOs: s.rtoCount,
		StateBytes: s.scheme.StateBytes(), Pacing: s.pacer.report(),
		SRTTNs: int64(s.rtt.srtt), MinRTTNs: int64(s.rtt.minRTT), RTONs: int64(s.rtt.rto()),
	}
	if s.cc != nil {
		r.CC = s.cc.record(s)
	}
	if sr, ok := s.scheme.(SubflowReporter); ok {
		r.Subflows = sr.Subflows()
	}
	return r
}

// SenderEnv, implemented for the flow's scheme.

func (s *sender) Now() clock.Time { return s.ep.clk.Now() }

func (s *sender) AfterFunc(d time.Duration, f func()) clock.Timer {
	return s.ep.clk.AfterFunc(d, func() {
		if !s.closed {
			f()
		}
	})
}

func (s *sender) Rand() *rand.Rand    { return s.rng }
func (s *sender) SRTT() time.Duration { return s.rtt.srtt }
func (s *sender) RTO() time.Duration  { return s.rtt.rto() }
func (s *sender) NextPSN() uint32     { return s.nextPSN }

func (s *sender) SendProbe(t wire.Type, ev uint16, psn uint32) {
	s.ctlQ = append(s.ctlQ, probe{t: t, ev: ev, psn: psn})
	s.pump()
}

func (s *sender) DeclareLost(psn uint32, cause Cause) bool {
	if !s.declareLost(s.ring.get(psn), cause, s.ep.clk.Now()) {
		return false
	}
	s.armRTO()
	s.pump()
	return true
}

func (s *sender) NoteReroute(subflow int, from, to uint16, reason string) { s.reroutes++ }

func (s *sender) Acked(psn uint32) bool {
	if wire.SeqLess(psn, s.ring.base) {
		return true // released: acknowledged with every PSN before it
	}
	p := s.ring.get(psn)
	return p != nil && p.acked
}

func (s *sender) Outstanding() iter.Seq[OutstandingPacket] {
	return func(yield func(OutstandingPacket) bool) {
		for p := s.list.head; p != nil; p = p.next {
			if !yield(OutstandingPacket{PSN: p.psn, EV: p.lastEV, SentAt: p.last, Copies: p.copies}) {
				return
			}
		}
	}
}
