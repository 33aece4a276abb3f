package transport

import (
	"net/netip"

	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/netio"
	"github.com/ftlab/ftlab/hostagent/wire"
)

// flowKey names a receiving flow: flow ids are chosen by senders, so only
// the pair is unique.
type flowKey struct {
	peer netip.Addr
	flow uint32
}

// inMsg is a message being received.
type inMsg struct {
	size  uint32
	got   ranges
	bytes uint32
	rec   ReceiveRecord
}

// receiver is one flow's receiving side.
type receiver struct {
	ep     *Endpoint
	key    flowKey
	set    psnSet
	msgs   map[uint32]*inMsg
	scheme ReceiverScheme
	nacks  []uint32 // scratch
	// evHigh is the highest first-copy PSN seen per EV, for counting
	// same-EV reordering (a fidelity check: one EV is one FIFO path under
	// ECMP). Bounded: cleared when it reaches maxEVTrack entries.
	evHigh map[uint16]uint32
}

// maxEVTrack bounds a receiver's per-EV reordering state.
const maxEVTrack = 1024

func newReceiver(ep *Endpoint, key flowKey, first *wire.Packet) *receiver {
	r := &receiver{ep: ep, key: key, set: newPSNSet(wire.InitialPSN(key.flow)), msgs: make(map[uint32]*inMsg)}
	r.scheme = ep.cfg.Scheme.NewReceiver(r, first)
	return r
}

// onData handles a DATA packet that arrived with codepoint ecn.
func (r *receiver) onData(pk *wire.Packet, ecn netio.ECN) {
	now := r.ep.clk.Now()
	if wire.SeqDiff(pk.PSN, r.set.base) >= int32(r.ep.cfg.MaxRecvSpan) {
		r.ep.stats.ProtocolErrors++
		return
	}
	dup := r.set.has(pk.PSN)
	retx := pk.Flags&wire.FlagRetx != 0
	if dup {
		r.ep.stats.Duplicates++
		if m := r.msgs[pk.Msg]; m != nil {
			m.rec.Duplicates++
			if retx {
				m.rec.RetxSpurious++
			}
		} else if retx {
			r.ep.stats.SpuriousRetxLate++
		}
	} else {
		if !checkPattern(pk.Payload, pk.Flow, pk.Msg, pk.Offset) {
			r.ep.stats.CorruptPayload++
			return // as if it never came: the sender will resend it
		}
		m := r.msgs[pk.Msg]
		if m == nil {
			m = &inMsg{size: pk.MsgLen, rec: ReceiveRecord{
				Kind: "delivery", Host: r.ep.name, Peer: r.key.peer.String(), Flow: pk.Flow, Msg: pk.Msg,
				Bytes: int(pk.MsgLen), FirstNs: ns(now), Verified: true,
			}}
			r.msgs[pk.Msg] = m
		}
		end := pk.Offset + uint32(len(pk.Payload))
		if m.size != pk.MsgLen || !m.got.add(pk.Offset, end) {
			r.ep.stats.ProtocolErrors++
			return
		}
		r.set.add(pk.PSN)
		if !retx {
			if high, reordered := r.reorderedOnEV(pk.EV, pk.PSN); reordered {
				m.rec.ReorderedSameEV++
				if m.rec.FirstReorder == nil {
					m.rec.FirstReorder = &ReorderSample{PSN: pk.PSN, After: high, EV: pk.EV, AtNs: ns(now)}
				}
			}
		}
		m.bytes += uint32(len(pk.Payload))
		m.rec.Packets++
		if retx {
			m.rec.RetxUseful++
		}
		if m.bytes == m.size && (m.size > 0 || m.rec.Packets > 0) {
			r.deliver(pk.Msg, m, now)
		}
	}
	r.ack(pk, ecn, dup)
	r.scheme.OnData(pk)
}

// onTrimmed handles the header of a DATA packet whose payload a switch
// cut (trimming): the copy is lost, and the header is the evidence, so
// its PSN is NACKed at once (the NACK names the trimmed copy itself as its
// trigger). A trimmed copy of a PSN already here needs nothing.
func (r *receiver) onTrimmed(pk *wire.Packet) {
	if wire.SeqDiff(pk.PSN, r.set.base) >= int32(r.ep.cfg.MaxRecvSpan) || r.set.has(pk.PSN) {
		return
	}
	r.NACK(pk, []uint32{pk.PSN})
}

// reorderedOnEV records the first copy of psn arriving on ev and reports
// whether a higher PSN already arrived on the same EV.
func (r *receiver) reorderedOnEV(ev uint16, psn uint32) (high uint32, reordered bool) {
	if r.evHigh == nil {
		r.evHigh = make(map[uint16]uint32)
	}
	high, ok := r.evHigh[ev]
	if ok && wire.SeqDiff(psn, high) < 0 {
		return high, true
	}
	if !ok && len(r.evHigh) >= maxEVTrack {
		clear(r.evHigh)
	}
	r.evHigh[ev] = psn
	return high, false
}

func (r *receiver) deliver(id uint32, m *inMsg, now clock.Time) {
	delete(r.msgs, id)
	m.rec.EndNs = ns(now)
	if f := r.ep.cfg.OnMessageReceived; f != nil {
		f(m.rec)
	}
}

// ack answers one DATA packet: its PSN, its timestamp, its CE mark, and
// the cumulative and selective state around it.
func (r *receiver) ack(pk *wire.Packet, ecn netio.ECN, dup bool) {
	a := wire.Packet{Header: wire.Header{
		Type: wire.TypeACK, SubflowBits: pk.SubflowBits, EV: pk.EV, Flow: pk.Flow, Msg: pk.Msg, PSN: pk.PSN,
		TSVal: uint32(r.ep.clk.Now()), TSEcr: pk.TSVal,
	}, CumAck: r.set.base, SACK: r.set.sack(pk.PSN)}
	if ecn == netio.CE {
		a.Flags |= wire.FlagECE
	}
	if dup {
		a.Flags |= wire.FlagDup
	}
	r.ep.stats.ACKsSent++
	r.ep.sendControl(r.key.peer, &a)
}

// onProbe hands a probe to the scheme, then answers it with an ACK whose
// selective bitmap covers the probe's PSN and the 63 before it, so the
// ACKs of a message's last packets are repeated once.
func (r *receiver) onProbe(pk *wire.Packet) {
	r.scheme.OnProbe(pk)
	a := wire.Packet{Header: wire.Header{
		Type: wire.TypeACK, Flags: wire.FlagProbeACK, SubflowBits: pk.SubflowBits, EV: pk.EV,
		Flow: pk.Flow, Msg: pk.Msg, PSN: pk.PSN + 1, TSVal: uint32(r.ep.clk.Now()), TSEcr: pk.TSVal,
	}, CumAck: r.set.base, SACK: r.set.sack(pk.PSN + 1)}
	r.ep.stats.ACKsSent++
	r.ep.sendControl(r.key.peer, &a)
}

// ReceiverEnv, implemented for the flow's scheme.

func (r *receiver) Now() clock.Time { return r.ep.clk.Now() }

func (r *receiver) NACK(trigger *wire.Packet, missing []uint32) {
	if m := r.msgs[trigger.Msg]; m != nil {
		m.rec.NACKsSent += len(missing)
	}
	for len(missing) > 0 {
		n := min(len(missing), wire.MaxNACKPSNs)
		nk := wire.Packet{Header: wire.Header{
			Type: wire.TypeNACK, SubflowBits: trigger.SubflowBits, EV: trigger.EV, Flow: trigger.Flow,
			Msg: trigger.Msg, PSN: trigger.PSN, TSVal: uint32(r.ep.clk.Now()), TSEcr: trigger.TSVal,
		}, NACKs: missing[:n]}
		r.ep.stats.NACKsSent++
		r.ep.stats.NACKedPSNs += uint64(n)
		r.ep.sendControl(r.key.peer, &nk)
		missing = missing[n:]
	}
}
