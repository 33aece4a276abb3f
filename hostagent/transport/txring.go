package transport

import "github.com/ftlab/ftlab/hostagent/clock"

// txPacket is the sender's state of one PSN from its first transmission
// until it is acknowledged and every earlier PSN is too.
type txPacket struct {
	psn      uint32
	msg      *outMsg
	off      uint32
	n        int // payload bytes
	first    clock.Time
	last     clock.Time // stamp of the latest copy
	lastEV   uint16
	copies   int
	acked    bool
	lost     bool  // declared lost, waiting in the retransmit queue
	inflight bool  // counted in the window
	cause    Cause // why it was declared lost, for RetransmitEV

	prev, next *txPacket // outstanding list, by last
	listed     bool
}

// txRing holds txPackets by PSN for [base, base+len), growing as needed.
type txRing struct {
	buf  []*txPacket
	head int
	n    int
	base uint32
}

func (r *txRing) get(psn uint32) *txPacket {
	off := psn - r.base
	if off >= uint32(r.n) {
		return nil
	}
	return r.buf[(r.head+int(off))%len(r.buf)]
}

// push appends the packet for PSN base+len.
func (r *txRing) push(p *txPacket) {
	if r.n == len(r.buf) {
		nb := make([]*txPacket, max(64, 2*len(r.buf)))
		for i := 0; i < r.n; i++ {
			nb[i] = r.buf[(r.head+i)%len(r.buf)]
		}
		r.buf, r.head = nb, 0
	}
	r.buf[(r.head+r.n)%len(r.buf)] = p
	r.n++
}

// popAcked drops acknowledged packets from the front.
func (r *txRing) popAcked() {
	for r.n > 0 {
		p := r.buf[r.head]
		if !p.acked {
			return
		}
		r.buf[r.head] = nil
		r.head = (r.head + 1) % len(r.buf)
		r.n--
		r.base++
	}
}

// txList is the outstanding packets ordered by the time of their latest
// copy; its head is what the retransmission timer watches.
type txList struct{ head, tail *txPacket }

func (l *txList) pushBack(p *txPacket) {
	if p.listed {
		l.remove(p)
	}
	p.prev, p.next, p.listed = l.tail, nil, true
	if l.tail != nil {
		l.tail.next = p
	} else {
		l.head = p
	}
	l.tail = p
}

func (l *txList) remove(p *txPacket) {
	if !p.listed {
		return
	}
	if p.prev != nil {
		p.prev.next = p.next
	} else {
		l.head = p.next
	}
	if p.next != nil {
		p.next.prev = p.prev
	} else {
		l.tail = p.prev
	}
	p.prev, p.next, p.listed = nil, nil, false
}
