package capture

import (
	"errors"
	"fmt"
	"io"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/ftlab/ftlab/internal/topology"
)

// ReadPcapng reads a pcapng file of Ethernet frames, such as ftlab capture
// -w writes, back into frames decoded as at capture time (addresses, UDP
// ports, the ftlab header), each with its port when the interface is
// named node:ifname after a port of t. What a switch did with a frame is
// not in the file's packet data and is left zero: filters on verdicts
// match nothing. Teaching labs check students' captures with it.
func ReadPcapng(r io.Reader, t *topology.Topology) ([]*Frame, error) {
	rd, err := pcapgo.NewNgReader(r, pcapgo.DefaultNgReaderOptions)
	if err != nil {
		return nil, fmt.Errorf("pcapng: %w", err)
	}
	ports := map[int]*Port{}
	var out []*Frame
	for {
		data, ci, err := rd.ReadPacketData()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("pcapng: frame %d: %w", len(out)+1, err)
		}
		f := &Frame{Time: ci.Timestamp, Len: ci.Length, Data: data}
		if ci.InterfaceIndex >= 0 {
			p, seen := ports[ci.InterfaceIndex]
			if !seen {
				if intf, err := rd.Interface(ci.InterfaceIndex); err == nil && intf.LinkType == layers.LinkTypeEthernet && t != nil {
					if ps, err := ResolveTargets(t, []string{intf.Name}); err == nil && len(ps) == 1 {
						p = &ps[0]
					}
				}
				if p == nil {
					p = &Port{} // unknown: filters on ports match nothing
				}
				ports[ci.InterfaceIndex] = p
			}
			f.Port = p
		}
		if f.Port == nil {
			f.Port = &Port{}
		}
		f.decode()
		out = append(out, f)
	}
}
