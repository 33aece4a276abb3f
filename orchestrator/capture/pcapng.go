package capture

import (
	"encoding/binary"
	"fmt"
	"io"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/ftlab/ftlab/bpf"
)

// pcapWriter writes frames as pcapng: one interface per captured port
// (named node:ifname), and on every packet a comment (Frame.Comment), the
// direction flag and, for switch ports, the program's verdict.
type pcapWriter struct {
	w     *pcapgo.NgWriter
	ids   map[*Port]int
	start time.Time
}

func newPcapWriter(out io.Writer, labName string, ports []Port, snaplen int, filter string) (*pcapWriter, error) {
	intf := func(p *Port) pcapgo.NgInterface {
		kind := "host"
		if p.Switch {
			kind = "switch"
		}
		return pcapgo.NgInterface{
			Name:                p.String(),
			Description:         fmt.Sprintf("ftlab lab %s, %s %s port %d, link %s to %s", labName, kind, p.Node, p.Port, p.Link, p.Peer),
			Filter:              filter,
			OS:                  "Linux",
			LinkType:            layers.LinkTypeEthernet,
			SnapLength:          uint32(snaplen),
			TimestampResolution: 9,
		}
	}
	opts := pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{
		Application: "ftlab capture", OS: "Linux",
		Comment: fmt.Sprintf("ftlab lab %s; every packet's comment names its port and direction and, at a switch, what the switch did with it", labName),
	}}
	w, err := pcapgo.NewNgWriterInterface(out, intf(&ports[0]), opts)
	if err != nil {
		return nil, fmt.Errorf("capture: pcapng: %w", err)
	}
	pw := &pcapWriter{w: w, ids: map[*Port]int{&ports[0]: 0}, start: time.Now()}
	for i := 1; i < len(ports); i++ {
		id, err := w.AddInterface(intf(&ports[i]))
		if err != nil {
			return nil, fmt.Errorf("capture: pcapng: %w", err)
		}
		pw.ids[&ports[i]] = id
	}
	// A reader on a pipe (wireshark -k -i -) wants the header now.
	if err := w.Flush(); err != nil {
		return nil, fmt.Errorf("capture: pcapng: %w", err)
	}
	return pw, nil
}

// Verdict codes of the pcapng epb_verdict option (the programs' return
// values).
const (
	xdpDrop     = 1
	xdpPass     = 2
	xdpRedirect = 4
	tcActOK     = 0
	tcActShot   = 2
	tcRedirect  = 7
)

// programVerdict is the return code of the program that took the frame's
// record, and whether there is one (OUT records of forwarded frames were
// taken before the program returned, with the same code as IN).
func programVerdict(f *Frame) (pcapgo.NgEpbVerdict, bool) {
	if !f.Port.Switch {
		return pcapgo.NgEpbVerdict{}, false
	}
	tc := f.Flags&bpf.TapTC != 0
	var code uint64
	switch {
	case f.Verdict == bpf.TapDrop && tc:
		code = tcActShot
	case f.Verdict == bpf.TapDrop:
		code = xdpDrop
	case f.Verdict == bpf.TapLocal && tc:
		code = tcActOK
	case f.Verdict == bpf.TapLocal:
		code = xdpPass
	case tc:
		code = tcRedirect
	default:
		code = xdpRedirect
	}
	v := pcapgo.NgEpbVerdict{Type: pcapgo.NgEpbVerdictTypeLinuxeBPFXDP, Data: binary.LittleEndian.AppendUint64(nil, code)}
	if tc {
		v.Type = pcapgo.NgEpbVerdictTypeLinuxeBPFTC
	}
	return v, true
}

func (pw *pcapWriter) write(f *Frame) error {
	dir := pcapgo.NgEpbFlagDirectionInbound
	if f.Dir == bpf.TapOut {
		dir = pcapgo.NgEpbFlagDirectionOutbound
	}
	opts := pcapgo.NgPacketOptions{Comments: []string{f.Comment()}, Flags: &pcapgo.NgEpbFlags{Direction: dir}}
	if v, ok := programVerdict(f); ok {
		opts.Verdicts = []pcapgo.NgEpbVerdict{v}
	}
	ci := gopacket.CaptureInfo{Timestamp: f.Time, CaptureLength: len(f.Data), Length: f.Len, InterfaceIndex: pw.ids[f.Port]}
	if err := pw.w.WritePacketWithOptions(ci, f.Data, opts); err != nil {
		return fmt.Errorf("capture: pcapng: %w", err)
	}
	return nil
}

func (pw *pcapWriter) flush() error { return pw.w.Flush() }

// close writes every interface's statistics (frames the port saw and
// frames the capture lost) and flushes.
func (pw *pcapWriter) close(stats []PortStats) error {
	end := time.Now()
	for i, s := range stats {
		st := pcapgo.NgInterfaceStatistics{
			LastUpdate: end, StartTime: pw.start, EndTime: end,
			PacketsReceived: s.Seen, PacketsDropped: s.Lost,
		}
		if err := pw.w.WriteInterfaceStats(i, st); err != nil {
			return fmt.Errorf("capture: pcapng: %w", err)
		}
	}
	return pw.w.Flush()
}
