package fabric

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/topology"
)

// probeBasePort is the first UDP port used by ProbeLinks; direction d of
// link i uses probeBasePort+2i+d, so both directions can run at once.
const probeBasePort = 40000

// probeTimeout bounds the wait for one probe datagram.
const probeTimeout = 2 * time.Second

// ProbeResult is the outcome of sending one datagram across one direction
// of one link.
type ProbeResult struct {
	Link  string `json:"link"`
	From  string `json:"from"`
	To    string `json:"to"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// ProbeLinks sends one UDP datagram across every link in both directions,
// from the sender's port to the receiver's port only (both sockets are bound
// to the link's interfaces), and checks that it arrives intact from the
// right source. It needs the fabric's kernel configuration (addresses,
// routes, neighbours), not a data plane.
func ProbeLinks(ctx context.Context, t *topology.Topology, namespace func(node string) string, workers int) []ProbeResult {
	if workers <= 0 {
		workers = 8
	}
	type job struct {
		link *topology.Link
		from topology.Side
	}
	var jobs []job
	for i := range t.Links {
		jobs = append(jobs, job{&t.Links[i], topology.SideA}, job{&t.Links[i], topology.SideB})
	}
	results := make([]ProbeResult, len(jobs))
	var mu sync.Mutex
	idx := make(map[job]int, len(jobs))
	for i, j := range jobs {
		idx[j] = i
	}
	_ = forEach(ctx, workers, "probe", jobs, func(j job) string { return j.link.Name }, func(j job) error {
		src, dst := j.link.End(j.from), j.link.End(1-j.from)
		r := ProbeResult{Link: j.link.Name, From: src.Node, To: dst.Node}
		if err := probeOne(t, namespace, uint16(probeBasePort+2*j.link.ID+int(j.from)), src, dst); err != nil {
			r.Error = err.Error()
		} else {
			r.OK = true
		}
		mu.Lock()
		results[idx[j]] = r
		mu.Unlock()
		return nil
	})
	return results
}

func bindToDevice(ifname string) func(network, address string, c syscall.RawConn) error {
	return func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptString(int(fd), unix.SOL_SOCKET, unix.SO_BINDTODEVICE, ifname)
		}); err != nil {
			return err
		}
		return serr
	}
}

// listenIn opens a UDP socket bound to addr and to device ifname inside the
// named namespace. The socket stays in that namespace after the thread
// leaves it.
func listenIn(ns, ifname string, addr netip.AddrPort) (net.PacketConn, error) {
	var pc net.PacketConn
	err := nsutil.DoNamed(ns, func() error {
		lc := net.ListenConfig{Control: bindToDevice(ifname)}
		var err error
		pc, err = lc.ListenPacket(context.Background(), "udp4", addr.String())
		return err
	})
	return pc, err
}

func probeOne(t *topology.Topology, namespace func(string) string, port uint16, src, dst *topology.Endpoint) error {
	srcNode, _ := t.Node(src.Node)
	dstNode, _ := t.Node(dst.Node)
	rx, err := listenIn(namespace(dst.Node), dst.Ifname, netip.AddrPortFrom(dstNode.Addr, port))
	if err != nil {
		return fmt.Errorf("listen on %s/%s: %w", dst.Node, dst.Ifname, err)
	}
	defer rx.Close()
	tx, err := listenIn(namespace(src.Node), src.Ifname, netip.AddrPortFrom(srcNode.Addr, port))
	if err != nil {
		return fmt.Errorf("open socket on %s/%s: %w", src.Node, src.Ifname, err)
	}
	defer tx.Close()

	payload := make([]byte, 32)
	_, _ = rand.Read(payload)
	to := net.UDPAddrFromAddrPort(netip.AddrPortFrom(dstNode.Addr, port))
	if _, err := tx.WriteTo(payload, to); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	buf := make([]byte, 256)
	_ = rx.SetReadDeadline(time.Now().Add(probeTimeout))
	n, from, err := rx.ReadFrom(buf)
	if err != nil {
		return fmt.Errorf("receive: %w", err)
	}
	if !bytes.Equal(buf[:n], payload) {
		return fmt.Errorf("payload corrupted")
	}
	if got := from.(*net.UDPAddr).AddrPort().Addr().Unmap(); got != srcNode.Addr {
		return fmt.Errorf("datagram came from %s, want %s", got, srcNode.Addr)
	}
	return nil
}
