package switchd

import (
	"context"
	"fmt"
	"slices"

	"github.com/vishvananda/netlink"

	"github.com/ftlab/ftlab/bpf"
	"github.com/ftlab/ftlab/internal/bpffs"
	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/switchd/kernelfwd"
	"github.com/ftlab/ftlab/switchd/routing"
	"github.com/ftlab/ftlab/switchd/shaping"
)

// Lab is what the control plane needs to know about a lab's fabric.
type Lab struct {
	Topo      *topology.Topology
	Config    Config
	Namespace func(node string) string
	// PinRoot is the lab's private bpffs mount point (eBPF data plane).
	PinRoot string
	// SetCable takes both ends of a link administratively down or up, as
	// pulling or replugging the cable would. The kernel and no-data-plane
	// modes fail links this way; the fabric builder provides it
	// (fabric.SetLinkState), so that switchd need not know how a fabric
	// is built. Nil: those modes cannot fail links.
	SetCable func(link *topology.Link, up bool) error
}

// Install puts the configured data plane into every switch of a freshly
// built fabric, with no failed links.
func (l *Lab) Install(ctx context.Context) error {
	cfg := l.Config
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := checkDelays(l.Topo, cfg); err != nil {
		return err
	}
	if cfg.DataPlane == DataPlaneNone {
		return nil
	}
	tables, err := routing.Compute(l.Topo, nil)
	if err != nil {
		return err
	}
	switch cfg.DataPlane {
	case DataPlaneKernel:
		return kernelfwd.Program(ctx, l.Topo, tables, l.Namespace)
	case DataPlaneBPF:
		if err := bpffs.Mount(l.PinRoot); err != nil {
			return err
		}
		if err := InstallBPF(ctx, l.Topo, cfg, tables, l.Namespace, l.PinRoot); err != nil {
			return fmt.Errorf("install eBPF data plane: %w", err)
		}
	}
	return nil
}

// checkDelays refuses link delays a data plane cannot emulate: only the
// eBPF switch adds them to packets (bpf/c/delay.h), each at most what a
// port's 32-bit word holds (after time dilation they may have grown past
// what the topology file allowed).
func checkDelays(t *topology.Topology, cfg Config) error {
	for i := range t.Links {
		l := &t.Links[i]
		for _, p := range []topology.LinkParams{l.Up, l.Down} {
			if p.Delay == 0 && p.Jitter == 0 {
				continue
			}
			if cfg.DataPlane != DataPlaneBPF {
				return fmt.Errorf("link %s has a delay or jitter: only the eBPF data plane emulates them, not %s", l.Name, cfg.DataPlane)
			}
			if max(p.Delay, p.Jitter) > topology.MaxDelay {
				return fmt.Errorf("link %s: delay %v, jitter %v: above %v (time dilation stretched them?)", l.Name, p.Delay, p.Jitter, topology.MaxDelay)
			}
		}
	}
	return nil
}

// InstallsBeforeUp reports whether Install can run on the fabric before
// its links are up, where it is cheapest (fabric.Options.DataPlane): the
// eBPF data plane and none can; the kernel's routes need up links.
func (l *Lab) InstallsBeforeUp() bool { return l.Config.DataPlane != DataPlaneKernel }

// TxQueueLen is the transmit queue length the data plane wants on one end
// of a link (fabric.Options.TxQueueLen): in shaped mode the one that sizes
// its HTB leaves (shaping.LeafQueueLen); 0 (the fabric's default) else.
func (l *Lab) TxQueueLen(link *topology.Link, side topology.Side) int {
	if l.Config.DataPlane != DataPlaneBPF || l.Config.Mode != ModeShaped {
		return 0
	}
	params, mtu := egress(l.Topo, topology.PortRef{Link: link.ID, Side: side})
	return shaping.LeafQueueLen(shaping.Link{RateBps: params.RateBps, BufferBytes: params.BufferBytes, MTU: mtu})
}

// Uninstall removes the data plane Install put into the lab's fabric, so
// that another can be installed on it: the eBPF one's attachments,
// shaping and pins. The kernel one's routes stay (Install replaces them).
func (l *Lab) Uninstall(ctx context.Context) error {
	if l.Config.DataPlane != DataPlaneBPF {
		return nil
	}
	if bpffs.IsMounted(l.PinRoot) {
		if err := UninstallBPF(ctx, l.Topo, l.Namespace, l.PinRoot); err != nil {
			return fmt.Errorf("uninstall eBPF data plane: %w", err)
		}
	}
	return Remove(l.PinRoot)
}

// Remove releases everything the data plane pinned. Safe to call twice and
// for any data plane. Namespaces, and with them attachments and kernel
// routes, are removed by the caller.
func Remove(pinRoot string) error {
	if pinRoot == "" {
		return nil
	}
	return bpffs.Unmount(pinRoot)
}

// SetLinkUp fails or repairs a link in the data plane at once: in the eBPF
// switch its switch-side ports drop everything in and out (counted as
// link-down); in kernel mode both interfaces go down. Routes do not change
// until Reconverge: until then packets hashed or pointed onto the link are
// lost, as in a real fabric before BGP converges.
func (l *Lab) SetLinkUp(link *topology.Link, up bool) error {
	switch l.Config.DataPlane {
	case DataPlaneKernel, DataPlaneNone:
		if l.SetCable == nil {
			return fmt.Errorf("link %s: the %s data plane fails links at their interfaces, and this lab gave no way to", link.Name, l.Config.DataPlane)
		}
		return l.SetCable(link, up)
	}
	for _, side := range []topology.Side{topology.SideA, topology.SideB} {
		ep := link.End(side)
		n, _ := l.Topo.Node(ep.Node)
		if !n.Role.IsSwitch() {
			continue
		}
		if err := l.withSwitch(n.Name, func(sw *bpf.Switch) error { return sw.SetPortUp(ep.Port, up) }); err != nil {
			return fmt.Errorf("link %s: %w", link.Name, err)
		}
	}
	return nil
}

// SetCorruption sets the random loss probability of one direction of a
// link, applied at the receiving switch's ingress, before any queue. The
// direction is named by its sending end. Links into hosts cannot be
// corrupted (hosts run no data plane).
func (l *Lab) SetCorruption(link *topology.Link, from topology.Side, p float64) error {
	if l.Config.DataPlane != DataPlaneBPF {
		return fmt.Errorf("corruption needs the eBPF data plane (this lab runs %s)", l.Config.DataPlane)
	}
	rx := link.End(1 - from)
	n, _ := l.Topo.Node(rx.Node)
	if !n.Role.IsSwitch() {
		return fmt.Errorf("link %s: %s is a host; corruption is applied at a switch's ingress", link.Name, rx.Node)
	}
	return l.withSwitch(n.Name, func(sw *bpf.Switch) error { return sw.SetCorruption(rx.Port, p) })
}

// Reconverge reprograms every switch for a new set of failed links, from
// the routes of the previous set.
func (l *Lab) Reconverge(ctx context.Context, previous, failed map[int]bool) error {
	tables, err := routing.Compute(l.Topo, failed)
	if err != nil {
		return err
	}
	switch l.Config.DataPlane {
	case DataPlaneNone:
		return nil
	case DataPlaneKernel:
		return kernelfwd.Program(ctx, l.Topo, tables, l.Namespace)
	}
	old, err := routing.Compute(l.Topo, previous)
	if err != nil {
		return err
	}
	return l.withPlane(func(switchOf func(string) *bpf.Switch) error {
		for _, sw := range l.Topo.Switches() {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := writeRoutes(switchOf(sw.Name), tables[sw.Name], old[sw.Name]); err != nil {
				return fmt.Errorf("reconverge %s: %w", sw.Name, err)
			}
		}
		return nil
	})
}

// withSwitch opens a switch of the lab's pinned plane inside its
// namespace.
func (l *Lab) withSwitch(name string, fn func(*bpf.Switch) error) error {
	return nsutil.DoNamed(l.Namespace(name), func() error {
		sw, err := OpenSwitch(l.Topo, l.PinRoot, name)
		if err != nil {
			return err
		}
		defer sw.Close()
		return fn(sw)
	})
}

// withPlane opens the lab's pinned plane, for work on many switches that
// needs none of their namespaces (map writes and reads). fn gets each
// switch by name.
func (l *Lab) withPlane(fn func(sw func(name string) *bpf.Switch) error) error {
	p, err := bpf.OpenPlane(PlaneDir(l.PinRoot))
	if err != nil {
		return err
	}
	defer p.Close()
	index := switchIndexes(l.Topo)
	return fn(func(name string) *bpf.Switch { return p.Switch(index[name]) })
}

// FailedSet turns a list of link IDs into a set.
func FailedSet(ids []int) map[int]bool {
	m := make(map[int]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// FailedList turns a set of link IDs into a sorted list.
func FailedList(m map[int]bool) []int {
	var ids []int
	for id, down := range m {
		if down {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// SetRate changes the rate of one direction of a link, named by its
// sending end, as a degraded link would (shaped mode): the sender's link
// model (a switch) and its HTB tree (switch or host) serve at bps from now
// on. Zero restores the topology's rate.
func (l *Lab) SetRate(link *topology.Link, from topology.Side, bps uint64) error {
	if l.Config.DataPlane != DataPlaneBPF || l.Config.Mode != ModeShaped {
		return fmt.Errorf("changing a link's rate needs the eBPF data plane in shaped mode")
	}
	params, mtu := egress(l.Topo, topology.PortRef{Link: link.ID, Side: from})
	if bps == 0 {
		bps = params.RateBps
	}
	ep := link.End(from)
	n, _ := l.Topo.Node(ep.Node)
	shape := func() error {
		h, err := netlink.NewHandle()
		if err != nil {
			return err
		}
		defer h.Close()
		nl, err := h.LinkByName(ep.Ifname)
		if err != nil {
			return err
		}
		return shaping.SetRate(h, nl, shaping.Link{RateBps: bps, BufferBytes: params.BufferBytes, MTU: mtu})
	}
	if !n.Role.IsSwitch() {
		return nsutil.DoNamed(l.Namespace(n.Name), shape)
	}
	return l.withSwitch(n.Name, func(sw *bpf.Switch) error {
		if err := sw.SetPortRate(ep.Port, bps); err != nil {
			return err
		}
		return shape()
	})
}
