//go:build linux

package netio

import (
	"fmt"
	"sync"

	"golang.org/x/sys/unix"
)

// The kernel stamps a datagram's arrival (SO_TIMESTAMPNS) only while some
// socket on the machine asks for stamps: the last such socket's close
// switches arrival stamping off, and the next one's setsockopt switches it
// back on from a work queue, later (net_enable_timestamp, a static key).
// A datagram that arrives in between is stamped when it is read instead,
// so a delay line would count its delay from the read and hold it longer
// than its path's delay: measured here, a datagram read 5 ms after it
// came was stamped 5 ms late. Between two runs every agent's socket
// closes, so each run's first arrivals fell in that window, and a
// datagram read late could leave after the next one of its path.
//
// HoldStamps keeps one socket asking for stamps for the life of the
// process, so that once stamping is on it stays on across runs and labs.
// The socket is never bound and carries no traffic.

var stamps struct {
	once sync.Once
	fd   int
	err  error
}

// HoldStamps makes arrival stamping stay on for the rest of the process
// (see above). Call it early, well before the first datagram whose arrival
// time matters: the first call switches stamping on, which takes effect a
// little later. Calls after the first cost nothing.
func HoldStamps() error {
	stamps.once.Do(func() {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.IPPROTO_UDP)
		if err != nil {
			stamps.err = fmt.Errorf("netio: a socket to hold arrival stamping on: %w", err)
			return
		}
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
			unix.Close(fd)
			stamps.err = fmt.Errorf("netio: SO_TIMESTAMPNS on the socket holding arrival stamping on: %w", err)
			return
		}
		stamps.fd = fd
	})
	return stamps.err
}
