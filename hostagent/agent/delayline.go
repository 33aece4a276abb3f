package agent

import (
	"encoding/binary"
	"math/rand/v2"
	"net/netip"
	"time"

	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/netio"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/hostagent/wire"
)

// delayLine emulates the fabric's link propagation delays at the
// receiving host (docs/delay.md). The kernel cannot hold packets back, so
// packets cross the fabric at once, every switch adding the delay of the
// link it came in on to the header's delay word (bpf/c/delay.h); the
// delay line then holds each arrival until the kernel's arrival time plus
// that sum plus the host's own access link's delay, plus, with jitter, a
// random share of the path's jitter bound, and hands it on then, several
// at a time when their times fall together.
//
// Each path stays first in, first out: without jitter every packet of a
// path waits the same time; with it, a packet never leaves before one of
// the same path (source, EV and path delay) that came before it.
type delayLine struct {
	slot    *Slot
	slack   time.Duration // how late the release timer may run
	access  int64         // ns: the access link's delay ...
	accessJ int64         // ... and jitter bound
	rng     *rand.Rand
	deliver func(d netio.Datagram, delay, late int64)

	heap  heldHeap
	seq   uint64
	timer clock.Timer
	armed clock.Time // when the timer is set to fire; 0: not set
	paths map[pathKey]clock.Time
	free  [][]byte
	size  int // payload buffer size

	total   transport.DelayRecord
	heldMax int
}

// held is a datagram waiting in a delay line.
type held struct {
	due   clock.Time
	seq   uint64 // arrival order: ties leave in it
	delay int64  // ns it was meant to wait
	d     netio.Datagram
}

// pathKey tells paths apart as well as a receiver can: packets from one
// source, on one EV, whose path has one delay.
type pathKey struct {
	peer  netip.Addr
	ev    uint16
	delay uint32
}

// maxPaths bounds the jitter's per-path memory: past it, paths whose
// last packet is due are forgotten (nothing of them is held).
const maxPaths = 4096

func newDelayLine(slot *Slot, slack, access, accessJitter time.Duration, seed uint64, size int,
	deliver func(netio.Datagram, int64, int64)) *delayLine {
	return &delayLine{
		slot: slot, slack: slack, access: int64(access), accessJ: int64(accessJitter),
		rng: rand.New(rand.NewPCG(seed, 0x64656c6179)), deliver: deliver,
		paths: map[pathKey]clock.Time{}, size: size,
	}
}

// headerDelay reads the delay and jitter words of an agents' packet.
func headerDelay(p []byte) (delay, jitter uint32, ok bool) {
	if len(p) < wire.CommonLen || binary.BigEndian.Uint16(p) != wire.Magic || p[2] != wire.Version {
		return 0, 0, false
	}
	return binary.BigEndian.Uint32(p[wire.DelayOff:]), binary.BigEndian.Uint32(p[wire.JitterOff:]), true
}

// push takes a datagram that arrived at arrival (loop time). Anything
// that is not an agents' packet goes on at once, for the endpoint to
// count. The payload is copied: the conn reuses its buffers.
func (l *delayLine) push(d netio.Datagram, arrival clock.Time) {
	acc, jit, ok := headerDelay(d.Payload)
	if !ok {
		l.deliver(d, 0, 0)
		return
	}
	delay := int64(acc) + l.access
	due := arrival.Add(time.Duration(delay))
	if j := int64(jit) + l.accessJ; j > 0 {
		due = due.Add(time.Duration(l.rng.Int64N(j + 1)))
		k := pathKey{d.Peer, d.EV, acc}
		if last, ok := l.paths[k]; ok && due < last {
			due = last
		}
		if len(l.paths) >= maxPaths {
			l.forget()
		}
		l.paths[k] = due
	}
	var buf []byte
	if n := len(l.free); n > 0 {
		buf, l.free = l.free[n-1], l.free[:n-1]
	} else {
		buf = make([]byte, 0, max(l.size, len(d.Payload)))
	}
	d.Payload = append(buf[:0], d.Payload...)
	l.seq++
	l.heap.push(held{due: due, seq: l.seq, delay: delay, d: d})
	l.heldMax = max(l.heldMax, len(l.heap))
	l.arm()
}

// forget drops the per-path times that no held packet can need.
func (l *delayLine) forget() {
	now := l.slot.Now()
	for k, due := range l.paths {
		if due <= now {
			delete(l.paths, k)
		}
	}
}

// arm sets the release timer for the earliest held packet.
func (l *delayLine) arm() {
	if len(l.heap) == 0 {
		return
	}
	due := l.heap[0].due
	if l.armed != 0 && l.armed <= due {
		return
	}
	d := due.Sub(l.slot.Now())
	if l.timer == nil {
		l.timer = l.slot.AfterFuncSlack(d, l.slack, l.release)
	} else {
		l.timer.Reset(d)
	}
	l.armed = due
}

// release hands on every packet that is due, earliest first, and counts
// how late each went against its ideal arrival.
func (l *delayLine) release() {
	l.armed = 0
	now := l.slot.Now()
	for len(l.heap) > 0 && l.heap[0].due <= now {
		h := l.heap.pop()
		late := int64(now - h.due)
		l.total.Add(h.delay, late)
		l.deliver(h.d, h.delay, late)
		l.free = append(l.free, h.d.Payload)
		now = l.slot.Now()
	}
	l.arm()
}

// heldHeap is a binary min-heap of held datagrams by (due, seq).
type heldHeap []held

func (h heldHeap) less(i, j int) bool {
	return h[i].due < h[j].due || h[i].due == h[j].due && h[i].seq < h[j].seq
}

func (h *heldHeap) push(x held) {
	*h = append(*h, x)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s.less(i, p) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *heldHeap) pop() held {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s[last] = held{}
	s = s[:last]
	for i := 0; ; {
		c := 2*i + 1
		if c >= len(s) {
			break
		}
		if r := c + 1; r < len(s) && s.less(r, c) {
			c = r
		}
		if !s.less(c, i) {
			break
		}
		s[i], s[c] = s[c], s[i]
		i = c
	}
	*h = s
	return top
}
