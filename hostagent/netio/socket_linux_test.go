//go:build linux

package netio_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/netio"
	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/testlab"
)

// pair makes two namespaces joined by a veth pair, 10.99.0.1 and
// 10.99.0.2, and returns their names. Everything goes with the test.
func pair(t *testing.T) (a, b string) {
	t.Helper()
	testlab.RequireRoot(t)
	prefix := testlab.Prefix(t)
	a, b = prefix+"a", prefix+"b"
	ha, err := nsutil.Create(a, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ha.Close()
	hb, err := nsutil.Create(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hb.Close()
	nla, err := netlink.NewHandleAt(ha)
	if err != nil {
		t.Fatal(err)
	}
	defer nla.Close()
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "va", MTU: 1500}, PeerName: "vb", PeerNamespace: netlink.NsFd(hb)}
	if err := nla.LinkAdd(veth); err != nil {
		t.Fatal(err)
	}
	nlb, err := netlink.NewHandleAt(hb)
	if err != nil {
		t.Fatal(err)
	}
	defer nlb.Close()
	for _, s := range []struct {
		h    *netlink.Handle
		name string
		addr string
	}{{nla, "va", "10.99.0.1/24"}, {nlb, "vb", "10.99.0.2/24"}} {
		l, err := s.h.LinkByName(s.name)
		if err != nil {
			t.Fatal(err)
		}
		ad, _ := netlink.ParseAddr(s.addr)
		if err := s.h.AddrAdd(l, ad); err != nil {
			t.Fatal(err)
		}
		if err := s.h.LinkSetUp(l); err != nil {
			t.Fatal(err)
		}
		lo, err := s.h.LinkByName("lo")
		if err == nil {
			_ = s.h.LinkSetUp(lo)
		}
	}
	// Permanent neighbours, as the fabric has: with ARP left to resolve,
	// a burst sent at once overflows the unresolved queue and is lost.
	la, err := nla.LinkByName("va")
	if err != nil {
		t.Fatal(err)
	}
	lb, err := nlb.LinkByName("vb")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []struct {
		h        *netlink.Handle
		on, peer netlink.Link
		ip       string
	}{{nla, la, lb, "10.99.0.2"}, {nlb, lb, la, "10.99.0.1"}} {
		if err := n.h.NeighSet(&netlink.Neigh{LinkIndex: n.on.Attrs().Index, State: netlink.NUD_PERMANENT, Family: netlink.FAMILY_V4,
			IP: net.ParseIP(n.ip), HardwareAddr: n.peer.Attrs().HardwareAddr}); err != nil {
			t.Fatal(err)
		}
	}
	return a, b
}

func listen(t *testing.T, ns string, cfg netio.SocketConfig) *netio.SocketConn {
	t.Helper()
	var c *netio.SocketConn
	err := nsutil.DoNamed(ns, func() (err error) {
		c, err = netio.ListenSocket(cfg)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

type collect []netio.Datagram

func (c *collect) HandleDatagram(d netio.Datagram) {
	d.Payload = bytes.Clone(d.Payload)
	*c = append(*c, d)
}

// readN reads with ReadBatch until n datagrams arrived or ten seconds passed.
func readN(t *testing.T, c *netio.SocketConn, n int) collect {
	t.Helper()
	var got collect
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < n && time.Now().Before(deadline) {
		pfd := []unix.PollFd{{Fd: int32(c.Fd()), Events: unix.POLLIN}}
		_, _ = unix.Poll(pfd, 10)
		if _, err := c.ReadBatch(&got); err != nil {
			t.Fatal(err)
		}
	}
	return got
}

// header makes a payload that starts like a transport header with ev.
func header(ev uint16, size int) []byte {
	p := make([]byte, size)
	binary.BigEndian.PutUint16(p, 0x4654)
	p[2], p[3] = 1, 1
	binary.BigEndian.PutUint16(p[6:], ev)
	for i := 8; i < size; i++ {
		p[i] = byte(i * 7)
	}
	return p
}

// TestSocketConn sends datagrams between two namespaces from chosen EVs
// with every codepoint, and checks what arrives: source, EV (EV 0
// included), codepoint, payload; the kernel accepting them proves the
// software UDP checksum.
func TestSocketConn(t *testing.T) {
	nsA, nsB := pair(t)
	a := listen(t, nsA, netio.SocketConfig{Port: 4791})
	b := listen(t, nsB, netio.SocketConfig{Port: 4791, Addr: netip.MustParseAddr("10.99.0.2")})
	if got := a.LocalAddr(); got != netip.MustParseAddr("10.99.0.1") {
		t.Fatalf("discovered address %v", got)
	}
	if a.MaxPayload() != 1472 {
		t.Fatalf("MaxPayload %d", a.MaxPayload())
	}
	type tc struct {
		ev   uint16
		ecn  netio.ECN
		size int
	}
	var cases []tc
	for i, ev := range []uint16{0, 1, 0x8000, 0xffff, 12345, 4791} {
		for j, ecn := range []netio.ECN{netio.NotECT, netio.ECT1, netio.ECT0, netio.CE} {
			cases = append(cases, tc{ev, ecn, []int{8, 9, 100, 1471, 1472}[(i+j)%5]})
		}
	}
	for _, c := range cases {
		if err := a.Send(netio.Datagram{Peer: b.LocalAddr(), EV: c.ev, ECN: c.ecn, Payload: header(c.ev, c.size)}); err != nil {
			t.Fatal(err)
		}
	}
	got := readN(t, b, len(cases))
	if len(got) != len(cases) {
		t.Fatalf("received %d of %d; stats %+v", len(got), len(cases), b.Stats())
	}
	for i, c := range cases {
		d := got[i]
		if d.Peer != a.LocalAddr() || d.EV != c.ev || d.ECN != c.ecn || !bytes.Equal(d.Payload, header(c.ev, c.size)) {
			t.Errorf("case %d %+v: got peer %v ev %d ecn %v len %d", i, c, d.Peer, d.EV, d.ECN, len(d.Payload))
		}
	}
	st := b.Stats()
	if st.RxCE != 6 || st.RxByType[1] != uint64(len(cases)) || st.RxDropped != 0 {
		t.Errorf("receiver stats %+v", st)
	}
	if err := a.Send(netio.Datagram{Peer: b.LocalAddr(), Payload: make([]byte, 1473)}); err == nil {
		t.Error("oversized datagram accepted")
	}
	if err := a.Send(netio.Datagram{Peer: netip.MustParseAddr("::1"), Payload: []byte{1}}); err == nil {
		t.Error("IPv6 peer accepted")
	}
	// Source port on the wire: a plain UDP socket sees EV 0 as EVZeroPort.
	var plain *net.UDPConn
	if err := nsutil.DoNamed(nsB, func() (err error) {
		plain, err = net.ListenUDP("udp4", &net.UDPAddr{Port: 4792})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	c := listen(t, nsA, netio.SocketConfig{Port: 4792})
	for _, ev := range []uint16{0, 7} {
		if err := c.Send(netio.Datagram{Peer: b.LocalAddr(), EV: ev, Payload: []byte("x")}); err != nil {
			t.Fatal(err)
		}
		_ = plain.SetReadDeadline(time.Now().Add(10 * time.Second))
		buf := make([]byte, 16)
		_, from, err := plain.ReadFromUDPAddrPort(buf)
		if err != nil {
			t.Fatal(err)
		}
		if from.Port() != netio.EVPort(ev) {
			t.Errorf("EV %d arrived from port %d, want %d", ev, from.Port(), netio.EVPort(ev))
		}
	}
}

// TestSocketConnDeferredAndRun: deferred sends go out in batches at Flush;
// Run posts batches to a clock.Loop, where they are delivered.
func TestSocketConnDeferredAndRun(t *testing.T) {
	nsA, nsB := pair(t)
	a := listen(t, nsA, netio.SocketConfig{Port: 4791, Deferred: true, Batch: 16})
	b := listen(t, nsB, netio.SocketConfig{Port: 4791, Batch: 16})
	const n = 200
	for i := range n {
		if err := a.Send(netio.Datagram{Peer: b.LocalAddr(), EV: uint16(i), ECN: netio.ECT0, Payload: header(uint16(i), 1000)}); err != nil {
			t.Fatal(err)
		}
	}
	if a.Pending() != n%16 {
		t.Fatalf("pending %d", a.Pending())
	}
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	st := a.Stats()
	if st.TxDatagrams != n || st.TxCalls > n/16+2 || st.TxErrors != 0 {
		t.Fatalf("sender stats %+v", st)
	}

	loop := clock.NewLoop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan []int)
	var evs []int
	recv := netio.ReceiverFunc(func(d netio.Datagram) {
		if d.ECN != netio.ECT0 || len(d.Payload) != 1000 {
			panic(fmt.Sprintf("bad datagram %+v", d))
		}
		evs = append(evs, int(d.EV))
		if len(evs) == n {
			done <- evs
		}
	})
	ran := make(chan error, 2)
	go func() { ran <- loop.Run(ctx) }()
	go func() { ran <- b.Run(ctx, loop.Post, recv) }()
	defer func() {
		cancel()
		<-ran
		<-ran
	}()
	select {
	case got := <-done:
		for i, ev := range got {
			if ev != i {
				t.Fatalf("datagram %d has EV %d", i, ev)
			}
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("Run did not deliver %d datagrams", n)
	}
}

// TestSocketConnTimestamp: with Timestamp, every datagram carries the
// kernel's arrival time, after it was sent and before it was read;
// without, none.
func TestSocketConnTimestamp(t *testing.T) {
	nsA, nsB := pair(t)
	a := listen(t, nsA, netio.SocketConfig{Port: 4791})
	b := listen(t, nsB, netio.SocketConfig{Port: 4791, Addr: netip.MustParseAddr("10.99.0.2")})
	send := func() int64 {
		before := time.Now().UnixNano()
		if err := a.Send(netio.Datagram{Peer: b.LocalAddr(), EV: 7, Payload: header(7, 100)}); err != nil {
			t.Fatal(err)
		}
		return before
	}
	send()
	if got := readN(t, b, 1); len(got) != 1 || got[0].RxNs != 0 {
		t.Fatalf("without Timestamp: %d datagrams, stamp %d", len(got), got[0].RxNs)
	}
	if err := b.Timestamp(); err != nil {
		t.Fatal(err)
	}
	before := send()
	got := readN(t, b, 1)
	after := time.Now().UnixNano()
	if len(got) != 1 || got[0].RxNs < before || got[0].RxNs > after {
		t.Fatalf("stamp %d not within the send at %d and the read by %d", got[0].RxNs, before, after)
	}
}

// TestTimestampsOutliveTheirConn: after the last stamping conn closes, the
// next one's first datagram is still stamped when it arrived, not when it
// was read. The kernel switches arrival stamping off with the last socket
// that asks for it and back on later, from a work queue; a datagram that
// comes in between is stamped at the read (here 20 ms late), which a
// delay line takes for its arrival. HoldStamps keeps stamping on.
func TestTimestampsOutliveTheirConn(t *testing.T) {
	nsA, nsB := pair(t)
	a := listen(t, nsA, netio.SocketConfig{Port: 4791})
	first := listen(t, nsB, netio.SocketConfig{Port: 4791, Addr: netip.MustParseAddr("10.99.0.2")})
	if err := first.Timestamp(); err != nil {
		t.Fatal(err)
	}
	first.Close()
	// Long enough for the kernel's work queue to switch stamping off,
	// were nothing holding it on.
	time.Sleep(200 * time.Millisecond)
	b := listen(t, nsB, netio.SocketConfig{Port: 4791, Addr: netip.MustParseAddr("10.99.0.2")})
	if err := b.Timestamp(); err != nil {
		t.Fatal(err)
	}
	const readLate = 20 * time.Millisecond
	for i := range 3 {
		before := time.Now().UnixNano()
		if err := a.Send(netio.Datagram{Peer: b.LocalAddr(), EV: 7, Payload: header(7, 100)}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(readLate)
		got := readN(t, b, 1)
		if len(got) != 1 {
			t.Fatalf("datagram %d: %d arrived", i, len(got))
		}
		if late := time.Duration(got[0].RxNs - before); late >= readLate/2 {
			t.Fatalf("datagram %d stamped %v after it was sent, read %v after: stamped at the read, not on arrival", i, late, readLate)
		}
	}
}
