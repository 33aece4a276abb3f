package lab

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// ErrTrafficBusy says another ftlab process runs host agents on the lab.
var ErrTrafficBusy = errors.New("its hosts are busy")

// LockTraffic claims a lab's hosts for one process's host agents (ftlab
// send, ftlab run --lab): two sets of agents on one host would both see
// every packet. It does not take the lab's own lock, so links can still
// be failed, impaired and read while traffic runs. The kernel drops the
// claim when the holder exits.
func (s *Store) LockTraffic(name string) (release func(), err error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	if _, err := os.Stat(s.labDir(name)); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("lab %q: %w", name, ErrNotFound)
	}
	release, err = flock(filepath.Join(s.labDir(name), "traffic.lock"))
	if errors.Is(err, unix.EWOULDBLOCK) {
		return nil, fmt.Errorf("lab %q: %w: another ftlab send or run --lab has agents on them", name, ErrTrafficBusy)
	}
	if err != nil {
		return nil, fmt.Errorf("lock hosts of lab %q: %w", name, err)
	}
	return release, nil
}
