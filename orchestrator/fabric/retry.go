package fabric

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// maxAttempts bounds the retries of one netlink operation.
const maxAttempts = 6

// transient reports whether a netlink error is worth retrying: the kernel ran
// out of socket buffer or asked to try again.
func transient(err error) bool {
	return errors.Is(err, unix.EBUSY) || errors.Is(err, unix.EAGAIN) ||
		errors.Is(err, unix.ENOBUFS) || errors.Is(err, unix.EINTR)
}

// retry runs op until it succeeds, fails with a non-transient error or has
// been tried maxAttempts times, backing off exponentially from 1 ms.
func retry(op func() error) error {
	var err error
	delay := time.Millisecond
	for attempt := 0; attempt < maxAttempts; attempt++ {
		if err = op(); err == nil || !transient(err) {
			return err
		}
		time.Sleep(delay)
		delay *= 2
	}
	return err
}
