package capture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ftlab/ftlab/bpf"
	"github.com/ftlab/ftlab/internal/nsutil"
)

// hostSocket reads one host port with an AF_PACKET socket opened in the
// host's namespace (a socket keeps the namespace it was made in). The
// socket is non-blocking and read through Go's poller, so close unblocks
// a read in progress.
type hostSocket struct {
	port     *Port
	f        *os.File
	snaplen  int
	stopping atomic.Bool
	closed   atomic.Bool
	drops    uint64 // the socket's drops, read at close
}

// hostRcvBuf is the receive buffer of a host port's socket.
const hostRcvBuf = 8 << 20

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func openHostSocket(ns string, p *Port, snaplen int) (*hostSocket, error) {
	var fd int
	err := nsutil.DoNamed(ns, func() error {
		ifi, err := net.InterfaceByName(p.Ifname)
		if err != nil {
			return err
		}
		fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, int(htons(unix.ETH_P_ALL)))
		if err != nil {
			return fmt.Errorf("AF_PACKET socket: %w", err)
		}
		// Room for bursts at the lab's rates (the reader is one goroutine
		// writing pcapng); what still overflows is counted as lost.
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, hostRcvBuf); err != nil {
			unix.Close(fd)
			return fmt.Errorf("SO_RCVBUFFORCE: %w", err)
		}
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
			unix.Close(fd)
			return fmt.Errorf("SO_TIMESTAMPNS: %w", err)
		}
		if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifi.Index}); err != nil {
			unix.Close(fd)
			return fmt.Errorf("bind to %s: %w", p.Ifname, err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("capture: %s: %w", p, err)
	}
	return &hostSocket{port: p, f: os.NewFile(uintptr(fd), "packet:"+p.String()), snaplen: snaplen}, nil
}

func (h *hostSocket) run(out chan<- *Frame) error {
	rc, err := h.f.SyscallConn()
	if err != nil {
		return err
	}
	buf := make([]byte, 1<<16)
	oob := make([]byte, unix.CmsgSpace(16))
	for {
		var n, oobn int
		var from unix.Sockaddr
		var rerr error
		err := rc.Read(func(fd uintptr) bool {
			// MSG_TRUNC: n is the frame's real length even when longer
			// than buf.
			n, oobn, _, from, rerr = unix.Recvmsg(int(fd), buf, oob, unix.MSG_TRUNC)
			return !errors.Is(rerr, unix.EAGAIN)
		})
		if err != nil {
			if h.stopping.Load() && (errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, os.ErrClosed)) {
				return nil // drained
			}
			if h.closed.Load() {
				return nil
			}
			return fmt.Errorf("capture: %s: %w", h.port, err)
		}
		if rerr != nil {
			return fmt.Errorf("capture: %s: recvmsg: %w", h.port, rerr)
		}
		f := &Frame{Port: h.port, Time: stampOf(oob[:oobn]), Len: n, Dir: bpf.TapIn}
		if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
			f.Dir = bpf.TapOut
		}
		f.Data = append([]byte(nil), buf[:min(n, h.snaplen, len(buf))]...)
		f.decode()
		out <- f
	}
}

// stampOf returns the kernel's receive timestamp from the control
// messages, or now.
func stampOf(oob []byte) time.Time {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err == nil {
		for _, m := range msgs {
			if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SO_TIMESTAMPNS && len(m.Data) >= 16 {
				sec, nsec := binary.NativeEndian.Uint64(m.Data), binary.NativeEndian.Uint64(m.Data[8:])
				return time.Unix(int64(sec), int64(nsec))
			}
		}
	}
	return time.Now()
}

// stop makes run return once it has read what the socket holds: reads
// no longer wait.
func (h *hostSocket) stop() {
	if !h.stopping.Swap(true) {
		_ = h.f.SetReadDeadline(time.Now())
	}
}

func (h *hostSocket) close() error {
	if h.closed.Swap(true) {
		return nil
	}
	rc, err := h.f.SyscallConn()
	if err == nil {
		err = rc.Control(func(fd uintptr) {
			// The kernel's count of frames the socket had no room for.
			if st, serr := unix.GetsockoptTpacketStats(int(fd), unix.SOL_PACKET, unix.PACKET_STATISTICS); serr == nil {
				h.drops = uint64(st.Drops)
			}
		})
	}
	return errors.Join(err, h.f.Close())
}

func (h *hostSocket) lost() (*Port, uint64) { return h.port, h.drops }
