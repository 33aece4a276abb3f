package netio_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/ftlab/ftlab/bpf"
	"github.com/ftlab/ftlab/hostagent/netio"
	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/switchd/shaping"
)

// TestSocketMark: with Mark set, everything sent carries the mark through
// the host's egress qdisc, where the dequeue monitor counts it: this is
// how a lab measures its hosts' links.
func TestSocketMark(t *testing.T) {
	nsA, nsB := pair(t)
	const mark, n = 0x7e000201, 50
	if err := nsutil.DoNamed(nsA, func() error {
		h, err := netlink.NewHandle()
		if err != nil {
			return err
		}
		defer h.Close()
		va, err := h.LinkByName("va")
		if err != nil {
			return err
		}
		return shaping.Install(h, va, shaping.Link{RateBps: 50_000_000, BufferBytes: 1 << 20, MTU: 1500})
	}); err != nil {
		t.Fatal(err)
	}
	mon, err := bpf.StartDequeueMonitor(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mon.Close() })
	if err := mon.Watch(mark); err != nil {
		t.Fatal(err)
	}
	a := listen(t, nsA, netio.SocketConfig{Port: 4791, Mark: mark})
	b := listen(t, nsB, netio.SocketConfig{Port: 4791, Addr: netip.MustParseAddr("10.99.0.2")})
	for range n {
		if err := a.Send(netio.Datagram{Peer: b.LocalAddr(), Payload: make([]byte, 1000)}); err != nil {
			t.Fatal(err)
		}
	}
	readN(t, b, n)
	var st bpf.DequeueStats
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if st, err = mon.Stats(mark); err != nil || st.Dequeues >= n {
			break
		}
	}
	if err != nil || st.Dequeues != n {
		t.Errorf("monitor counted %d marked dequeues (err %v), want %d", st.Dequeues, err, n)
	}
}
