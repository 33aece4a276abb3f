package bpf

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// One packet through one program, checked against a fixture row.
type fwdCase struct {
	name    string
	tc      bool           // run tc_shaped (shaped mode) instead of xdp_ingress
	setup   func(*fixture) // after the fixture is built
	ingress int
	in      []byte
	verdict uint32
	out     []byte // expected output frame; nil: not checked
	deltas  map[int]PortCounters
}

func rx(in []byte) PortCounters { return PortCounters{RxPackets: 1, RxBytes: uint64(len(in))} }
func tx(in []byte) PortCounters { return PortCounters{TxPackets: 1, TxBytes: uint64(len(in))} }

func with(c PortCounters, f func(*PortCounters)) PortCounters { f(&c); return c }

func mutate(b []byte, f func([]byte)) []byte {
	b = append([]byte(nil), b...)
	f(b)
	return b
}

// fixIPChecksum recomputes the IPv4 header checksum in place.
func fixIPChecksum(b []byte) {
	ip := ipHeader(b)
	ip[10], ip[11] = 0, 0
	binary.BigEndian.PutUint16(ip[10:12], inetChecksum(ip, 0))
}

func TestForwardingFixtures(t *testing.T) {
	requireRoot(t)
	down := frame{dst: hostAddr(1), payload: 100}.bytes()
	up := frame{src: hostAddr(0), dst: netip.MustParseAddr("10.1.5.5"), payload: 100}.bytes()
	upPort := uplinkPort(ecmpUplink(up, 7, 0xf))
	upTCP := frame{src: hostAddr(0), dst: netip.MustParseAddr("10.2.0.9"), proto: protoTCP, payload: 10}.bytes()
	upTCPPort := uplinkPort(ecmpUplink(upTCP, 7, 0xf))
	frag := frame{src: hostAddr(0), dst: netip.MustParseAddr("10.1.5.5"), frag: 0x0010, payload: 40}.bytes()
	fragPort := uplinkPort(ecmpUplink(frag, 7, 0xf))
	ttl2 := frame{dst: hostAddr(1), ttl: 2}.bytes()
	ttl1 := frame{dst: hostAddr(1), ttl: 1}.bytes()
	ttl0 := frame{dst: hostAddr(1), ttl: 0xff}.bytes()
	ttl0 = mutate(ttl0, func(b []byte) { b[22] = 0; fixIPChecksum(b) })
	opts := frame{dst: hostAddr(2), ipOpts: []byte{1, 1, 1, 0}, payload: 20}.bytes()
	mf := frame{dst: hostAddr(2), frag: 0x2000, payload: 64}.bytes()
	padded := append(frame{dst: hostAddr(3)}.bytes(), make([]byte, 18)...) // to 60 bytes
	arp := frame{etherType: ethARP}.bytes()
	ipv6 := frame{etherType: ethIPv6}.bytes()
	toSelf := frame{dst: swAddr}.bytes()
	toLocalRoute := frame{dst: netip.MustParseAddr("10.9.9.9")}.bytes()
	noRoute := frame{dst: netip.MustParseAddr("192.168.1.1")}.bytes()
	truncatedIP := down[:14+19]
	beyondFrame := down[:len(down)-10]
	ihl4 := mutate(down, func(b []byte) { b[14] = 0x44; fixIPChecksum(b) })
	ver6 := mutate(down, func(b []byte) { b[14] = 0x65 })
	udpBeyondTot := mutate(down, func(b []byte) {
		binary.BigEndian.PutUint16(b[16:18], 24) // IP total length 24: 4 bytes of UDP
		fixIPChecksum(b)
	})

	shaped := func(f *fixture) {
		c := baseConfig()
		c.Mode = ModeShaped
		f.must(f.s.SetConfig(c))
	}

	cases := []fwdCase{
		{name: "down route", ingress: 4, in: down, verdict: xdpRedirect, out: forwarded(down, 1),
			deltas: map[int]PortCounters{4: rx(down), 1: tx(down)}},
		{name: "up route ecmp", ingress: 0, in: up, verdict: xdpRedirect, out: forwarded(up, upPort),
			deltas: map[int]PortCounters{0: rx(up), upPort: tx(up)}},
		{name: "up route tcp", ingress: 1, in: upTCP, verdict: xdpRedirect, out: forwarded(upTCP, upTCPPort),
			deltas: map[int]PortCounters{1: rx(upTCP), upTCPPort: tx(upTCP)}},
		{name: "non-first fragment hashes without ports", ingress: 0, in: frag, verdict: xdpRedirect,
			out: forwarded(frag, fragPort), deltas: map[int]PortCounters{0: rx(frag), fragPort: tx(frag)}},
		{name: "ttl 2 leaves with ttl 1", ingress: 4, in: ttl2, verdict: xdpRedirect, out: forwarded(ttl2, 1),
			deltas: map[int]PortCounters{4: rx(ttl2), 1: tx(ttl2)}},
		{name: "ttl 1 dropped", ingress: 4, in: ttl1, verdict: xdpDrop,
			deltas: map[int]PortCounters{4: with(rx(ttl1), func(c *PortCounters) { c.DropTTL = 1 })}},
		{name: "ttl 0 dropped", ingress: 4, in: ttl0, verdict: xdpDrop,
			deltas: map[int]PortCounters{4: with(rx(ttl0), func(c *PortCounters) { c.DropTTL = 1 })}},
		{name: "ip options forwarded", ingress: 5, in: opts, verdict: xdpRedirect, out: forwarded(opts, 2),
			deltas: map[int]PortCounters{5: rx(opts), 2: tx(opts)}},
		{name: "more-fragments forwarded", ingress: 5, in: mf, verdict: xdpRedirect, out: forwarded(mf, 2),
			deltas: map[int]PortCounters{5: rx(mf), 2: tx(mf)}},
		{name: "ethernet padding kept", ingress: 6, in: padded, verdict: xdpRedirect, out: forwarded(padded, 3),
			deltas: map[int]PortCounters{6: rx(padded), 3: tx(padded)}},
		{name: "arp dropped", ingress: 0, in: arp, verdict: xdpDrop,
			deltas: map[int]PortCounters{0: with(rx(arp), func(c *PortCounters) { c.DropNonIPv4 = 1 })}},
		{name: "ipv6 dropped", ingress: 0, in: ipv6, verdict: xdpDrop,
			deltas: map[int]PortCounters{0: with(rx(ipv6), func(c *PortCounters) { c.DropNonIPv4 = 1 })}},
		{name: "ethernet header only", ingress: 0, in: down[:14], verdict: xdpDrop,
			deltas: map[int]PortCounters{0: with(rx(down[:14]), func(c *PortCounters) { c.DropMalformed = 1 })}},
		{name: "ipv4 header truncated", ingress: 0, in: truncatedIP, verdict: xdpDrop,
			deltas: map[int]PortCounters{0: with(rx(truncatedIP), func(c *PortCounters) { c.DropMalformed = 1 })}},
		{name: "total length beyond frame", ingress: 0, in: beyondFrame, verdict: xdpDrop,
			deltas: map[int]PortCounters{0: with(rx(beyondFrame), func(c *PortCounters) { c.DropMalformed = 1 })}},
		{name: "ihl below 5", ingress: 0, in: ihl4, verdict: xdpDrop,
			deltas: map[int]PortCounters{0: with(rx(ihl4), func(c *PortCounters) { c.DropMalformed = 1 })}},
		{name: "version 6 under the ipv4 ethertype", ingress: 0, in: ver6, verdict: xdpDrop,
			deltas: map[int]PortCounters{0: with(rx(ver6), func(c *PortCounters) { c.DropMalformed = 1 })}},
		{name: "udp header beyond total length", ingress: 0, in: udpBeyondTot, verdict: xdpDrop,
			deltas: map[int]PortCounters{0: with(rx(udpBeyondTot), func(c *PortCounters) { c.DropMalformed = 1 })}},
		{name: "to the identity address passes", ingress: 0, in: toSelf, verdict: xdpPass, out: toSelf,
			deltas: map[int]PortCounters{0: with(rx(toSelf), func(c *PortCounters) { c.ToLocal = 1 })}},
		{name: "local route passes", ingress: 0, in: toLocalRoute, verdict: xdpPass, out: toLocalRoute,
			deltas: map[int]PortCounters{0: with(rx(toLocalRoute), func(c *PortCounters) { c.ToLocal = 1 })}},
		{name: "no route", ingress: 0, in: noRoute, verdict: xdpDrop,
			deltas: map[int]PortCounters{0: with(rx(noRoute), func(c *PortCounters) { c.DropNoRoute = 1 })}},
		{name: "no valid uplink", ingress: 0, in: up, verdict: xdpDrop,
			setup:  func(f *fixture) { f.must(f.s.SetGroupValid(1, 0)) },
			deltas: map[int]PortCounters{0: with(rx(up), func(c *PortCounters) { c.DropNoRoute = 1 })}},
		{name: "valid bit beyond the uplink count", ingress: 0, in: up, verdict: xdpDrop,
			setup:  func(f *fixture) { f.must(f.s.SetGroupValid(1, 1<<10)) },
			deltas: map[int]PortCounters{0: with(rx(up), func(c *PortCounters) { c.DropNoRoute = 1 })}},
		{name: "corruption probability 1", ingress: 4, in: down, verdict: xdpDrop,
			setup:  func(f *fixture) { f.must(f.s.SetCorruption(4, 1)) },
			deltas: map[int]PortCounters{4: with(rx(down), func(c *PortCounters) { c.DropCorrupt = 1 })}},
		{name: "corruption probability 0", ingress: 4, in: down, verdict: xdpRedirect, out: forwarded(down, 1),
			setup:  func(f *fixture) { f.must(f.s.SetCorruption(4, 0)) },
			deltas: map[int]PortCounters{4: rx(down), 1: tx(down)}},
		{name: "ingress link down", ingress: 4, in: down, verdict: xdpDrop,
			setup:  func(f *fixture) { f.must(f.s.SetPortUp(4, false)) },
			deltas: map[int]PortCounters{4: with(rx(down), func(c *PortCounters) { c.DropLinkDown = 1 })}},
		{name: "egress link down", ingress: 4, in: down, verdict: xdpDrop,
			setup:  func(f *fixture) { f.must(f.s.SetPortUp(1, false)) },
			deltas: map[int]PortCounters{4: rx(down), 1: {DropLinkDown: 1}}},
		{name: "not a switch port", ingress: 0, in: down, verdict: xdpPass, out: down,
			setup: func(f *fixture) { f.must(f.s.maps.If2port.Delete(uint32(loIf))) }},
		{name: "shaped mode: xdp passes", ingress: 4, in: down, verdict: xdpPass, out: down, setup: shaped,
			deltas: map[int]PortCounters{4: rx(down)}},
		{name: "shaped mode: xdp still drops ttl 1", ingress: 4, in: ttl1, verdict: xdpDrop, setup: shaped,
			deltas: map[int]PortCounters{4: with(rx(ttl1), func(c *PortCounters) { c.DropTTL = 1 })}},

		{name: "tc: down route", tc: true, setup: shaped, ingress: 4, in: down, verdict: tcRedirect,
			out: forwarded(down, 1), deltas: map[int]PortCounters{1: tx(down)}},
		{name: "tc: up route ecmp", tc: true, setup: shaped, ingress: 0, in: up, verdict: tcRedirect,
			out: forwarded(up, upPort), deltas: map[int]PortCounters{upPort: tx(up)}},
		{name: "tc: identity address passes (counted by xdp)", tc: true, setup: shaped, ingress: 0,
			in: toSelf, verdict: tcOK, out: toSelf},
		{name: "tc: local route passes", tc: true, setup: shaped, ingress: 0, in: toLocalRoute, verdict: tcOK,
			out: toLocalRoute, deltas: map[int]PortCounters{0: {ToLocal: 1}}},
		{name: "tc: line-rate mode passes", tc: true, ingress: 4, in: down, verdict: tcOK, out: down},
		{name: "tc: no route", tc: true, setup: shaped, ingress: 0, in: noRoute, verdict: tcShot,
			deltas: map[int]PortCounters{0: {DropNoRoute: 1}}},
		{name: "tc: ttl 1", tc: true, setup: shaped, ingress: 4, in: ttl1, verdict: tcShot,
			deltas: map[int]PortCounters{4: {DropTTL: 1}}},
		{name: "tc: non-ipv4", tc: true, setup: shaped, ingress: 4, in: arp, verdict: tcShot,
			deltas: map[int]PortCounters{4: {DropNonIPv4: 1}}},
		{name: "tc: malformed", tc: true, setup: shaped, ingress: 4, in: ihl4, verdict: tcShot,
			deltas: map[int]PortCounters{4: {DropMalformed: 1}}},
		{name: "tc: egress link down", tc: true, ingress: 4, in: down, verdict: tcShot,
			setup:  func(f *fixture) { shaped(f); f.must(f.s.SetPortUp(1, false)) },
			deltas: map[int]PortCounters{1: {DropLinkDown: 1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, baseConfig())
			f.ingress(c.ingress)
			if c.setup != nil {
				c.setup(f)
			}
			before := f.counters()
			var verdict uint32
			var out []byte
			if c.tc {
				verdict, out, _ = f.runTC(c.in)
			} else {
				verdict, out = f.runXDP(c.in)
			}
			if verdict != c.verdict {
				t.Errorf("verdict = %d, want %d", verdict, c.verdict)
			}
			if c.out != nil {
				if d := cmp.Diff(c.out, out); d != "" {
					t.Errorf("output frame (-want +got):\n%s", d)
				}
				if binary.BigEndian.Uint16(c.out[12:14]) == ethIPv4 && !ipChecksumOK(out) {
					t.Errorf("output IPv4 checksum is wrong")
				}
			}
			want := c.deltas
			if want == nil {
				want = map[int]PortCounters{}
			}
			if d := cmp.Diff(want, delta(before, f.counters())); d != "" {
				t.Errorf("counter deltas (-want +got):\n%s", d)
			}
		})
	}
}

func TestCorruptionRate(t *testing.T) {
	f := newFixture(t, baseConfig())
	f.ingress(4)
	f.must(f.s.SetCorruption(4, 0.25))
	in := frame{dst: hostAddr(1)}.bytes()
	const n = 4000
	for range n {
		f.runXDP(in)
	}
	c, err := f.s.PortCounters(4)
	if err != nil {
		t.Fatal(err)
	}
	// Binomial(4000, 0.25): mean 1000, sd 27; allow 5 sd.
	if c.DropCorrupt < 1000-137 || c.DropCorrupt > 1000+137 || c.RxPackets != n {
		t.Errorf("p=0.25 over %d frames: %d corrupted (rx %d), want about 1000", n, c.DropCorrupt, c.RxPackets)
	}
}
