// Package bpffs mounts a private bpf filesystem for one lab.
//
// Programs and attachments that must outlive the ftlab process that
// loaded them are pinned in a bpffs. Every lab mounts its own instance in
// its run directory rather than using the machine's /sys/fs/bpf (which may
// not even be mounted): the pins are then plainly the lab's, and unmounting
// the instance releases all of them at once, whatever a crashed process
// left there.
package bpffs

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// magic is BPF_FS_MAGIC, the f_type statfs reports for a bpffs.
const magic = 0xcafe4a11

// IsMounted reports whether dir is the root of a bpffs.
func IsMounted(dir string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return false
	}
	return uint32(st.Type) == magic
}

// Mount makes dir (created if needed) the mount point of a new bpffs
// instance, readable by root only. Mounting an already mounted dir is a
// no-op.
func Mount(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("bpffs: %w", err)
	}
	if IsMounted(dir) {
		return nil
	}
	if err := unix.Mount("bpf", dir, "bpf", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0700"); err != nil {
		return fmt.Errorf("bpffs: mount %s: %w", dir, err)
	}
	return nil
}

// Unmount detaches the bpffs at dir, releasing every object pinned in it,
// and removes the mount point. A dir that is not mounted is only removed
// (if empty); a missing dir is not an error.
func Unmount(dir string) error {
	if IsMounted(dir) {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			return fmt.Errorf("bpffs: unmount %s: %w", dir, err)
		}
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("bpffs: remove %s: %w", dir, err)
	}
	return nil
}
