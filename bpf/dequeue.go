package bpf

import (
	"errors"
	"fmt"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// DequeueStats is what the dequeue monitor measured of one port's real
// egress queue (its HTB qdisc) in shaped mode. A busy gap runs from a
// dequeue that left packets queued to the next dequeue: the time the link
// took to serialize the earlier packet, whose bytes BusyBytes sums.
type DequeueStats struct {
	Dequeues  uint64 `json:"dequeues"`
	Bytes     uint64 `json:"bytes"` // Ethernet frames
	BusyGaps  uint64 `json:"busy_gaps"`
	BusyNs    uint64 `json:"busy_ns"`
	BusyBytes uint64 `json:"busy_bytes"`
}

// BusyRateBps is the rate the link achieved while it had packets queued;
// 0 without busy gaps.
func (d DequeueStats) BusyRateBps() float64 {
	if d.BusyNs == 0 {
		return 0
	}
	return float64(d.BusyBytes) * 8 / (float64(d.BusyNs) / 1e9)
}

// DequeueMonitor watches the dequeues of every qdisc in the machine for
// packets stamped with a watched port's mark (PortConfig.Mark) and keeps
// DequeueStats per mark. It is the measuring half of shaped mode's
// fidelity check: the switch programs do not need it.
type DequeueMonitor struct {
	mu         sync.Mutex
	objs       qdiscMonitorObjects
	tp         link.Link
	closed     bool
	planeRealq bool // objs.Realq is a plane's map (StartDequeueMonitor)
}

// StartDequeueMonitor loads qdisc_monitor, sized for up to ports watched
// ports (0: MAX_WATCHED_PORTS), and attaches it to the qdisc_dequeue raw
// tracepoint. Close detaches it.
//
// With a plane (nil: none), the monitor also counts the dequeues of the
// ports WatchPort names into the plane's real-queue map, from which the
// plane's link model learns how much its real queues hold (c/realq.h): a
// machine that serves a link slower than its rate then drops at the
// configured buffer instead of letting the real queue outgrow it.
func StartDequeueMonitor(ports int, plane *Plane) (*DequeueMonitor, error) {
	spec, err := loadQdiscMonitor()
	if err != nil {
		return nil, fmt.Errorf("bpf: qdisc monitor: %w", err)
	}
	if ports > 0 {
		spec.Maps["dq_ports"].MaxEntries = uint32(ports)
	}
	var opts *ebpf.CollectionOptions
	if plane != nil && plane.maps.Realq != nil {
		// The monitor's own definition of realq must match the
		// plane's map, sized with the plane.
		spec.Maps[qdiscMonitorMapRealq].MaxEntries = plane.maps.Realq.MaxEntries()
		opts = &ebpf.CollectionOptions{MapReplacements: map[string]*ebpf.Map{qdiscMonitorMapRealq: plane.maps.Realq}}
	}
	m := &DequeueMonitor{planeRealq: opts != nil}
	if err := spec.LoadAndAssign(&m.objs, opts); err != nil {
		return nil, loadError("qdisc_dequeue", err)
	}
	m.tp, err = link.AttachRawTracepoint(link.RawTracepointOptions{Name: "qdisc_dequeue", Program: m.objs.QdiscDequeue})
	if err != nil {
		m.objs.Close()
		if errors.Is(err, ebpf.ErrNotSupported) {
			return nil, fmt.Errorf("bpf: qdisc monitor: this kernel cannot attach raw tracepoints: %w", err)
		}
		return nil, fmt.Errorf("bpf: qdisc monitor: attach to qdisc_dequeue: %w", err)
	}
	return m, nil
}

// Watch starts counting the dequeues of packets marked mark, from zero.
func (m *DequeueMonitor) Watch(mark uint32) error {
	if mark == 0 {
		return errors.New("bpf: qdisc monitor: mark 0 marks nothing")
	}
	if err := m.objs.DqPorts.Put(mark, qdiscMonitorDqStats{}); err != nil {
		return fmt.Errorf("bpf: qdisc monitor: watch mark %#x: %w", mark, err)
	}
	return nil
}

// WatchPort is Watch for the packets of a switch port of the monitor's
// plane (planePort: Switch.PlanePort): at each of their dequeues it also
// snapshots the port's qdisc backlog into the plane's real-queue entry,
// so the port's link model sees the real queue (c/realq.h). A monitor
// started without a plane's real-queue map (none given, or a plane pinned
// by an older ftlab) only watches, as Watch.
func (m *DequeueMonitor) WatchPort(mark, planePort uint32) error {
	if mark == 0 {
		return errors.New("bpf: qdisc monitor: mark 0 marks nothing")
	}
	if !m.planeRealq {
		return m.Watch(mark)
	}
	if planePort >= m.objs.Realq.MaxEntries() {
		return fmt.Errorf("bpf: qdisc monitor: plane port %d: the plane has %d", planePort, m.objs.Realq.MaxEntries())
	}
	if err := m.objs.DqPorts.Put(mark, qdiscMonitorDqStats{RqPort: planePort + 1}); err != nil {
		return fmt.Errorf("bpf: qdisc monitor: watch mark %#x: %w", mark, err)
	}
	return nil
}

// Stats returns what was measured for mark since Watch.
func (m *DequeueMonitor) Stats(mark uint32) (DequeueStats, error) {
	var v qdiscMonitorDqStats
	if err := m.objs.DqPorts.Lookup(mark, &v); err != nil {
		return DequeueStats{}, fmt.Errorf("bpf: qdisc monitor: mark %#x: %w", mark, err)
	}
	return DequeueStats{Dequeues: v.Dequeues, Bytes: v.Bytes, BusyGaps: v.BusyGaps, BusyNs: v.BusyNs, BusyBytes: v.BusyBytes}, nil
}

// Close detaches and unloads the monitor. Safe to call more than once.
func (m *DequeueMonitor) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	return errors.Join(m.tp.Close(), m.objs.Close())
}
