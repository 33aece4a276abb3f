package sim

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/ftlab/ftlab/hostagent/netio"
)

// HostStats counts a host's datagrams.
type HostStats struct {
	Sent, Received uint64
	Unattached     uint64 // arrived with no Receiver attached
}

// Host is a simulated host; it implements netio.Conn.
type Host struct {
	net      *Network
	id       int
	addr     netip.Addr
	up, down *Link
	recv     netio.Receiver
	stats    HostStats
}

var _ netio.Conn = (*Host)(nil)

// ErrNoRoute is returned by Send for a destination that is not a host of
// the network (or is the sender itself).
var ErrNoRoute = errors.New("sim: no route")

// ErrTooBig is returned by Send for a payload larger than MaxPayload.
var ErrTooBig = errors.New("sim: datagram too big")

// Attach sets the receiver that gets this host's datagrams.
func (h *Host) Attach(r netio.Receiver) { h.recv = r }

// ID is the host's index in the network.
func (h *Host) ID() int { return h.id }

// LocalAddr is the host's address.
func (h *Host) LocalAddr() netip.Addr { return h.addr }

// MaxPayload is the MTU less IPv4 and UDP headers.
func (h *Host) MaxPayload() int { return h.net.cfg.MTU - netio.IPv4UDPOverhead }

// Uplink is the host's link into the fabric; Downlink the one out of it.
func (h *Host) Uplink() *Link   { return h.up }
func (h *Host) Downlink() *Link { return h.down }

// Stats returns the host's counters.
func (h *Host) Stats() HostStats { return h.stats }

// Send copies d into the network. It fails only for a bad destination or
// an oversized payload; loss happens silently in the fabric.
func (h *Host) Send(d netio.Datagram) error {
	dst, ok := h.net.byAddr[d.Peer]
	if !ok || dst == h.id {
		return fmt.Errorf("sim: host %d sending to %v: %w", h.id, d.Peer, ErrNoRoute)
	}
	if len(d.Payload) > h.MaxPayload() {
		return fmt.Errorf("sim: host %d sending %d bytes: %w", h.id, len(d.Payload), ErrTooBig)
	}
	n := h.net
	p := &Packet{
		Src: h.id, Dst: dst, EV: d.EV, ECN: d.ECN,
		Path:    n.PathOf(h.id, dst, d.EV),
		Payload: n.alloc(len(d.Payload)),
		Sent:    n.clk.Now(),
	}
	copy(p.Payload, d.Payload)
	h.stats.Sent++
	h.up.enqueue(p)
	return nil
}

func (h *Host) deliver(p *Packet) {
	if h.recv == nil {
		h.stats.Unattached++
		h.net.free(p)
		return
	}
	h.stats.Received++
	src := h.net.hosts[p.Src].addr
	h.recv.HandleDatagram(netio.Datagram{Peer: src, EV: p.EV, ECN: p.ECN, Payload: p.Payload})
	h.net.free(p)
}
