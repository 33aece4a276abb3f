package bpf

import (
	"net"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// A small lab of network namespaces for the tests that attach programs to
// real veths. It locks the test goroutine to its thread; all its methods
// must run on that goroutine (no t.Run inside). If switching back to the
// original namespace fails the thread stays locked and dies with the
// goroutine instead of serving others from the wrong namespace.
type lab struct {
	t    *testing.T
	orig netns.NsHandle
	nss  []netns.NsHandle
}

func newLab(t *testing.T) *lab {
	requireRoot(t)
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatalf("current netns: %v", err)
	}
	l := &lab{t: t, orig: orig}
	t.Cleanup(func() {
		for _, ns := range l.nss {
			ns.Close() // the namespace goes away with its last reference
		}
		if netns.Set(orig) == nil {
			runtime.UnlockOSThread()
		}
		orig.Close()
	})
	return l
}

// newNS creates an anonymous namespace (with lo up) and returns to the
// original one.
func (l *lab) newNS() netns.NsHandle {
	l.t.Helper()
	ns, err := netns.New()
	if err != nil {
		l.t.Fatalf("new netns: %v", err)
	}
	l.nss = append(l.nss, ns)
	if lo, err := netlink.LinkByName("lo"); err == nil {
		netlink.LinkSetUp(lo)
	}
	// No IPv6 on the namespace's links: its autoconfiguration sends
	// frames (DAD, router and MLD solicitations) that would show up in
	// the qdisc and packet counts the live tests take.
	for _, c := range []string{"all", "default"} {
		if err := os.WriteFile("/proc/sys/net/ipv6/conf/"+c+"/disable_ipv6", []byte("1"), 0o644); err != nil {
			l.t.Logf("disable IPv6 (%s): %v", c, err)
		}
	}
	l.back()
	return ns
}

func (l *lab) back() {
	if err := netns.Set(l.orig); err != nil {
		l.t.Fatalf("back to the original netns: %v", err) // thread stays locked
	}
}

// in runs fn with the thread inside ns.
func (l *lab) in(ns netns.NsHandle, fn func()) {
	l.t.Helper()
	if err := netns.Set(ns); err != nil {
		l.t.Fatalf("enter netns: %v", err)
	}
	defer l.back()
	fn()
}

// veth creates name (in a) <-> peer (in b) with MACs and MTU, both up,
// and returns their ifindexes.
func (l *lab) veth(a netns.NsHandle, name string, mac [6]byte, b netns.NsHandle, peer string,
	peerMAC [6]byte, mtu int) (int, int) {
	l.t.Helper()
	v := &netlink.Veth{
		LinkAttrs: netlink.LinkAttrs{Name: name, MTU: mtu, HardwareAddr: net.HardwareAddr(mac[:]),
			Namespace: netlink.NsFd(int(a))},
		PeerName: peer, PeerHardwareAddr: net.HardwareAddr(peerMAC[:]), PeerNamespace: netlink.NsFd(int(b)),
	}
	if err := netlink.LinkAdd(v); err != nil {
		l.t.Fatalf("veth %s~%s: %v", name, peer, err)
	}
	return l.up(a, name), l.up(b, peer)
}

func (l *lab) up(ns netns.NsHandle, name string) int {
	l.t.Helper()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		l.t.Fatal(err)
	}
	defer h.Close()
	link, err := h.LinkByName(name)
	if err != nil {
		l.t.Fatalf("%s: %v", name, err)
	}
	if err := h.LinkSetUp(link); err != nil {
		l.t.Fatalf("%s up: %v", name, err)
	}
	return link.Attrs().Index
}

// waitUp waits until the interfaces report carrier (a fresh veth may be
// DOWN for a moment).
func (l *lab) waitUp(ns netns.NsHandle, names ...string) {
	l.t.Helper()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		l.t.Fatal(err)
	}
	defer h.Close()
	deadline := time.Now().Add(3 * time.Second)
	for _, n := range names {
		for {
			link, err := h.LinkByName(n)
			if err == nil && link.Attrs().OperState == netlink.OperUp {
				break
			}
			if time.Now().After(deadline) {
				l.t.Fatalf("%s did not come up", n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// packetSocket opens an AF_PACKET socket in ns bound to ifindex.
func (l *lab) packetSocket(ns netns.NsHandle, ifindex int) int {
	l.t.Helper()
	var fd int
	l.in(ns, func() {
		var err error
		fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, int(htons(unix.ETH_P_ALL)))
		if err != nil {
			l.t.Fatalf("packet socket: %v", err)
		}
	})
	l.t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifindex}); err != nil {
		l.t.Fatalf("bind: %v", err)
	}
	tv := unix.Timeval{Usec: 300_000}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		l.t.Fatal(err)
	}
	return fd
}

func send(t *testing.T, fd, ifindex int, b []byte) {
	t.Helper()
	if err := unix.Sendto(fd, b, 0, &unix.SockaddrLinklayer{Ifindex: ifindex, Protocol: htons(unix.ETH_P_IP)}); err != nil {
		t.Fatalf("send: %v", err)
	}
}

// recvIPv4 returns the next IPv4 frame from fd, or nil after the timeout.
func recvIPv4(fd int) []byte {
	buf := make([]byte, 16384)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return nil
		}
		if n >= 14 && buf[12] == 0x08 && buf[13] == 0x00 {
			return append([]byte(nil), buf[:n]...)
		}
	}
}

func linkAttachXDP(p *ebpf.Program, ifindex int) (link.Link, error) {
	return link.AttachXDP(link.XDPOptions{Program: p, Interface: ifindex, Flags: link.XDPDriverMode})
}
