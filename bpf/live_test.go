package bpf

import (
	"net/netip"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/google/go-cmp/cmp"
	"github.com/vishvananda/netlink"
)

// TestLiveForwarding runs a real switch namespace with two ports between
// two host namespaces (veth MTU 4200) and sends frames through it in both
// modes: line-rate must bypass the egress qdisc, shaped must go through it.
func TestLiveForwarding(t *testing.T) {
	l := newLab(t)
	sw, h0, h1 := l.newNS(), l.newNS(), l.newNS()
	const mtu = 4200
	p0, e0 := l.veth(sw, "p0", portMAC(0), h0, "e0", peerMAC(0), mtu)
	p1, e1 := l.veth(sw, "p1", portMAC(1), h1, "e1", peerMAC(1), mtu)
	l.waitUp(sw, "p0", "p1")
	l.waitUp(h0, "e0")
	l.waitUp(h1, "e1")

	s, err := Load(Options{Programs: ProgramsAll}) // xdp_pass for the host veth
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	var qdisc netlink.Qdisc
	l.in(sw, func() {
		must(t, s.SetConfig(Config{Mode: ModeLineRate, Addr: netip.MustParseAddr("10.0.0.1")}))
		for p, ifx := range []int{p0, p1} {
			pc := basePort(p)
			pc.Ifindex, pc.Uplink = ifx, -1
			must(t, s.SetPort(p, pc))
			must(t, s.AttachPort(ifx))
		}
		must(t, s.AddRoute(netip.MustParsePrefix("10.0.0.2/32"), Down(0)))
		must(t, s.AddRoute(netip.MustParsePrefix("10.0.1.2/32"), Down(1)))
		// A pfifo on p1 whose counters tell whether frames went through it.
		qdisc = &netlink.GenericQdisc{QdiscType: "pfifo", QdiscAttrs: netlink.QdiscAttrs{
			LinkIndex: p1, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT}}
		must(t, netlink.QdiscAdd(qdisc))
	})
	// NAPI on the receiving host veth, which XDP_REDIRECT needs.
	l.in(h1, func() { must(t, s.AttachXDPPass(e1)) })
	rxFD := l.packetSocket(h1, e1)
	txFD := l.packetSocket(h0, e0)

	qdiscPackets := func() uint64 {
		var n uint64
		l.in(sw, func() {
			link, err := netlink.LinkByIndex(p1)
			must(t, err)
			qs, err := netlink.QdiscList(link)
			must(t, err)
			for _, q := range qs {
				if q.Type() == "pfifo" && q.Attrs().Statistics != nil {
					n = uint64(q.Attrs().Statistics.Basic.Packets)
				}
			}
		})
		return n
	}

	for _, mode := range []Mode{ModeLineRate, ModeShaped} {
		c := Config{Mode: mode, Addr: netip.MustParseAddr("10.0.0.1")}
		must(t, s.SetConfig(c))
		for _, payload := range []int{100, 4000} {
			in := frame{srcMAC: peerMAC(0), dstMAC: portMAC(0), src: netip.MustParseAddr("10.0.0.2"),
				dst: netip.MustParseAddr("10.0.1.2"), payload: payload}.bytes()
			q0 := qdiscPackets()
			send(t, txFD, e0, in)
			got := recvIPv4(rxFD)
			if got == nil {
				t.Errorf("%s, %d-byte frame: nothing arrived", mode, len(in))
				continue
			}
			if d := cmp.Diff(forwarded(in, 1), got); d != "" {
				t.Errorf("%s, %d-byte frame (-want +got):\n%s", mode, len(in), d)
			}
			through := qdiscPackets() - q0
			if mode == ModeLineRate && through != 0 {
				t.Errorf("line-rate: %d frames went through the egress qdisc, want 0 (XDP bypasses it)", through)
			}
			if mode == ModeShaped && through != 1 {
				t.Errorf("shaped: %d frames went through the egress qdisc, want 1", through)
			}
		}
	}
	c0, _ := s.PortCounters(0)
	c1, _ := s.PortCounters(1)
	if c0.RxPackets < 4 || c1.TxPackets != 4 {
		t.Errorf("counters: port 0 rx %d (want >= 4), port 1 tx %d (want 4)", c0.RxPackets, c1.TxPackets)
	}
}

// TestXDPAttachMTU4200 records what native XDP on a veth needs at MTU
// 4200: a program without BPF_F_XDP_HAS_FRAGS is refused, ours (xdp.frags)
// attach.
func TestXDPAttachMTU4200(t *testing.T) {
	l := newLab(t)
	ns := l.newNS()
	s, err := Load(Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	plain, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type:         ebpf.XDP,
		License:      "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, xdpPass), asm.Return()},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()

	for _, mtu := range []int{1500, 3400, 3600, 4200, 9216} {
		a, _ := l.veth(ns, "a", portMAC(0), ns, "b", peerMAC(0), mtu)
		l.in(ns, func() {
			lk, err := linkAttachXDP(plain, a)
			plainOK := err == nil
			if plainOK {
				lk.Close()
			}
			t.Logf("MTU %d: plain XDP attach: %v", mtu, errOrOK(err))
			if mtu <= 1500 && !plainOK {
				t.Errorf("MTU %d: plain XDP refused: %v", mtu, err)
			}
			if mtu >= 4200 && plainOK {
				t.Logf("MTU %d: plain XDP accepted (kernel no longer requires frags here)", mtu)
			}
			if err := s.AttachXDP(a); err != nil {
				t.Errorf("MTU %d: xdp.frags program refused: %v", mtu, err)
			}
			must(t, s.Detach(a))
			link, err := netlink.LinkByIndex(a)
			must(t, err)
			must(t, netlink.LinkDel(link))
		})
	}
}

func errOrOK(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
