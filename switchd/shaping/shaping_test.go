package shaping_test

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/testlab"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/orchestrator/fabric"
	"github.com/ftlab/ftlab/switchd/shaping"
)

// TestPacketsWait shapes a host's port to 4 Mbit/s, sends a burst much
// faster than that, and checks that the burst queues in the qdisc and
// arrives no sooner than the link rate allows, with no drop in the qdisc.
func TestPacketsWait(t *testing.T) {
	testlab.RequireRoot(t)
	topo, err := topology.NewLeafSpine(2, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	prefix := testlab.Prefix(t)
	name := testlab.Namer(prefix)
	if _, err := fabric.Build(context.Background(), topo, fabric.Options{Namespace: name}); err != nil {
		t.Fatal(err)
	}
	host := topo.Hosts()[0]
	port := topo.Links[host.Ports[0].Link]
	leaf, _ := topo.Node(port.B.Node)
	// The burst takes 208 ms to drain at 4 Mbit/s: room for the test
	// thread to be descheduled between the last send and reading the
	// qdisc's backlog, and still find packets waiting.
	const rate, n, size = 4_000_000, 100, 1000
	l := shaping.Link{RateBps: rate, BufferBytes: 64 << 10, MTU: port.MTU}

	var rx net.PacketConn
	if err := nsutil.DoNamed(name(leaf.Name), func() error {
		var err error
		rx, err = net.ListenPacket("udp4", netip.AddrPortFrom(leaf.Addr, 9).String())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	// The whole burst may be waiting in the socket before the test reads
	// it (on a loaded machine the reader runs late): at the default
	// receive buffer (rmem_default, 208 KiB) 100 datagrams of ~2 KiB of
	// kernel memory each overflow it, and the kernel drops the last ones
	// (RcvbufErrors in /proc/net/snmp; seen as "received 92 of 100").
	// Room for the burst four times over; FORCE passes rmem_max (root).
	if err := setRcvBuf(rx, 4*n*4096); err != nil {
		t.Fatal(err)
	}

	var stats shaping.Stats
	var sent time.Time
	err = nsutil.DoNamed(name(host.Name), func() error {
		h, err := netlink.NewHandle()
		if err != nil {
			return err
		}
		defer h.Close()
		link, err := h.LinkByName(port.A.Ifname)
		if err != nil {
			return err
		}
		if err := shaping.Install(h, link, l); err != nil {
			return err
		}
		if err := shaping.Install(h, link, l); err != nil { // idempotent
			return err
		}
		tx, err := net.Dial("udp4", netip.AddrPortFrom(leaf.Addr, 9).String())
		if err != nil {
			return err
		}
		defer tx.Close()
		sent = time.Now()
		buf := make([]byte, size)
		for i := 0; i < n; i++ {
			if _, err := tx.Write(buf); err != nil {
				return err
			}
		}
		stats, err = shaping.Read(h, link)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !stats.Installed || stats.BacklogPkts == 0 {
		t.Errorf("right after the burst: %+v, want packets waiting in the qdisc", stats)
	}
	buf := make([]byte, 2048)
	_ = rx.SetReadDeadline(time.Now().Add(10 * time.Second))
	for i := 0; i < n; i++ {
		if _, _, err := rx.ReadFrom(buf); err != nil {
			t.Fatalf("received %d of %d: %v", i, n, err)
		}
	}
	elapsed := time.Since(sent)
	// Each frame is the payload plus UDP, IPv4 and Ethernet headers.
	ideal := time.Duration(float64(n*(size+8+20+14)*8) / rate * float64(time.Second))
	if elapsed < ideal*8/10 {
		t.Errorf("burst of %d bytes arrived in %v; a %d bit/s link needs at least %v", n*size, elapsed, rate, ideal)
	}
	t.Logf("burst arrived in %v (ideal %v), qdisc after burst: %+v", elapsed, ideal, stats)
	if stats.Drops != 0 {
		t.Errorf("qdisc dropped %d packets", stats.Drops)
	}
}

// TestSetRate degrades an installed link in place and reads the classes
// back from the kernel.
func TestSetRate(t *testing.T) {
	testlab.RequireRoot(t)
	topo, err := topology.NewLeafSpine(2, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	name := testlab.Namer(testlab.Prefix(t))
	if _, err := fabric.Build(context.Background(), topo, fabric.Options{Namespace: name}); err != nil {
		t.Fatal(err)
	}
	host := topo.Hosts()[0]
	port := topo.Links[host.Ports[0].Link]
	err = nsutil.DoNamed(name(host.Name), func() error {
		h, err := netlink.NewHandle()
		if err != nil {
			return err
		}
		defer h.Close()
		link, err := h.LinkByName(port.A.Ifname)
		if err != nil {
			return err
		}
		l := shaping.Link{RateBps: 100_000_000, BufferBytes: 64 << 10, MTU: port.MTU}
		if err := shaping.Install(h, link, l); err != nil {
			return err
		}
		l.RateBps = 25_000_000
		if err := shaping.SetRate(h, link, l); err != nil {
			return err
		}
		classes, err := h.ClassList(link, netlink.HANDLE_NONE)
		if err != nil {
			return err
		}
		if len(classes) != 3 {
			t.Errorf("%d classes, want 3", len(classes))
		}
		for _, c := range classes {
			if htb, ok := c.(*netlink.HtbClass); ok && htb.Rate != l.RateBps/8 {
				t.Errorf("class %x: rate %d B/s, want %d", c.Attrs().Handle, htb.Rate, l.RateBps/8)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// setRcvBuf sets c's receive buffer to bytes, past net.core.rmem_max.
func setRcvBuf(c net.PacketConn, bytes int) error {
	raw, err := c.(*net.UDPConn).SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, bytes)
	}); err != nil {
		return err
	}
	return serr
}
