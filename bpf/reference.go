package bpf

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// The reference switch: what the program tests and MeasureProgramCosts
// run the programs on. Ports 0..3 are downlinks to hosts 10.0.0.2..5,
// ports 4..7 are uplinks 0..3. 10.1/16 goes up via group 1, 10.2/16 via
// group 2 (both all-valid), 10.9.9.9 is a LOCAL route, the identity
// address is 10.0.0.1. Every port is ifindex 1 (lo): BPF_PROG_TEST_RUN
// runs with ingress ifindex 1, and setIngress points if2port[1] at the
// port a run arrives on.
const (
	nDown  = 4
	nUp    = 4
	nPorts = nDown + nUp
	loIf   = 1

	// Verdicts of BPF_PROG_TEST_RUN.
	xdpAborted  = 0
	xdpDrop     = 1
	xdpPass     = 2
	xdpRedirect = 4

	tcOK       = 0
	tcShot     = 2
	tcRedirect = 7
)

var swAddr = netip.MustParseAddr("10.0.0.1")

func portMAC(p int) [6]byte { return [6]byte{0x02, 0x0a, 0, 0, 0, byte(p)} }
func peerMAC(p int) [6]byte { return [6]byte{0x02, 0x0b, 0, 0, 0, byte(p)} }
func hostAddr(p int) netip.Addr {
	return netip.AddrFrom4([4]byte{10, 0, 0, byte(2 + p)})
}
func uplinkPort(u int) int { return nDown + u }

func baseConfig() Config {
	return Config{Mode: ModeLineRate, Policy: PolicyECMP, Seed: 7, Addr: swAddr, AckThreshold: 100}
}

func basePort(p int) PortConfig {
	m, pm := portMAC(p), peerMAC(p)
	pc := PortConfig{Ifindex: loIf, MAC: net.HardwareAddr(m[:]), PeerMAC: net.HardwareAddr(pm[:]), Up: true, Uplink: -1}
	if p >= nDown {
		pc.Uplink = p - nDown
	}
	return pc
}

// loadReference loads every program into a reference switch configured
// with cfg. The caller closes it.
func loadReference(cfg Config) (*Switch, error) {
	s, err := Load(Options{MaxGroups: 16, MaxPointers: 256, Programs: ProgramsAll})
	if err != nil {
		return nil, err
	}
	if err := s.configureReference(cfg); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// configureReference makes s the reference switch.
func (s *Switch) configureReference(cfg Config) error {
	steps := []func() error{func() error { return s.SetConfig(cfg) }}
	for p := range nPorts {
		steps = append(steps, func() error { return s.SetPort(p, basePort(p)) })
	}
	for p := range nDown {
		steps = append(steps, func() error { return s.AddRoute(netip.PrefixFrom(hostAddr(p), 32), Down(p)) })
	}
	steps = append(steps,
		func() error { return s.AddRoute(netip.MustParsePrefix("10.1.0.0/16"), Up(1)) },
		func() error { return s.AddRoute(netip.MustParsePrefix("10.2.0.0/16"), Up(2)) },
		func() error { return s.AddRoute(netip.MustParsePrefix("10.9.9.9/32"), Local()) },
		func() error { return s.SetGroupValid(1, 0xf) },
		func() error { return s.SetGroupValid(2, 0xf) },
		func() error { return s.setIngress(0) },
	)
	for _, step := range steps {
		if err := step(); err != nil {
			return fmt.Errorf("bpf: reference switch: %w", err)
		}
	}
	return nil
}

// setIngress makes BPF_PROG_TEST_RUN runs arrive on port p.
func (s *Switch) setIngress(p int) error { return s.maps.If2port.Put(uint32(loIf), s.pp(p)) }

// udpFrame is an Ethernet/IPv4/UDP frame from host 0 to dst with TTL 255
// (so repeated runs over the same buffer keep forwarding) and payload
// bytes of payload.
func udpFrame(dst netip.Addr, payload int) ([]byte, error) {
	src, in := portMAC(0), peerMAC(0)
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr(in[:]), DstMAC: net.HardwareAddr(src[:]), EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 255, Protocol: layers.IPProtocolUDP,
		SrcIP: hostAddr(0).AsSlice(), DstIP: dst.AsSlice()}
	udp := &layers.UDP{SrcPort: 1000, DstPort: 2000}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		return nil, err
	}
	buf := gopacket.NewSerializeBuffer()
	err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
		eth, ip, udp, gopacket.Payload(make([]byte, payload)))
	return buf.Bytes(), err
}
