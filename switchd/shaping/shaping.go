// Package shaping gives a port the egress side of an emulated link: an HTB
// qdisc that serves at the link's rate, so packets really wait.
//
// There is no netem or fq on ftlab's kernels (KERNEL-NOTES): the only
// rate-limiting qdiscs are htb and tbf. HTB is used because it can also give
// trimmed packet headers (NDP-style trimming) priority over data:
//
//	1:    htb, default class 1:20
//	1:1   the link: rate = ceil = link rate
//	1:10  high priority (trimmed headers): prio 0, may use the whole link
//	1:20  data (everything else): prio 1, may use the whole link
//
// The data plane selects 1:10 by setting skb->priority to HighPriority.
// Drops are the data plane's job: its virtual FIFO tail-drops at the
// configured buffer, so the leaf queues here are made deep enough (through
// the device's transmit queue length, which sizes HTB's default pfifo
// leaves) never to drop first. A drop here is a fidelity problem, and is
// reported by Stats.
package shaping

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Handles of the qdisc and its classes.
const (
	rootHandle  = 0x10000 // 1:
	linkClass   = 0x10001 // 1:1
	highClass   = 0x10010 // 1:10
	dataClass   = 0x10020 // 1:20
	defaultLeaf = 0x20    // minor of dataClass
)

// HighPriority is the skb->priority that puts a packet in the high-priority
// class (TC_H_MAKE(1, 0x10)).
const HighPriority = highClass

// minFrame is the smallest frame a leaf queue is sized for.
const minFrame = 64

// Link is one direction of an emulated link, seen from its sending port.
type Link struct {
	RateBps     uint64 // serialization rate, bits per second
	BufferBytes uint64 // the data plane's buffer; leaves are deeper than this
	MTU         int
}

// LeafQueueLen is the transmit queue length that makes HTB's pfifo leaves
// hold twice the buffer in minimum-size frames.
func LeafQueueLen(l Link) int {
	n := int(2 * l.BufferBytes / minFrame)
	return max(n, 1000)
}

// Install makes the HTB tree at the link's rate the root qdisc of link,
// replacing whatever root qdisc it had; over a tree of its own it only
// sets the rates. It acts in the namespace of the handle, in four
// netlink requests on a fresh port (five if the transmit queue must grow):
// each takes the RTNL lock, and on an up interface a root qdisc change
// also waits for a grace period, so build on down ports where possible.
func Install(h *netlink.Handle, link netlink.Link, l Link) error {
	if l.RateBps == 0 {
		return errors.New("shaping: rate must be positive")
	}
	name := link.Attrs().Name
	if err := setTxQLen(h, link, l); err != nil {
		return err
	}
	idx := link.Attrs().Index
	q := netlink.NewHtb(netlink.QdiscAttrs{LinkIndex: idx, Handle: rootHandle, Parent: netlink.HANDLE_ROOT})
	q.Defcls = defaultLeaf
	err := h.QdiscAdd(q)
	if errors.Is(err, unix.EEXIST) {
		// A root qdisc is there already: ours (keep it, set its
		// rates) or another one (replace it: HTB cannot change into
		// a tree in place).
		if st, rerr := Read(h, link); rerr == nil && st.Installed {
			return writeClasses(h, link, l, h.ClassReplace)
		}
		if err = Remove(h, link); err == nil {
			err = h.QdiscAdd(q)
		}
	}
	if err != nil {
		return fmt.Errorf("shaping %s: add htb: %w", name, err)
	}
	return writeClasses(h, link, l, h.ClassAdd)
}

// Renew gives link the tree of l for a new experiment on a port that may
// be shaped already, st being its root qdisc's statistics (Read, ReadAll).
// A tree of ours with nothing queued and nothing dropped (what results
// read of it) is kept, its rates and queue length set where they differ
// from l's (a degraded-link fault leaves them changed); any other root
// qdisc is replaced by a new tree. Making a tree anew replaces the root
// qdisc twice, each a grace period on an up interface, and a k=8 fabric
// has 768 ports; keeping it costs one class dump.
func Renew(h *netlink.Handle, link netlink.Link, l Link, st Stats) error {
	if l.RateBps == 0 {
		return errors.New("shaping: rate must be positive")
	}
	if st.Installed && st.Drops == 0 && st.BacklogPkts == 0 {
		if err := setTxQLen(h, link, l); err != nil {
			return err
		}
		same, err := classesAre(h, link, l)
		if err != nil || same {
			return err
		}
		return writeClasses(h, link, l, h.ClassReplace)
	}
	if err := Remove(h, link); err != nil {
		return err
	}
	return Install(h, link, l)
}

// classesAre reports whether the tree's three classes have l's rates and
// bursts.
func classesAre(h *netlink.Handle, link netlink.Link, l Link) (bool, error) {
	cs, err := h.ClassList(link, netlink.HANDLE_NONE)
	if err != nil {
		return false, fmt.Errorf("shaping %s: list classes: %w", link.Attrs().Name, err)
	}
	want := map[uint32]bool{linkClass: true, highClass: true, dataClass: true}
	for _, c := range cs {
		htb, ok := c.(*netlink.HtbClass)
		if !ok || !want[htb.Handle] {
			continue
		}
		if htb.Rate != l.RateBps/8 || htb.Ceil != l.RateBps/8 {
			return false, nil
		}
		delete(want, htb.Handle)
	}
	return len(want) == 0, nil
}

// setTxQLen gives link the transmit queue length l's leaves need, if it
// has another.
func setTxQLen(h *netlink.Handle, link netlink.Link, l Link) error {
	if want := LeafQueueLen(l); link.Attrs().TxQLen != want {
		if err := h.LinkSetTxQLen(link, want); err != nil {
			return fmt.Errorf("shaping %s: set txqueuelen: %w", link.Attrs().Name, err)
		}
	}
	return nil
}

// SetRate changes the rate of an installed tree in place, as a degraded
// link would: the packets already queued stay queued.
func SetRate(h *netlink.Handle, link netlink.Link, l Link) error {
	if l.RateBps == 0 {
		return errors.New("shaping: rate must be positive")
	}
	return writeClasses(h, link, l, h.ClassChange)
}

// writeClasses adds or changes the three classes of the tree.
func writeClasses(h *netlink.Handle, link netlink.Link, l Link, write func(netlink.Class) error) error {
	name, idx := link.Attrs().Name, link.Attrs().Index
	// The burst is what HTB may send at once to catch up when its timer
	// fires late. At two MTUs a busy CPU's late timers lose service for
	// good (measured: 70-80% of the rate at 200 Mbit/s under load); a
	// millisecond's worth of bytes lets it make up the delay (99.5%+)
	// while still pacing within a millisecond.
	burst := uint32(max(2*uint64(l.MTU), l.RateBps/8/1000))
	classes := []struct {
		handle, parent uint32
		prio           uint32
	}{
		{linkClass, rootHandle, 0},
		{highClass, linkClass, 0},
		{dataClass, linkClass, 1},
	}
	for _, c := range classes {
		cl := netlink.NewHtbClass(
			netlink.ClassAttrs{LinkIndex: idx, Handle: c.handle, Parent: c.parent},
			netlink.HtbClassAttrs{Rate: l.RateBps, Ceil: l.RateBps, Buffer: burst, Cbuffer: burst, Prio: c.prio},
		)
		if err := write(cl); err != nil {
			return fmt.Errorf("shaping %s: class %x:%x: %w", name, c.handle>>16, c.handle&0xffff, err)
		}
	}
	return nil
}

// Remove deletes the shaping qdisc of link, if any.
func Remove(h *netlink.Handle, link netlink.Link) error {
	q := &netlink.GenericQdisc{QdiscAttrs: netlink.QdiscAttrs{LinkIndex: link.Attrs().Index, Handle: rootHandle, Parent: netlink.HANDLE_ROOT}, QdiscType: "htb"}
	if err := h.QdiscDel(q); err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("shaping %s: remove: %w", link.Attrs().Name, err)
	}
	return nil
}

// Stats are the qdisc's own counters for a port.
type Stats struct {
	Installed    bool   `json:"installed"`
	SentBytes    uint64 `json:"sent_bytes"`
	SentPackets  uint32 `json:"sent_packets"`
	Drops        uint32 `json:"drops"` // drops in the qdisc: should stay 0
	Overlimits   uint32 `json:"overlimits"`
	BacklogBytes uint32 `json:"backlog_bytes"`
	BacklogPkts  uint32 `json:"backlog_packets"`
}

// Read returns the root qdisc's counters for link.
func Read(h *netlink.Handle, link netlink.Link) (Stats, error) {
	qs, err := h.QdiscList(link)
	if err != nil {
		return Stats{}, fmt.Errorf("shaping %s: list qdiscs: %w", link.Attrs().Name, err)
	}
	return ofRoots(qs)[link.Attrs().Index], nil
}

// ReadAll returns the counters of every shaped port in the handle's
// namespace, by ifindex, from one dump. Ports without a tree are absent.
func ReadAll(h *netlink.Handle) (map[int]Stats, error) {
	qs, err := h.QdiscList(nil)
	if err != nil {
		return nil, fmt.Errorf("shaping: list qdiscs: %w", err)
	}
	return ofRoots(qs), nil
}

// ofRoots picks the HTB roots of a qdisc list, by ifindex.
func ofRoots(qs []netlink.Qdisc) map[int]Stats {
	out := map[int]Stats{}
	for _, q := range qs {
		a := q.Attrs()
		if a.Handle != rootHandle || a.Parent != netlink.HANDLE_ROOT || q.Type() != "htb" || a.Statistics == nil {
			continue
		}
		s := a.Statistics
		out[a.LinkIndex] = Stats{
			Installed: true, SentBytes: s.Basic.Bytes, SentPackets: s.Basic.Packets,
			Drops: s.Queue.Drops, Overlimits: s.Queue.Overlimits,
			BacklogBytes: s.Queue.Backlog, BacklogPkts: s.Queue.Qlen,
		}
	}
	return out
}
