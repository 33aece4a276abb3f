// Package nsutil creates, enters and removes named network namespaces.
//
// A network namespace belongs to an OS thread, not to a goroutine, so every
// function that enters one locks the goroutine to its thread, switches, does
// its work and switches back. If switching back fails the thread is left
// locked, so the Go runtime destroys it instead of reusing a thread that sits
// in the wrong namespace.
//
// Named namespaces live where iproute2 keeps them (/run/netns/<name>), so
// `ip netns` and every other tool sees them.
package nsutil

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Dir is where named network namespaces are bind-mounted.
const Dir = "/run/netns"

// Path returns the bind-mount path of a named namespace.
func Path(name string) string { return filepath.Join(Dir, name) }

// Exists reports whether a named namespace is present.
func Exists(name string) bool {
	_, err := os.Stat(Path(name))
	return err == nil
}

// Open returns a handle to a named namespace. The caller closes it.
func Open(name string) (netns.NsHandle, error) {
	h, err := netns.GetFromPath(Path(name))
	if err != nil {
		return netns.None(), fmt.Errorf("open network namespace %q: %w", name, err)
	}
	return h, nil
}

// Do runs fn on a thread that is inside the namespace ns.
func Do(ns netns.NsHandle, fn func() error) (err error) {
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("get current network namespace: %w", err)
	}
	defer orig.Close()
	if err := netns.Set(ns); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter network namespace: %w", err)
	}
	defer func() {
		if rerr := netns.Set(orig); rerr != nil {
			// Leave the thread locked: the runtime kills it when the
			// goroutine exits, so no goroutine runs in the wrong namespace.
			err = errors.Join(err, fmt.Errorf("return to original network namespace: %w", rerr))
			return
		}
		runtime.UnlockOSThread()
	}()
	return fn()
}

// DoNamed runs fn on a thread inside the named namespace.
func DoNamed(name string, fn func() error) error {
	ns, err := Open(name)
	if err != nil {
		return err
	}
	defer ns.Close()
	return Do(ns, fn)
}

// Create makes a new named namespace, runs init inside it (if not nil) and
// returns a handle to it. The name is claimed (O_EXCL) before the namespace
// is made, so an existing namespace is never adopted. On any error nothing
// is left behind.
func Create(name string, init func() error) (h netns.NsHandle, err error) {
	if err := ValidName(name); err != nil {
		return netns.None(), err
	}
	if err := os.MkdirAll(Dir, 0o755); err != nil {
		return netns.None(), fmt.Errorf("create %s: %w", Dir, err)
	}
	path := Path(name)
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return netns.None(), fmt.Errorf("network namespace %q already exists", name)
		}
		return netns.None(), fmt.Errorf("create network namespace %q: %w", name, err)
	}
	f.Close()
	mounted := false
	defer func() {
		if err != nil {
			if mounted {
				_ = unix.Unmount(path, unix.MNT_DETACH)
			}
			_ = os.Remove(path)
		}
	}()

	return inNewNetns(fmt.Sprintf("network namespace %q", name), func() (netns.NsHandle, error) {
		self := "/proc/thread-self/ns/net"
		if err := unix.Mount(self, path, "none", unix.MS_BIND, ""); err != nil {
			return netns.None(), fmt.Errorf("bind-mount network namespace %q: %w", name, err)
		}
		mounted = true
		if init != nil {
			if err := init(); err != nil {
				return netns.None(), fmt.Errorf("set up network namespace %q: %w", name, err)
			}
		}
		return netns.Get()
	})
}

// Delete removes a named namespace. The kernel destroys the namespace, and
// every interface in it, once no process or open handle uses it. Deleting a
// namespace that does not exist is not an error.
func Delete(name string) error {
	if err := ValidName(name); err != nil {
		return err
	}
	path := Path(name)
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("delete network namespace %q: unmount: %w", name, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("delete network namespace %q: %w", name, err)
	}
	return nil
}

// List returns the named namespaces whose names start with prefix.
func List(prefix string) ([]string, error) {
	entries, err := os.ReadDir(Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list network namespaces: %w", err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// ValidName rejects namespace names that could escape Dir.
func ValidName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") || len(name) > 255 {
		return fmt.Errorf("invalid network namespace name %q", name)
	}
	return nil
}

// WriteSysctl sets a sysctl of the calling thread's network namespace, e.g.
// WriteSysctl("net/ipv6/conf/all/disable_ipv6", "1"). /proc/sys/net resolves
// against the namespace of the thread that opens it, so call it inside Do or
// a Create init function.
func WriteSysctl(key, value string) error {
	path := filepath.Join("/proc/sys", key)
	if err := os.WriteFile(path, []byte(value), 0); err != nil {
		return fmt.Errorf("sysctl %s=%s: %w", strings.ReplaceAll(key, "/", "."), value, err)
	}
	return nil
}

// Enter moves the calling thread into ns for good. The caller must have
// locked the goroutine to its thread and must not unlock it: this is for a
// thread that is about to exec a program in ns.
func Enter(ns netns.NsHandle) error {
	if err := netns.Set(ns); err != nil {
		return fmt.Errorf("enter network namespace: %w", err)
	}
	return nil
}

// anonymous makes a network namespace with no name, held only by the
// returned handle: it goes away when the handle is closed (also when the
// process dies).
func anonymous() (netns.NsHandle, error) {
	return inNewNetns("network namespace", netns.Get)
}

// inNewNetns runs do on a locked thread moved into a new network
// namespace (what names it in errors), then moves the thread back and
// returns do's handle. If the thread cannot go back it stays locked and
// dies with its goroutine; on any error the handle is closed.
func inNewNetns(what string, do func() (netns.NsHandle, error)) (netns.NsHandle, error) {
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return netns.None(), fmt.Errorf("get current network namespace: %w", err)
	}
	defer orig.Close()
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return netns.None(), fmt.Errorf("create %s: unshare: %w", what, err)
	}
	// From here the thread is in the new namespace: always try to go back.
	h, err := do()
	if rerr := netns.Set(orig); rerr != nil {
		if h.IsOpen() {
			h.Close()
		}
		return netns.None(), errors.Join(err, fmt.Errorf("return to original network namespace: %w", rerr))
	}
	runtime.UnlockOSThread()
	if err != nil {
		if h.IsOpen() {
			h.Close()
		}
		return netns.None(), err
	}
	return h, nil
}
