package capture

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/ftlab/ftlab/bpf"
	"github.com/ftlab/ftlab/hostagent/wire"
)

// Frame is one captured frame and what is known about it.
type Frame struct {
	Port *Port     // where it was captured
	Time time.Time // when
	Len  int       // frame length on the wire
	Data []byte    // its first bytes (the snaplen)
	Dir  bpf.TapDir

	// At a switch port (Port.Switch): what the switch did. Peer is the
	// other port of a forwarded or egress-dropped frame (IN: where it
	// went, OUT: where it came from), nil if none.
	Verdict bpf.TapVerdict
	Cause   bpf.TapCause
	Flags   bpf.TapFlags
	Peer    *Port

	// Decoded from Data by decode.
	IPv4             bool
	Src, Dst         netip.Addr
	Proto, TTL, TOS  uint8
	UDP              bool
	SrcPort, DstPort uint16
	FT               bool        // carries a valid ftlab header
	Header           wire.Header // the ftlab header, if FT
}

// Ethernet, IPv4 and UDP lengths and codes decode needs.
const (
	ethLen   = 14
	ethIPv4  = 0x0800
	ipv4Min  = 20
	protoUDP = 17
	udpLen   = 8
	ipMFOff  = 0x3fff
)

// decode fills the decoded fields from f.Data: the IPv4 header, the UDP
// ports of an unfragmented datagram and the ftlab header if the payload
// starts with one (wire.ParseHeader: only the common header need have
// been captured).
func (f *Frame) decode() {
	b := f.Data
	if len(b) < ethLen+ipv4Min || binary.BigEndian.Uint16(b[12:]) != ethIPv4 || b[ethLen]>>4 != 4 {
		return
	}
	ip := b[ethLen:]
	ihl := int(ip[0]&0xf) * 4
	if ihl < ipv4Min || len(ip) < ihl {
		return
	}
	f.IPv4 = true
	f.TOS, f.TTL, f.Proto = ip[1], ip[8], ip[9]
	f.Src = netip.AddrFrom4([4]byte(ip[12:16]))
	f.Dst = netip.AddrFrom4([4]byte(ip[16:20]))
	if f.Proto != protoUDP || binary.BigEndian.Uint16(ip[6:])&ipMFOff != 0 || len(ip) < ihl+udpLen {
		return
	}
	udp := ip[ihl:]
	f.UDP = true
	f.SrcPort, f.DstPort = binary.BigEndian.Uint16(udp[0:]), binary.BigEndian.Uint16(udp[2:])
	f.FT = wire.ParseHeader(udp[udpLen:], &f.Header) == nil
}

// Comment is the frame's pcapng comment: the port, the direction and, at
// a switch, the verdict, e.g. "e0-0 port 2 (to a0-0) in: forwarded to
// port 0 (h0-0-0), CE marked".
func (f *Frame) Comment() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s port %d (%s %s) %s", f.Port.Node, f.Port.Port, towards(f.Dir), f.Port.Peer, f.Dir)
	if !f.Port.Switch {
		return b.String()
	}
	b.WriteString(": ")
	b.WriteString(f.VerdictText())
	return b.String()
}

func towards(d bpf.TapDir) string {
	if d == bpf.TapIn {
		return "from"
	}
	return "to"
}

// VerdictText says what the switch did, e.g. "dropped (buffer) at port 0
// (h0-0-0)"; "" for host ports.
func (f *Frame) VerdictText() string {
	if !f.Port.Switch {
		return ""
	}
	var b strings.Builder
	switch f.Verdict {
	case bpf.TapForward:
		b.WriteString("forwarded")
	case bpf.TapDrop:
		fmt.Fprintf(&b, "dropped (%s)", f.Cause)
	case bpf.TapLocal:
		b.WriteString("to the switch itself")
	default:
		b.WriteString(f.Verdict.String())
	}
	if f.Peer != nil {
		switch {
		case f.Dir == bpf.TapOut:
			fmt.Fprintf(&b, ", from port %d (%s)", f.Peer.Port, f.Peer.Peer)
		case f.Verdict == bpf.TapForward:
			fmt.Fprintf(&b, " to port %d (%s)", f.Peer.Port, f.Peer.Peer)
		default:
			fmt.Fprintf(&b, " at port %d (%s)", f.Peer.Port, f.Peer.Peer)
		}
	}
	if f.Flags&bpf.TapTrimmed != 0 {
		b.WriteString(", trimmed")
	}
	if f.Flags&bpf.TapCE != 0 {
		b.WriteString(", CE marked")
	}
	return b.String()
}

// Summary is one line describing the frame, for text output.
func (f *Frame) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %-3s", f.Time.Format("15:04:05.000000"), f.Port, f.Dir)
	if v := f.VerdictText(); v != "" {
		fmt.Fprintf(&b, " [%s]", v)
	}
	switch {
	case !f.IPv4:
		fmt.Fprintf(&b, " non-IPv4 len %d", f.Len)
		return b.String()
	case f.UDP:
		fmt.Fprintf(&b, " %s:%d > %s:%d", f.Src, f.SrcPort, f.Dst, f.DstPort)
	default:
		fmt.Fprintf(&b, " %s > %s proto %d", f.Src, f.Dst, f.Proto)
	}
	if f.FT {
		h := &f.Header
		fmt.Fprintf(&b, " %s flow %d msg %d psn %d ev %#04x", h.Type, h.Flow, h.Msg, h.PSN, h.EV)
		if h.Flags != 0 {
			fmt.Fprintf(&b, " flags %s", flagNames(h.Flags))
		}
	}
	fmt.Fprintf(&b, " len %d", f.Len)
	return b.String()
}

var ftFlagNames = []struct {
	f    wire.Flags
	name string
}{{wire.FlagRetx, "retx"}, {wire.FlagECE, "ece"}, {wire.FlagDup, "dup"}, {wire.FlagProbeACK, "probe_ack"}}

func flagNames(fl wire.Flags) string {
	var names []string
	for _, n := range ftFlagNames {
		if fl&n.f != 0 {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, ",")
}

// JSON is the frame as `ftlab capture --json` prints it, one per line.
type JSON struct {
	Time    time.Time `json:"time"`
	Port    string    `json:"port"`
	Dir     string    `json:"dir"`
	Verdict string    `json:"verdict,omitempty"`
	Cause   string    `json:"cause,omitempty"`
	Peer    string    `json:"peer_port,omitempty"`
	Trimmed bool      `json:"trimmed,omitempty"`
	CE      bool      `json:"ce_marked,omitempty"`
	Len     int       `json:"len"`
	Src     string    `json:"src,omitempty"`
	Dst     string    `json:"dst,omitempty"`
	SrcPort uint16    `json:"sport,omitempty"`
	DstPort uint16    `json:"dport,omitempty"`
	Type    string    `json:"type,omitempty"`
	Flags   string    `json:"flags,omitempty"`
	EV      *uint16   `json:"ev,omitempty"`
	Flow    *uint32   `json:"flow,omitempty"`
	Msg     *uint32   `json:"msg,omitempty"`
	PSN     *uint32   `json:"psn,omitempty"`
}

// JSON returns the frame's JSON form.
func (f *Frame) JSON() JSON {
	j := JSON{Time: f.Time, Port: f.Port.String(), Dir: f.Dir.String(), Len: f.Len}
	if f.Port.Switch {
		j.Verdict = f.Verdict.String()
		if f.Verdict == bpf.TapDrop {
			j.Cause = f.Cause.String()
		}
		if f.Peer != nil {
			j.Peer = f.Peer.String()
		}
		j.Trimmed, j.CE = f.Flags&bpf.TapTrimmed != 0, f.Flags&bpf.TapCE != 0
	}
	if f.IPv4 {
		j.Src, j.Dst = f.Src.String(), f.Dst.String()
	}
	if f.UDP {
		j.SrcPort, j.DstPort = f.SrcPort, f.DstPort
	}
	if f.FT {
		h := f.Header
		j.Type, j.Flags = h.Type.String(), flagNames(h.Flags)
		j.EV, j.Flow, j.Msg, j.PSN = &h.EV, &h.Flow, &h.Msg, &h.PSN
	}
	return j
}
