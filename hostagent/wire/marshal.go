package wire

import (
	"encoding/binary"
	"fmt"
)

// Append encodes p after b and returns the extended slice. It refuses (with
// ErrInvalid) what Parse would reject, so every marshaled packet parses back
// to the same value.
func Append(b []byte, p *Packet) ([]byte, error) {
	if err := check(p); err != nil {
		return b, err
	}
	n := len(b)
	b = grow(b, p.Len())
	w := b[n:]
	be := binary.BigEndian
	be.PutUint16(w[0:], Magic)
	w[2] = Version
	w[3] = uint8(p.Type)
	w[4] = uint8(p.Flags)
	w[5] = p.SubflowBits
	be.PutUint16(w[6:], p.EV)
	be.PutUint32(w[8:], p.Flow)
	be.PutUint32(w[12:], p.Msg)
	be.PutUint32(w[16:], p.PSN)
	be.PutUint32(w[20:], p.TSVal)
	be.PutUint32(w[24:], p.TSEcr)
	be.PutUint32(w[DelayOff:], p.Delay)
	be.PutUint32(w[JitterOff:], p.Jitter)
	const c = CommonLen // the type's own part starts here
	switch p.Type {
	case TypeData:
		be.PutUint32(w[c:], p.Offset)
		be.PutUint32(w[c+4:], p.MsgLen)
		be.PutUint16(w[c+8:], uint16(len(p.Payload)))
		be.PutUint16(w[c+10:], uint16(p.Path))
		copy(w[DataLen:], p.Payload)
	case TypeACK:
		be.PutUint32(w[c:], p.CumAck)
		be.PutUint64(w[c+4:], p.SACK)
	case TypeNACK:
		be.PutUint16(w[c:], uint16(len(p.NACKs)))
		w[c+2], w[c+3] = 0, 0
		for i, psn := range p.NACKs {
			be.PutUint32(w[NACKBaseLen+4*i:], psn)
		}
	}
	return b, nil
}

// Marshal encodes p into a new slice.
func Marshal(p *Packet) ([]byte, error) { return Append(make([]byte, 0, p.Len()), p) }

// AppendData appends a DATA header for a payload of payloadLen bytes and
// returns the slice and the payload region within it, so a sender can fill
// the payload in place instead of copying it. p.Payload is ignored.
func AppendData(b []byte, p *Packet, payloadLen int) ([]byte, []byte, error) {
	if p.Type != TypeData {
		return b, nil, fmt.Errorf("wire: AppendData of %v: %w", p.Type, ErrInvalid)
	}
	if payloadLen < 0 || payloadLen > MaxPayload {
		return b, nil, fmt.Errorf("wire: payload of %d bytes: %w", payloadLen, ErrInvalid)
	}
	q := *p
	q.Payload = nil
	if err := check(&q); err != nil {
		return b, nil, err
	}
	n := len(b)
	b, _ = Append(b, &q)
	binary.BigEndian.PutUint16(b[n+CommonLen+8:], uint16(payloadLen))
	b = grow(b, payloadLen)
	return b, b[n+DataLen:], nil
}

func check(p *Packet) error {
	switch {
	case !p.Type.Valid():
		return fmt.Errorf("wire: marshal type %d: %w", p.Type, ErrInvalid)
	case p.Flags&^allowedFlags(p.Type) != 0:
		return fmt.Errorf("wire: marshal %v with flags %#x: %w", p.Type, p.Flags, ErrInvalid)
	case p.SubflowBits > MaxSubflowBit:
		return fmt.Errorf("wire: marshal sfbits %d: %w", p.SubflowBits, ErrInvalid)
	case p.Type == TypeData && !p.Path.valid():
		return fmt.Errorf("wire: marshal path map %#x: %w", uint16(p.Path), ErrInvalid)
	case p.Type == TypeData && len(p.Payload) > MaxPayload:
		return fmt.Errorf("wire: marshal payload of %d bytes: %w", len(p.Payload), ErrInvalid)
	case p.Type == TypeNACK && (len(p.NACKs) == 0 || len(p.NACKs) > MaxNACKPSNs):
		return fmt.Errorf("wire: marshal NACK of %d PSNs: %w", len(p.NACKs), ErrInvalid)
	}
	return nil
}

// grow extends b by n bytes, reallocating only when capacity is short.
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b[:len(b)+n]
	}
	nb := make([]byte, len(b)+n, 2*len(b)+n)
	copy(nb, b)
	return nb
}
