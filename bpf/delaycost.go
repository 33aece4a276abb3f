package bpf

import (
	"encoding/binary"
	"net"
	"net/netip"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// What the delay hook (c/delay.h) costs (MeasureProgramCosts): an agents'
// packet going up through xdp_ingress, once arriving on a port whose link
// has no delay (the hook's one test: what every lab without delays pays)
// and once on one with a delay (stamping: two additions and the checksum).
var delayCostCases = []costCase{
	{"xdp_ingress line rate, up, ecmp, agents' packet, no link delay", ModeLineRate, PolicyECMP, xdpOf, 0, costUp, xdpRedirect},
	{"xdp_ingress line rate, up, ecmp, agents' packet, link delay", ModeLineRate, PolicyECMP, xdpOf, 0, costUp, xdpRedirect},
}

// delayCostPorts is the delay each of those cases gives every port.
var delayCostPorts = map[string]time.Duration{
	delayCostCases[0].name: 0,
	delayCostCases[1].name: time.Microsecond,
}

// costAgentPort is the agents' port of the delay cost cases.
const costAgentPort = 4791

// delaySetup gives the case's ports their delay and returns an agents'
// frame (version 2 header) to dst; ok is false for other cases.
func (c costCase) delaySetup(s *Switch) (frame []byte, ok bool, err error) {
	d, ok := delayCostPorts[c.name]
	if !ok {
		return nil, false, nil
	}
	cfg := s.Config()
	cfg.AgentPort = costAgentPort
	if err := s.SetConfig(cfg); err != nil {
		return nil, true, err
	}
	for p := range nPorts {
		pc := basePort(p)
		pc.Delay = d
		if err := s.SetPort(p, pc); err != nil {
			return nil, true, err
		}
	}
	frame, err = agentFrame(c.dst, 458)
	return frame, true, err
}

// agentFrame is udpFrame's packet sent to the agents' port with a DATA
// header of ftlab's version 2 in front of the payload.
func agentFrame(dst netip.Addr, payload int) ([]byte, error) {
	src, in := portMAC(0), peerMAC(0)
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr(in[:]), DstMAC: net.HardwareAddr(src[:]), EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 255, Protocol: layers.IPProtocolUDP,
		SrcIP: hostAddr(0).AsSlice(), DstIP: dst.AsSlice()}
	udp := &layers.UDP{SrcPort: 1000, DstPort: costAgentPort}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		return nil, err
	}
	body := make([]byte, payload)
	binary.BigEndian.PutUint16(body, 0x4654) // "FT", version 2, DATA
	body[2], body[3] = 2, 1
	buf := gopacket.NewSerializeBuffer()
	err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
		eth, ip, udp, gopacket.Payload(body))
	return buf.Bytes(), err
}
