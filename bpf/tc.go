package bpf

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// tc_shaped's place on a port: a direct-action cls_bpf filter on the
// interface's ingress qdisc, with a fixed priority and handle so that
// Detach (or a reinstall, which replaces it) finds it again. The ingress
// qdisc rather than clsact: every filter block a qdisc or class creates
// costs a search of a list of all the machine's blocks (the kernel's
// flow_indr_dev_setup_offload, under a global mutex), and clsact has two.
const (
	tcFilterPrio   = 1
	tcFilterHandle = 1
	tcFilterName   = "ftlab_tc_shaped"
)

var ingressHandle = netlink.MakeHandle(0xffff, 0)

// tcFilter is tc_shaped attached to one interface. ns is the namespace it
// is in, held while the plane records the filter (unpinned); a closed ns
// means the calling thread's namespace.
type tcFilter struct {
	ifindex int
	ns      netns.NsHandle
}

func ingressQdisc(ifindex int) *netlink.Ingress {
	return &netlink.Ingress{QdiscAttrs: netlink.QdiscAttrs{LinkIndex: ifindex, Handle: ingressHandle, Parent: netlink.HANDLE_INGRESS}}
}

func shapedFilter(ifindex, fd int) *netlink.BpfFilter {
	return &netlink.BpfFilter{
		FilterAttrs: netlink.FilterAttrs{LinkIndex: ifindex, Parent: ingressHandle,
			Handle: tcFilterHandle, Protocol: unix.ETH_P_ALL, Priority: tcFilterPrio},
		Fd: fd, Name: tcFilterName, DirectAction: true,
	}
}

// attachTCFilter attaches prog to the interface in the calling thread's
// namespace, replacing a filter of ours already there (a plane installed
// again over an old one).
func attachTCFilter(ifindex int, prog *ebpf.Program) (*tcFilter, error) {
	h, err := netlink.NewHandle()
	if err != nil {
		return nil, err
	}
	defer h.Close()
	if err := h.QdiscAdd(ingressQdisc(ifindex)); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, fmt.Errorf("add ingress qdisc: %w", err)
	}
	if err := h.FilterReplace(shapedFilter(ifindex, prog.FD())); err != nil {
		return nil, fmt.Errorf("add cls_bpf filter: %w", err)
	}
	ns, err := netns.Get()
	if err != nil {
		return nil, errors.Join(fmt.Errorf("current netns: %w", err), removeTCFilter(h, ifindex))
	}
	return &tcFilter{ifindex: ifindex, ns: ns}, nil
}

// tcFilterHere is the filter on an interface of the calling thread's
// namespace.
func tcFilterHere(ifindex int) *tcFilter { return &tcFilter{ifindex: ifindex, ns: netns.None()} }

// forget lets go of the namespace: the filter is recorded by a pin.
func (f *tcFilter) forget() {
	if f.ns.IsOpen() {
		f.ns.Close()
	}
	f.ns = netns.None()
}

// Close removes the filter.
func (f *tcFilter) Close() error {
	var h *netlink.Handle
	var err error
	if f.ns.IsOpen() {
		h, err = netlink.NewHandleAt(f.ns)
	} else {
		h, err = netlink.NewHandle()
	}
	f.forget()
	if err != nil {
		return err
	}
	defer h.Close()
	return removeTCFilter(h, f.ifindex)
}

// removeTCFilter deletes our filter from the interface, and its ingress
// qdisc once no filter is left on it. A filter already gone (with its
// interface) is not an error.
func removeTCFilter(h *netlink.Handle, ifindex int) error {
	gone := func(err error) bool {
		return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENODEV)
	}
	if err := h.FilterDel(shapedFilter(ifindex, 0)); err != nil && !gone(err) {
		return fmt.Errorf("delete cls_bpf filter: %w", err)
	}
	dev := &netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Index: ifindex}}
	fs, err := h.FilterList(dev, ingressHandle)
	if err != nil {
		if gone(err) {
			return nil
		}
		return fmt.Errorf("list filters: %w", err)
	}
	if len(fs) > 0 {
		return nil // someone else's filters: keep their qdisc
	}
	if err := h.QdiscDel(ingressQdisc(ifindex)); err != nil && !gone(err) {
		return fmt.Errorf("delete ingress qdisc: %w", err)
	}
	return nil
}
