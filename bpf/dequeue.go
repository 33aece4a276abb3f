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
	mu     sync.Mutex
	objs   qdiscMonitorObjects
	tp     link.Link
	closed bool
}

// StartDequeueMonitor loads qdisc_monitor, sized for up to ports watched
// ports (0: MAX_WATCHED_PORTS), and attaches it to the qdisc_dequeue raw
// tracepoint. Close detaches it.
func StartDequeueMonitor(ports int) (*DequeueMonitor, error) {
	spec, err := loadQdiscMonitor()
	if err != nil {
		return nil, fmt.Errorf("bpf: qdisc monitor: %w", err)
	}
	if ports > 0 {
		spec.Maps["dq_ports"].MaxEntries = uint32(ports)
	}
	m := &DequeueMonitor{}
	if err := spec.LoadAndAssign(&m.objs, nil); err != nil {
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
