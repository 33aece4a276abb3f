package bench

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/topology"
)

// bareTick is how often PacedBareUDP's loop wakes: each wake-up sends
// every host's datagrams due by then in one sendmmsg and reads every
// host's arrivals in one recvmmsg.
const bareTick = time.Millisecond

// PacedBareUDP is the paced agents' baseline: the cheapest way to move
// the same datagrams through the same fabric at the same rate. Every host
// of topo (built in s) sends 1472-byte UDP datagrams to its neighbour
// under the same edge switch at rate for d; one goroutine wakes every
// bareTick and, per host, sends what is due with one sendmmsg and reads
// what arrived with one recvmmsg. It returns the datagrams received and
// the CPU time (this process and ksoftirqd) they took.
func PacedBareUDP(ctx context.Context, s *scope, topo *topology.Topology, rate uint64, d time.Duration) (res RateResult, err error) {
	const port, size, batch = 9478, 1472, 64
	hosts := topo.Hosts()
	type host struct {
		rfd, sfd int
		tx, rx   []unix.Mmsghdr
	}
	hs := make([]*host, len(hosts))
	defer func() {
		for _, h := range hs {
			if h != nil {
				unix.Close(h.rfd)
				unix.Close(h.sfd)
			}
		}
	}()
	for i, n := range hosts {
		h := &host{rfd: -1, sfd: -1, tx: mmsgs(batch, size), rx: mmsgs(batch, size+64)}
		hs[i] = h
		peer := hosts[i^1].Addr.As4()
		if err := nsutil.DoNamed(s.name(n.Name), func() (err error) {
			if h.rfd, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0); err != nil {
				return err
			}
			_ = unix.SetsockoptInt(h.rfd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 8<<20)
			if err := unix.Bind(h.rfd, &unix.SockaddrInet4{Port: port}); err != nil {
				return err
			}
			if h.sfd, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0); err != nil {
				return err
			}
			return unix.Connect(h.sfd, &unix.SockaddrInet4{Addr: peer, Port: port})
		}); err != nil {
			return res, fmt.Errorf("%s: %w", n.Name, err)
		}
	}
	perHost := int(float64(rate) * d.Seconds() / float64((size+42)*8))
	sent := make([]int, len(hs))
	var got int
	recv := func() error {
		for _, h := range hs {
			m, _, e := unix.Syscall6(unix.SYS_RECVMMSG, uintptr(h.rfd), uintptr(unsafe.Pointer(&h.rx[0])), batch, unix.MSG_DONTWAIT, 0, 0)
			switch {
			case e == 0:
				got += int(m)
			case e != unix.EAGAIN && e != unix.EINTR:
				return fmt.Errorf("recvmmsg: %w", e)
			}
		}
		return nil
	}
	c0 := sampleCPU()
	start := time.Now()
	for {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		due := min(perHost, int(float64(rate)*time.Since(start).Seconds()/float64((size+42)*8))+1)
		done := true
		for i, h := range hs {
			if n := min(due-sent[i], batch); n > 0 {
				m, _, e := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(h.sfd), uintptr(unsafe.Pointer(&h.tx[0])), uintptr(n), unix.MSG_DONTWAIT, 0, 0)
				switch {
				case e == 0:
					sent[i] += int(m)
				case e != unix.ENOBUFS && e != unix.EAGAIN && e != unix.EINTR:
					return res, fmt.Errorf("sendmmsg: %w", e)
				}
			}
			done = done && sent[i] >= perHost
		}
		if err := recv(); err != nil {
			return res, err
		}
		if done {
			break
		}
		time.Sleep(bareTick)
	}
	// What is still in flight arrives within a few ticks.
	for deadline := time.Now().Add(time.Second); got < perHost*len(hs) && time.Now().Before(deadline); {
		time.Sleep(bareTick)
		if err := recv(); err != nil {
			return res, err
		}
	}
	use := c0.to(sampleCPU())
	res = RateResult{Packets: got, Wall: use.wall, CPU: use.cpu}
	if got == 0 {
		return res, errors.New("paced bare UDP: nothing received")
	}
	return res, nil
}
