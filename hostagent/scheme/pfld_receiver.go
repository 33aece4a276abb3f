package scheme

import (
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/hostagent/wire"
)

// pfldReceiver is PFLD's receiving side: one bitmap per flow. Subflow
// ordering does the rest: a packet or probe on EV e speaking for PSN p
// proves lost every earlier PSN of p's subflow (p-sigma, p-2*sigma, ...)
// that was sent with e, because those left before it on the same FIFO
// path. The PSNs sent with e are the section [lift(e, p), p], where lift
// finds the PSN whose low 16 bits are e just at or below p.
type pfldReceiver struct {
	env     transport.ReceiverEnv
	bm      bitmap
	missing []uint32
}

// lift returns the section start of ev seen from psn: the largest PSN <= psn
// whose low 16 bits are ev. A section longer than 65535 PSNs lifts to a
// later start, which only narrows the search (never a false NACK).
func lift(ev uint16, psn uint32) uint32 { return psn - uint32(uint16(psn)-ev) }

func (r *pfldReceiver) OnData(p *wire.Packet) {
	r.bm.mark(p.PSN)
	if p.Flags&wire.FlagRetx != 0 {
		return // out of sequence by nature: RTX probes cover it
	}
	sigma := uint32(1) << p.SubflowBits
	r.scan(p, p.PSN-sigma, sigma)
}

func (r *pfldReceiver) OnProbe(p *wire.Packet) {
	switch p.Type {
	case wire.TypeRTX:
		if r.bm.state(p.PSN) == missing {
			r.missing = append(r.missing[:0], p.PSN)
			r.env.NACK(p, r.missing)
		}
	case wire.TypeTail, wire.TypeSectionEnd, wire.TypePeriodic:
		// The probe speaks for the last PSN sent on its EV, itself included.
		r.scan(p, p.PSN, uint32(1)<<p.SubflowBits)
	}
}

// scan walks trigger's subflow back from psn within trigger's section and
// NACKs the missing PSNs it passes, stopping at the first one received:
// holes below it were already exposed when that one arrived.
func (r *pfldReceiver) scan(trigger *wire.Packet, psn, sigma uint32) {
	mask := sigma - 1
	if uint32(trigger.EV)&mask != trigger.PSN&mask {
		return // EV does not name this PSN's subflow: not PSN-encoded
	}
	start := lift(trigger.EV, trigger.PSN)
	r.missing = r.missing[:0]
	for q := psn; wire.SeqLEq(start, q) && wire.SeqLEq(q, trigger.PSN); q -= sigma {
		if r.bm.state(q) != missing {
			break
		}
		r.missing = append(r.missing, q)
	}
	if len(r.missing) > 0 {
		r.env.NACK(trigger, r.missing)
	}
}

func (r *pfldReceiver) StateBytes() int { return r.bm.stateBytes() }
