package nsutil

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// The kernel destroys a deleted namespace in the background: a workqueue
// (cleanup_net) unregisters its interfaces and tears down its state,
// taking the RTNL lock that creating a namespace, an interface or a route
// needs too. A big lab's cleanup can take seconds, and whatever comes
// right after it (the next lab's build) waits behind it. A Drain waits for
// that cleanup.
//
// There is no interface that says when a namespace is gone. A Drain
// uses a probe: two anonymous namespaces joined by a veth. Deleting the
// probe's first namespace after the ones to wait for puts it in the same
// cleanup batch or a later one (the workqueue is ordered); its veth peer,
// watched in the second namespace, vanishes when that batch unregisters
// its interfaces, which is the bulk of a lab's cleanup.
type Drain struct {
	probe, watch netns.NsHandle
}

const probeIfname = "ftprobe"

// NewDrain prepares a probe. Call it before deleting the namespaces to
// wait for; Wait after. Close releases it (Wait does too).
func NewDrain() (*Drain, error) {
	probe, err := anonymous()
	if err != nil {
		return nil, err
	}
	watch, err := anonymous()
	if err != nil {
		probe.Close()
		return nil, err
	}
	d := &Drain{probe: probe, watch: watch}
	h, err := netlink.NewHandleAt(watch)
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("drain probe: %w", err)
	}
	defer h.Close()
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: probeIfname}, PeerName: probeIfname, PeerNamespace: netlink.NsFd(probe)}
	if err := h.LinkAdd(veth); err != nil {
		d.Close()
		return nil, fmt.Errorf("drain probe: veth: %w", err)
	}
	return d, nil
}

// Wait releases the probe and waits until the kernel has unregistered its
// interfaces, and with them those of every namespace deleted before it,
// or until timeout or ctx ends. It returns how long it waited and whether
// the cleanup got there.
func (d *Drain) Wait(ctx context.Context, timeout time.Duration) (time.Duration, bool, error) {
	start := time.Now()
	h, err := netlink.NewHandleAt(d.watch)
	if err != nil {
		d.Close()
		return 0, false, fmt.Errorf("drain: %w", err)
	}
	defer h.Close()
	d.probe.Close()
	d.probe = netns.None()
	defer d.Close()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := h.LinkByName(probeIfname); err != nil {
			var notFound netlink.LinkNotFoundError
			if errors.As(err, &notFound) {
				return time.Since(start), true, nil
			}
			return time.Since(start), false, fmt.Errorf("drain: %w", err)
		}
		select {
		case <-ctx.Done():
			return time.Since(start), false, ctx.Err()
		case <-deadline.C:
			return time.Since(start), false, nil
		case <-tick.C:
		}
	}
}

// Close releases the probe without waiting. Safe to call more than once.
func (d *Drain) Close() {
	for _, h := range []*netns.NsHandle{&d.probe, &d.watch} {
		if h.IsOpen() {
			h.Close()
		}
		*h = netns.None()
	}
}
