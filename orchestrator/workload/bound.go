package workload

import (
	"fmt"
	"math/bits"
	"time"

	"github.com/ftlab/ftlab/internal/units"
)

// Wire says how messages become packets on the wire.
type Wire struct {
	// Header is the bytes every packet carries besides payload, counted as
	// the link shaper counts them (from the Ethernet header on).
	Header int
	// Payload is the most payload bytes in one packet.
	Payload int
	// Propagation is the one-way delay of every link; 0 for emulated
	// links, which have none beyond serialization and queueing.
	Propagation time.Duration
}

// Bound is a lower bound on the collective completion time: no load
// balancer, transport or congestion control can finish sooner on the
// given fabric. It assumes no losses and no faults (a degraded link only
// makes the real CCT longer) and ignores acknowledgements.
type Bound struct {
	CCT time.Duration `json:"cct_ns"` // max(Host, Path)
	// Host is the largest time any host link needs to carry everything its
	// host sends or receives (see LowerBound).
	Host time.Duration `json:"host_ns"`
	// Path is the longest chain of dependent messages, each taking at
	// least its own serialization time.
	Path time.Duration `json:"path_ns"`
	// Limit says what sets the bound, e.g. "h0-0-0 receiving 3MiB at
	// 100Mbit".
	Limit string `json:"limit"`
}

// LowerBound computes a CCT lower bound for msgs on f, following the
// naive bound of Ofan section 3.5 (bytes over a host's link rate) and
// adding the packet pipeline and the dependency chains.
//
// A message of B bytes is n = ceil(B/Payload) packets and
// wire(B) = B + n*Header bytes; its smallest packet is w = B - (n-1)*Payload
// + Header bytes. It crosses L links (Fabric.Hops). Writing ser(x, r) for
// x bytes at r bit/s, R for the fabric's fastest link and p for
// Propagation:
//
//	tail(m) = (L-1)*ser(w, R) + L*p      after its last byte leaves the sender
//	head(m) = (L-1)*(ser(w, R) + p)      before its first byte reaches the receiver's link
//
// Earliest start and finish follow the dependencies, in message order:
//
//	ES(m) = max(Start(m), max over a in After(m) of EF(a))
//	EF(m) = ES(m) + ser(wire(B), min(send rate of src, receive rate of dst)) + tail(m)
//
// and, with S(h) and R(h) the wire bytes host h sends and receives,
//
//	send(h) = min ES over h's messages + ser(S(h), send rate of h) + min tail over them
//	recv(h) = min (ES + head) over messages to h + ser(R(h), receive rate of h) + p
//
// Host is the largest send or recv, Path the largest EF, CCT the larger
// of the two. Each term is a time some link must be busy (or a packet must
// travel) that no scheduling can overlap away, so each is a valid bound;
// times are rounded down to the nanosecond.
func LowerBound(msgs []Message, f *Fabric, w Wire) (Bound, error) {
	if w.Payload <= 0 || w.Header < 0 {
		return Bound{}, fmt.Errorf("need a positive payload per packet, got %d (header %d)", w.Payload, w.Header)
	}
	if err := CheckOrder(msgs); err != nil {
		return Bound{}, err
	}
	type side struct {
		bytes   uint64
		earlier time.Duration // min ES (send) or min ES+head (receive)
		tail    time.Duration // min tail (send)
		used    bool
	}
	send := map[string]*side{}
	recv := map[string]*side{}
	get := func(m map[string]*side, name string) *side {
		s := m[name]
		if s == nil {
			s = &side{}
			m[name] = s
		}
		return s
	}
	ef := make([]time.Duration, len(msgs))
	var b Bound
	for i, m := range msgs {
		src, ok1 := f.Host(m.Src)
		dst, ok2 := f.Host(m.Dst)
		if !ok1 || !ok2 {
			return Bound{}, fmt.Errorf("message %d: %s -> %s: no such host", i, m.Src, m.Dst)
		}
		if src.SendBps == 0 || dst.RecvBps == 0 || f.MaxBps == 0 {
			return Bound{}, fmt.Errorf("message %d: %s -> %s: a host link has no rate", i, m.Src, m.Dst)
		}
		wire, small := packets(m.Bytes, w)
		hops := f.Hops(src, dst)
		perHop := serialize(small, f.MaxBps)
		tail := time.Duration(max(hops-1, 0))*perHop + time.Duration(hops)*w.Propagation
		head := time.Duration(max(hops-1, 0)) * (perHop + w.Propagation)

		es := m.Start
		for _, a := range m.After {
			es = max(es, ef[a])
		}
		ef[i] = es + serialize(wire, min(src.SendBps, dst.RecvBps)) + tail
		if ef[i] > b.Path {
			b.Path = ef[i]
			if len(m.After) > 0 {
				b.Limit = fmt.Sprintf("the chain of messages ending with %d (%s -> %s, step %d)", i, m.Src, m.Dst, m.Step)
			} else {
				b.Limit = fmt.Sprintf("message %d alone (%s -> %s, %s)", i, m.Src, m.Dst, units.FormatSize(m.Bytes))
			}
		}

		s := get(send, m.Src)
		s.bytes += wire
		if !s.used || es < s.earlier {
			s.earlier = es
		}
		if !s.used || tail < s.tail {
			s.tail = tail
		}
		s.used = true
		r := get(recv, m.Dst)
		r.bytes += wire
		if !r.used || es+head < r.earlier {
			r.earlier = es + head
		}
		r.used = true
	}
	b.CCT = b.Path
	for _, h := range f.Hosts { // host order keeps Limit deterministic
		if s := send[h.Name]; s != nil {
			if t := s.earlier + serialize(s.bytes, h.SendBps) + s.tail; t > b.Host {
				b.Host = t
				if t > b.CCT {
					b.CCT, b.Limit = t, fmt.Sprintf("%s sending %s on the wire at %s", h.Name, units.FormatSize(s.bytes), units.FormatRate(h.SendBps))
				}
			}
		}
		if r := recv[h.Name]; r != nil {
			if t := r.earlier + serialize(r.bytes, h.RecvBps) + w.Propagation; t > b.Host {
				b.Host = t
				if t > b.CCT {
					b.CCT, b.Limit = t, fmt.Sprintf("%s receiving %s on the wire at %s", h.Name, units.FormatSize(r.bytes), units.FormatRate(h.RecvBps))
				}
			}
		}
	}
	return b, nil
}

// packets returns the wire bytes of a message and the size of its
// smallest packet.
func packets(payload uint64, w Wire) (wire, smallest uint64) {
	p, h := uint64(w.Payload), uint64(w.Header)
	n := (payload + p - 1) / p
	if n == 0 { // an empty message still sends one header
		return h, h
	}
	return payload + n*h, payload - (n-1)*p + h
}

// serialize is the time to send bytes at bps, rounded down: exact for any
// size, with 128-bit intermediate arithmetic.
func serialize(bytes, bps uint64) time.Duration {
	hi, lo := bits.Mul64(bytes, 8*uint64(time.Second))
	if hi >= bps { // beyond ~292 years
		return time.Duration(1<<63 - 1)
	}
	q, _ := bits.Div64(hi, lo, bps)
	if q > 1<<63-1 {
		return time.Duration(1<<63 - 1)
	}
	return time.Duration(q)
}
