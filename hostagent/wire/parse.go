package wire

import "encoding/binary"

// Parse decodes b into p, validating every field (see the package doc).
// p.Payload aliases b; p.NACKs reuses its backing array. On error p is left
// in an unspecified state. Parse never panics.
func Parse(b []byte, p *Packet) error {
	var h Header
	if err := ParseHeader(b, &h); err != nil {
		return err
	}
	be := binary.BigEndian
	nacks := p.NACKs[:0]
	*p = Packet{Header: h}
	const c = CommonLen // the type's own part starts here
	switch h.Type {
	case TypeData:
		n, err := dataHeader(b, p)
		if err != nil {
			return err
		}
		if len(b)-DataLen != n {
			return perr(ErrLength, "length", uint64(len(b)-DataLen))
		}
		p.Payload = b[DataLen:]
	case TypeACK:
		if len(b) != AckLen {
			return perr(lenErr(len(b), AckLen), "ack length", uint64(len(b)))
		}
		p.CumAck = be.Uint32(b[c:])
		p.SACK = be.Uint64(b[c+4:])
	case TypeNACK:
		if len(b) < NACKBaseLen {
			return perr(ErrTruncated, "nack header", uint64(len(b)))
		}
		if r := be.Uint16(b[c+2:]); r != 0 {
			return perr(ErrReserved, "nack reserved", uint64(r))
		}
		n := int(be.Uint16(b[c:]))
		if n == 0 || n > MaxNACKPSNs {
			return perr(ErrField, "nack count", uint64(n))
		}
		if want := NACKBaseLen + 4*n; len(b) != want {
			return perr(lenErr(len(b), want), "nack length", uint64(len(b)))
		}
		for i := 0; i < n; i++ {
			nacks = append(nacks, be.Uint32(b[NACKBaseLen+4*i:]))
		}
		p.NACKs = nacks
	default: // probes
		if len(b) != ProbeLen {
			return perr(ErrLength, "probe length", uint64(len(b)))
		}
	}
	return nil
}

// ParseHeader decodes and validates the common header at the start of b
// (magic, version, type, flags, sfbits), whatever follows it: for tools
// that see packets cut short, such as a capture's first bytes. Parse
// checks the rest.
func ParseHeader(b []byte, h *Header) error {
	if len(b) < CommonLen {
		return perr(ErrTruncated, "header", uint64(len(b)))
	}
	be := binary.BigEndian
	if m := be.Uint16(b[0:]); m != Magic {
		return perr(ErrMagic, "magic", uint64(m))
	}
	if b[2] != Version {
		return perr(ErrVersion, "version", uint64(b[2]))
	}
	t := Type(b[3])
	if !t.Valid() {
		return perr(ErrType, "type", uint64(b[3]))
	}
	f := Flags(b[4])
	if f&^allowedFlags(t) != 0 {
		return perr(ErrFlags, "flags", uint64(f))
	}
	if b[5] > MaxSubflowBit {
		return perr(ErrField, "sfbits", uint64(b[5]))
	}
	*h = Header{
		Type:        t,
		Flags:       f,
		SubflowBits: b[5],
		EV:          be.Uint16(b[6:]),
		Flow:        be.Uint32(b[8:]),
		Msg:         be.Uint32(b[12:]),
		PSN:         be.Uint32(b[16:]),
		TSVal:       be.Uint32(b[20:]),
		TSEcr:       be.Uint32(b[24:]),
		Delay:       be.Uint32(b[DelayOff:]),
		Jitter:      be.Uint32(b[JitterOff:]),
	}
	return nil
}

// lenErr tells a short packet (truncated) from a long one (length mismatch).
func lenErr(got, want int) error {
	if got < want {
		return ErrTruncated
	}
	return ErrLength
}

// dataHeader decodes a DATA packet's own header fields into p (path map,
// offset, message length) and returns the payload length it declares.
func dataHeader(b []byte, p *Packet) (n int, err error) {
	const c = CommonLen
	if len(b) < DataLen {
		return 0, perr(ErrTruncated, "data header", uint64(len(b)))
	}
	be := binary.BigEndian
	p.Path = PathMap(be.Uint16(b[c+10:]))
	if !p.Path.valid() {
		return 0, perr(ErrReserved, "data path", uint64(p.Path))
	}
	n = int(be.Uint16(b[c+8:]))
	p.Offset = be.Uint32(b[c:])
	p.MsgLen = be.Uint32(b[c+4:])
	if uint64(p.Offset)+uint64(n) > uint64(p.MsgLen) {
		return 0, perr(ErrField, "offset+length", uint64(p.Offset)+uint64(n))
	}
	return n, nil
}

// ParseTrimmed decodes b into p when b is a DATA packet that a trimming
// switch cut short: an intact DATA header whose payload is shorter than its
// length field says (Ordered Chaos II-B, NDP-style trimming: the header
// goes on with priority so the receiver learns of the loss at once). p
// gets the header, offset, message length and path map, and no payload.
// Anything else, a whole DATA packet included, is an error: Parse is the
// function for those.
func ParseTrimmed(b []byte, p *Packet) error {
	var h Header
	if err := ParseHeader(b, &h); err != nil {
		return err
	}
	if h.Type != TypeData {
		return perr(ErrType, "trimmed type", uint64(h.Type))
	}
	*p = Packet{Header: h, NACKs: p.NACKs[:0]}
	n, err := dataHeader(b, p)
	if err != nil {
		return err
	}
	if got := len(b) - DataLen; got >= n {
		return perr(ErrLength, "trimmed length", uint64(got))
	}
	return nil
}
