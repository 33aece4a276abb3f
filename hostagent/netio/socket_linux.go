//go:build linux

package netio

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// SocketConfig configures a SocketConn.
type SocketConfig struct {
	// Port is the agents' UDP port: the destination port of everything
	// sent and the port received on. Every agent of a lab uses the same
	// one (a Datagram names only the peer's address). Required.
	Port uint16
	// Addr is this host's IPv4 address, the source of everything sent.
	// Zero: the only IPv4 address on an up, non-loopback interface of the
	// namespace (an error if there are none or several).
	Addr netip.Addr
	// MTU is the IP MTU of the host's link (default 1500); MaxPayload is
	// MTU less the IPv4 and UDP headers.
	MTU int
	// Batch is how many datagrams one sendmmsg or recvmmsg moves at most
	// (default 64).
	Batch int
	// RecvBuffer and SendBuffer size the sockets' kernel buffers (defaults
	// 8 MiB and 4 MiB; forced past the sysctl limits when running as root).
	RecvBuffer, SendBuffer int
	// TTL of sent packets (default 64).
	TTL int
	// Deferred makes Send queue datagrams until Flush (or until a batch is
	// full), so an event loop that calls Flush before it waits sends each
	// iteration's datagrams with one sendmmsg. Without it Send transmits at
	// once.
	Deferred bool
	// Mark, if not 0, is the SO_MARK of everything sent: the host port's
	// mark, so a dequeue monitor can follow the host's egress queue.
	Mark uint32
}

// Defaults of SocketConfig.
const (
	DefaultMTU        = 1500
	DefaultBatch      = 64
	DefaultRecvBuffer = 8 << 20
	DefaultSendBuffer = 4 << 20
	DefaultTTL        = 64
)

// SocketConn is the real-socket Conn, for use inside a host's network
// namespace (sockets stay in the namespace they were opened in).
//
// Sending goes through a raw IPv4 socket (IPPROTO_RAW, so IP_HDRINCL): the
// conn writes the IPv4 header (ECN codepoint in the TOS byte, DF set) and
// the UDP header (source port EVPort(ev), destination Port, checksum
// computed in software) itself, so every datagram leaves from the source
// port its EV asks for without a socket per port. Receiving goes through a
// UDP socket bound to Port with IP_RECVTOS (the ECN bits of every arrival,
// CE included) and SO_RXQ_OVFL (drops for want of buffer).
//
// Send, Flush, ReadBatch and Stats belong to the event loop; Run is the
// alternative to ReadBatch that reads on its own goroutine and posts each
// batch to the loop.
type SocketConn struct {
	cfg        SocketConfig
	addr       netip.Addr
	src        [4]byte
	maxPayload int
	raw, udp   int // file descriptors

	// Send batch: slot i holds the packet txIov[i] points at, in txBuf[i].
	txBuf  [][]byte
	txAddr []unix.RawSockaddrInet4
	txIov  []unix.Iovec
	txHdr  []unix.Mmsghdr
	ntx    int

	rx    *rxBatch // ReadBatch's buffers
	stats SocketStats

	closeOnce sync.Once
	closeErr  error
}

var _ Conn = (*SocketConn)(nil)

// rxBatch is one recvmmsg's worth of buffers.
type rxBatch struct {
	buf  [][]byte
	ctl  [][]byte
	name []unix.RawSockaddrInet4
	iov  []unix.Iovec
	hdr  []unix.Mmsghdr
	n    int
}

const ipHdrLen, udpHdrLen = 20, 8

const sizeofTimespec = int(unsafe.Sizeof(unix.Timespec{}))

// ctlLen fits the control messages asked for: IP_TOS (1 byte),
// SO_RXQ_OVFL (4 bytes) and SO_TIMESTAMPNS (a timespec), each in an
// aligned cmsghdr.
var ctlLen = unix.CmsgSpace(1) + unix.CmsgSpace(4) + unix.CmsgSpace(sizeofTimespec) + 16

func newRxBatch(n, size int) *rxBatch {
	b := &rxBatch{
		buf: make([][]byte, n), ctl: make([][]byte, n), name: make([]unix.RawSockaddrInet4, n),
		iov: make([]unix.Iovec, n), hdr: make([]unix.Mmsghdr, n),
	}
	bufs, ctls := slab(n, size), slab(n, ctlLen)
	for i := range n {
		b.buf[i] = bufs[i*size : (i+1)*size : (i+1)*size]
		b.ctl[i] = ctls[i*ctlLen : (i+1)*ctlLen : (i+1)*ctlLen]
		b.iov[i].Base = &b.buf[i][0]
		b.iov[i].SetLen(size)
		b.hdr[i].Hdr.Name = (*byte)(unsafe.Pointer(&b.name[i]))
		b.hdr[i].Hdr.Iov = &b.iov[i]
		b.hdr[i].Hdr.SetIovlen(1)
		b.hdr[i].Hdr.Control = &b.ctl[i][0]
	}
	return b
}

// ListenSocket opens a SocketConn in the calling thread's network
// namespace (to open one in another namespace, call it on a thread inside
// that namespace, e.g. within nsutil.DoNamed).
func ListenSocket(cfg SocketConfig) (c *SocketConn, err error) {
	if cfg.Port == 0 {
		return nil, errors.New("netio: socket: no port")
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&cfg.MTU, DefaultMTU)
	def(&cfg.Batch, DefaultBatch)
	def(&cfg.RecvBuffer, DefaultRecvBuffer)
	def(&cfg.SendBuffer, DefaultSendBuffer)
	def(&cfg.TTL, DefaultTTL)
	switch {
	case cfg.MTU < 68 || cfg.MTU > 65535:
		return nil, fmt.Errorf("netio: socket: MTU %d outside 68..65535", cfg.MTU)
	case cfg.Batch < 1 || cfg.Batch > 1024:
		return nil, fmt.Errorf("netio: socket: batch %d outside 1..1024", cfg.Batch)
	case cfg.TTL < 1 || cfg.TTL > 255:
		return nil, fmt.Errorf("netio: socket: TTL %d outside 1..255", cfg.TTL)
	}
	addr := cfg.Addr
	if !addr.IsValid() {
		if addr, err = DiscoverAddr(); err != nil {
			return nil, err
		}
	}
	if !addr.Is4() {
		return nil, fmt.Errorf("netio: socket: %v is not an IPv4 address", addr)
	}
	c = &SocketConn{cfg: cfg, addr: addr, src: addr.As4(), maxPayload: cfg.MTU - ipHdrLen - udpHdrLen, raw: -1, udp: -1}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	if c.raw, err = unix.Socket(unix.AF_INET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_RAW); err != nil {
		return nil, fmt.Errorf("netio: raw socket (needs CAP_NET_RAW): %w", err)
	}
	setBuffer(c.raw, unix.SO_SNDBUFFORCE, unix.SO_SNDBUF, cfg.SendBuffer)
	if cfg.Mark != 0 {
		if err := unix.SetsockoptInt(c.raw, unix.SOL_SOCKET, unix.SO_MARK, int(cfg.Mark)); err != nil {
			return nil, fmt.Errorf("netio: SO_MARK (needs CAP_NET_ADMIN): %w", err)
		}
	}
	if c.udp, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_UDP); err != nil {
		return nil, fmt.Errorf("netio: udp socket: %w", err)
	}
	setBuffer(c.udp, unix.SO_RCVBUFFORCE, unix.SO_RCVBUF, cfg.RecvBuffer)
	if err := unix.SetsockoptInt(c.udp, unix.IPPROTO_IP, unix.IP_RECVTOS, 1); err != nil {
		return nil, fmt.Errorf("netio: IP_RECVTOS: %w", err)
	}
	if err := unix.SetsockoptInt(c.udp, unix.SOL_SOCKET, unix.SO_RXQ_OVFL, 1); err != nil {
		return nil, fmt.Errorf("netio: SO_RXQ_OVFL: %w", err)
	}
	if err := unix.Bind(c.udp, &unix.SockaddrInet4{Port: int(cfg.Port)}); err != nil {
		return nil, fmt.Errorf("netio: bind UDP port %d: %w", cfg.Port, err)
	}

	n := cfg.Batch
	c.txBuf = make([][]byte, n)
	c.txAddr = make([]unix.RawSockaddrInet4, n)
	c.txIov = make([]unix.Iovec, n)
	c.txHdr = make([]unix.Mmsghdr, n)
	txs := slab(n, cfg.MTU)
	for i := range n {
		c.txBuf[i] = txs[i*cfg.MTU : (i+1)*cfg.MTU : (i+1)*cfg.MTU]
		b := c.txBuf[i]
		b[0] = 0x45                               // IPv4, 5-word header
		binary.BigEndian.PutUint16(b[6:], 0x4000) // DF
		b[8] = byte(cfg.TTL)
		b[9] = unix.IPPROTO_UDP
		copy(b[12:16], c.src[:])
		binary.BigEndian.PutUint16(b[22:], cfg.Port)
		c.txAddr[i].Family = unix.AF_INET
		c.txIov[i].Base = &b[0]
		c.txHdr[i].Hdr.Name = (*byte)(unsafe.Pointer(&c.txAddr[i]))
		c.txHdr[i].Hdr.Namelen = unix.SizeofSockaddrInet4
		c.txHdr[i].Hdr.Iov = &c.txIov[i]
		c.txHdr[i].Hdr.SetIovlen(1)
	}
	c.rx = newRxBatch(n, c.rxSize())
	return c, nil
}

// slab allocates n buffers of size bytes in one piece and touches every
// page of it, so the page faults happen now and not on the first
// datagrams (in a VM with shadow paging a fault costs tens of
// microseconds: a fresh agent's first batches took milliseconds).
func slab(n, size int) []byte {
	b := make([]byte, n*size)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 0
	}
	return b
}

// rxSize is the receive buffer per datagram: room for the largest payload
// and a little more, so an oversized datagram shows as truncated.
func (c *SocketConn) rxSize() int { return c.maxPayload + 64 }

// setBuffer sets a socket buffer size, past the sysctl limit if allowed.
func setBuffer(fd, force, plain, size int) {
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, force, size) != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, plain, size)
	}
}

// DiscoverAddr returns the only IPv4 address of the calling thread's
// network namespace that is on an up, non-loopback interface.
func DiscoverAddr() (netip.Addr, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return netip.Addr{}, fmt.Errorf("netio: list interfaces: %w", err)
	}
	var found []netip.Addr
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			return netip.Addr{}, fmt.Errorf("netio: addresses of %s: %w", ifc.Name, err)
		}
		for _, a := range addrs {
			if p, ok := a.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(p.IP); ok && ip.Unmap().Is4() && !ip.IsLoopback() {
					found = append(found, ip.Unmap())
				}
			}
		}
	}
	switch len(found) {
	case 0:
		return netip.Addr{}, errors.New("netio: no IPv4 address on an up, non-loopback interface here; give the address")
	case 1:
		return found[0], nil
	}
	return netip.Addr{}, fmt.Errorf("netio: several IPv4 addresses here (%v); give the address", found)
}

// LocalAddr is this host's address.
func (c *SocketConn) LocalAddr() netip.Addr { return c.addr }

// Port is the UDP port the conn receives on and sends to.
func (c *SocketConn) Port() uint16 { return c.cfg.Port }

// MaxPayload is the largest UDP payload: the MTU less IPv4 and UDP headers.
func (c *SocketConn) MaxPayload() int { return c.maxPayload }

// Timestamp makes the kernel stamp every datagram received from now on
// with its arrival time (SO_TIMESTAMPNS: Datagram.RxNs), for a receiver
// that must know when a datagram came, not when it was read. It holds
// stamping on for the process (HoldStamps), so that closing this conn
// does not switch it off for the next one.
func (c *SocketConn) Timestamp() error {
	if err := HoldStamps(); err != nil {
		return err
	}
	if err := unix.SetsockoptInt(c.udp, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		return fmt.Errorf("netio: SO_TIMESTAMPNS: %w", err)
	}
	return nil
}

// Batch is the most datagrams one ReadBatch hands over (and one sendmmsg
// sends).
func (c *SocketConn) Batch() int { return c.cfg.Batch }

// Fd is the receiving socket, for an event loop to poll for readability
// before calling ReadBatch.
func (c *SocketConn) Fd() int { return c.udp }

// Stats returns the counters.
func (c *SocketConn) Stats() SocketStats { return c.stats }

// Send builds the IPv4 and UDP headers around d.Payload and transmits it,
// or queues it when the conn is Deferred. In deferred mode a datagram the
// kernel refuses at Flush is counted in Stats, not returned.
func (c *SocketConn) Send(d Datagram) error {
	if len(d.Payload) > c.maxPayload {
		return fmt.Errorf("netio: datagram of %d bytes exceeds %d", len(d.Payload), c.maxPayload)
	}
	if !d.Peer.Is4() {
		return fmt.Errorf("netio: peer %v is not IPv4", d.Peer)
	}
	if c.ntx == len(c.txBuf) {
		c.Flush()
	}
	i := c.ntx
	b := c.txBuf[i]
	total := ipHdrLen + udpHdrLen + len(d.Payload)
	dst := d.Peer.As4()
	b[1] = byte(d.ECN & 3) // DSCP 0
	binary.BigEndian.PutUint16(b[2:], uint16(total))
	copy(b[16:20], dst[:])
	udp := b[ipHdrLen:total]
	binary.BigEndian.PutUint16(udp[0:], EVPort(d.EV))
	binary.BigEndian.PutUint16(udp[4:], uint16(udpHdrLen+len(d.Payload)))
	udp[6], udp[7] = 0, 0
	copy(udp[udpHdrLen:], d.Payload)
	binary.BigEndian.PutUint16(udp[6:], udpChecksum(c.src, dst, udp))
	c.txAddr[i].Addr = dst
	c.txIov[i].SetLen(total)
	c.ntx++
	c.stats.TxByType[packetType(d.Payload)]++
	c.stats.TxBytes += uint64(len(d.Payload))
	if c.cfg.Deferred {
		return nil
	}
	return c.Flush()
}

// Pending is the number of datagrams queued for the next Flush.
func (c *SocketConn) Pending() int { return c.ntx }

// Flush transmits the queued datagrams with as few sendmmsg calls as the
// kernel allows. It returns the first error; datagrams the kernel refused
// are counted in Stats.TxErrors and dropped (the transport recovers them
// like any loss).
func (c *SocketConn) Flush() error {
	if c.raw < 0 {
		c.stats.TxErrors += uint64(c.ntx)
		c.ntx = 0
		return errors.New("netio: send: conn closed")
	}
	var first error
	off := 0
	for off < c.ntx {
		m, err := sendmmsg(c.raw, c.txHdr[off:c.ntx])
		c.stats.TxCalls++
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			// The first datagram of the rest failed. A full buffer or
			// queue (EAGAIN, ENOBUFS) fails the rest too: drop them all
			// rather than spin; anything else is the datagram's own.
			drop := 1
			if err == unix.EAGAIN || err == unix.ENOBUFS {
				drop = c.ntx - off
			}
			c.stats.TxErrors += uint64(drop)
			c.stats.LastTxError = err.Error()
			if first == nil {
				first = fmt.Errorf("netio: send: %w", err)
			}
			off += drop
		default:
			c.stats.TxDatagrams += uint64(m)
			off += m
		}
	}
	c.ntx = 0
	return first
}

// ReadBatch receives what is waiting, up to one batch, without blocking,
// and hands each datagram to r. It returns the number received (0 when
// nothing was waiting).
func (c *SocketConn) ReadBatch(r Receiver) (int, error) {
	n, err := recvmmsg(c.udp, c.rx)
	if err != nil {
		if err == unix.EAGAIN || err == unix.EINTR {
			return 0, nil
		}
		return 0, fmt.Errorf("netio: receive: %w", err)
	}
	c.deliver(c.rx, r)
	return n, nil
}

// Run reads on the calling goroutine until ctx is done or the conn is
// closed, and posts every batch to the event loop through post (for
// example clock.Loop.Post), where the datagrams are handed to r. At most
// three batches are in flight; while the loop is behind, the socket's
// buffer absorbs arrivals (and drops beyond it, counted in RxDropped).
// Use either Run or ReadBatch, not both.
func (c *SocketConn) Run(ctx context.Context, post func(func()), r Receiver) error {
	const inFlight = 3
	free := make(chan *rxBatch, inFlight)
	for range inFlight {
		free <- newRxBatch(c.cfg.Batch, c.rxSize())
	}
	pfd := []unix.PollFd{{Fd: int32(c.udp), Events: unix.POLLIN}}
	for {
		var b *rxBatch
		select {
		case <-ctx.Done():
			return ctx.Err()
		case b = <-free:
		}
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			n, err := recvmmsg(c.udp, b)
			if err == nil && n > 0 {
				break
			}
			if err != nil && err != unix.EAGAIN && err != unix.EINTR {
				return fmt.Errorf("netio: receive: %w", err)
			}
			// Wait for data; wake now and then to notice ctx.
			if _, err := unix.Poll(pfd, 50); err != nil && err != unix.EINTR {
				return fmt.Errorf("netio: poll: %w", err)
			}
		}
		post(func() {
			c.deliver(b, r)
			free <- b
		})
	}
}

// deliver parses a received batch and hands it to r (on the loop).
func (c *SocketConn) deliver(b *rxBatch, r Receiver) {
	c.stats.RxCalls++
	for i := range b.n {
		h := &b.hdr[i]
		n := int(h.Len)
		if n > len(b.buf[i]) {
			n = len(b.buf[i])
		}
		if h.Hdr.Flags&unix.MSG_TRUNC != 0 {
			c.stats.RxTruncated++
		}
		sa := &b.name[i]
		if sa.Family != unix.AF_INET {
			continue
		}
		var tos byte
		var rxNs int64
		ctl := b.ctl[i][:h.Hdr.Controllen]
		for len(ctl) >= unix.SizeofCmsghdr {
			cm := (*unix.Cmsghdr)(unsafe.Pointer(&ctl[0]))
			if cm.Len < unix.SizeofCmsghdr || int(cm.Len) > len(ctl) {
				break
			}
			data := ctl[unix.SizeofCmsghdr:cm.Len]
			switch {
			case cm.Level == unix.IPPROTO_IP && cm.Type == unix.IP_TOS && len(data) >= 1:
				tos = data[0]
			case cm.Level == unix.SOL_SOCKET && cm.Type == unix.SO_RXQ_OVFL && len(data) >= 4:
				c.stats.RxDropped = uint64(*(*uint32)(unsafe.Pointer(&data[0])))
			case cm.Level == unix.SOL_SOCKET && cm.Type == unix.SCM_TIMESTAMPNS && len(data) >= sizeofTimespec:
				rxNs = (*unix.Timespec)(unsafe.Pointer(&data[0])).Nano()
			}
			next := unix.CmsgSpace(int(cm.Len) - unix.SizeofCmsghdr)
			if next > len(ctl) {
				break
			}
			ctl = ctl[next:]
		}
		p := b.buf[i][:n]
		port := binary.BigEndian.Uint16((*[2]byte)(unsafe.Pointer(&sa.Port))[:])
		d := Datagram{Peer: netip.AddrFrom4(sa.Addr), EV: PortEV(port, p), ECN: ECN(tos & 3), Payload: p, RxNs: rxNs}
		c.stats.RxDatagrams++
		c.stats.RxBytes += uint64(n)
		c.stats.RxByType[packetType(p)]++
		if d.ECN == CE {
			c.stats.RxCE++
		}
		r.HandleDatagram(d)
	}
	b.n = 0
}

// Close closes both sockets; queued datagrams are dropped. Stop Run (and
// wait for it to return) first, and call nothing else of the conn after:
// a Send or Flush after Close drops its datagrams (never writing to a
// descriptor number the process may have reused since).
func (c *SocketConn) Close() error {
	c.closeOnce.Do(func() {
		var errs []error
		for _, fd := range []*int{&c.raw, &c.udp} {
			if *fd >= 0 {
				errs = append(errs, unix.Close(*fd))
				*fd = -1
			}
		}
		c.closeErr = errors.Join(errs...)
	})
	return c.closeErr
}

// sendmmsg sends hdrs on fd without blocking.
func sendmmsg(fd int, hdrs []unix.Mmsghdr) (int, error) {
	n, _, e := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(fd), uintptr(unsafe.Pointer(&hdrs[0])), uintptr(len(hdrs)), unix.MSG_DONTWAIT, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// recvmmsg receives into b without blocking.
func recvmmsg(fd int, b *rxBatch) (int, error) {
	for i := range b.hdr {
		b.hdr[i].Hdr.Namelen = unix.SizeofSockaddrInet4
		b.hdr[i].Hdr.SetControllen(len(b.ctl[i]))
		b.hdr[i].Hdr.Flags = 0
	}
	n, _, e := unix.Syscall6(unix.SYS_RECVMMSG, uintptr(fd), uintptr(unsafe.Pointer(&b.hdr[0])), uintptr(len(b.hdr)), unix.MSG_DONTWAIT, 0, 0)
	if e != 0 {
		b.n = 0
		return 0, e
	}
	b.n = int(n)
	return int(n), nil
}
