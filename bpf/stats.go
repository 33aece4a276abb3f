package bpf

import (
	"fmt"
	"math"

	"github.com/cilium/ebpf"
)

// PortCounters are one port's counters, summed over CPUs. Ingress causes
// count on the ingress port, egress ones on the egress port.
type PortCounters struct {
	RxPackets, RxBytes uint64 // every frame that arrived (before any drop)
	TxPackets, TxBytes uint64 // forwarded out of this port

	DropCorrupt   uint64 // ingress: random corruption loss
	DropBuffer    uint64 // egress: link model buffer full (shaped)
	DropLinkDown  uint64 // port admin down (ingress, or egress to a failed port)
	DropNoRoute   uint64 // ingress: no route, or no valid uplink
	DropTTL       uint64 // ingress: TTL <= 1
	DropMalformed uint64 // ingress: truncated or inconsistent frame
	DropNonIPv4   uint64 // ingress: ARP, IPv6, VLAN, ...

	Trimmed    uint64 // egress: trimmed to headers instead of dropped
	CEMarked   uint64 // egress: CE set above the ECN threshold
	ToLocal    uint64 // ingress: passed to the switch's own stack
	ARFallback uint64 // ingress: ar in line-rate mode, random used instead
	// DelayUnstamped: ingress: an agents' packet on a port with a delay
	// whose header was out of reach, so it went on without the delay.
	DelayUnstamped uint64
}

// Drops is the sum of all drop counters.
func (c PortCounters) Drops() uint64 {
	return c.DropCorrupt + c.DropBuffer + c.DropLinkDown + c.DropNoRoute + c.DropTTL +
		c.DropMalformed + c.DropNonIPv4
}

// PortCounters reads a port's counters, summed over CPUs.
func (s *Switch) PortCounters(port int) (PortCounters, error) {
	if err := s.checkPort(port); err != nil {
		return PortCounters{}, err
	}
	if err := s.lock(); err != nil {
		return PortCounters{}, err
	}
	defer s.mu.Unlock()
	var per []xdpIngressPortCounters
	if err := s.maps.Counters.Lookup(s.pp(port), &per); err != nil {
		return PortCounters{}, fmt.Errorf("bpf: port %d counters: %w", port, err)
	}
	var c PortCounters
	for _, v := range per {
		c.RxPackets += v.RxPackets
		c.RxBytes += v.RxBytes
		c.TxPackets += v.TxPackets
		c.TxBytes += v.TxBytes
		c.DropCorrupt += v.DropCorrupt
		c.DropBuffer += v.DropBuffer
		c.DropLinkDown += v.DropLinkDown
		c.DropNoRoute += v.DropNoRoute
		c.DropTTL += v.DropTtl
		c.DropMalformed += v.DropMalformed
		c.DropNonIPv4 += v.DropNonIpv4
		c.Trimmed += v.Trimmed
		c.CEMarked += v.CeMarked
		c.ToLocal += v.ToLocal
		c.ARFallback += v.ArFallback
		c.DelayUnstamped += v.DelayUnstamped
	}
	return c, nil
}

// QueueStats are the link model statistics of one egress port (shaped
// mode). Times are CLOCK_MONOTONIC nanoseconds (bpf_ktime_get_ns).
type QueueStats struct {
	Packets, Bytes uint64 // accepted into the queue (trimmed packets at their trimmed size)
	MaxBacklog     uint64 // bytes, right after an enqueue
	FirstNs        uint64 // first arrival; 0 = none yet
	LastNs         uint64 // latest arrival
	NextDepartNs   uint64 // when the queue empties (t_next)
	LastBacklog    uint64 // bytes right after the latest arrival
	// BacklogByteNs is the time integral of the backlog in byte*ns from
	// FirstNs to LastNs.
	BacklogByteNs float64
	// Hist counts arrivals by the backlog they found: bucket i holds
	// backlogs in [i*BucketBytes, (i+1)*BucketBytes), the last one all
	// above.
	Hist        [HistBuckets]uint64
	BucketBytes uint64
	// LagDecided counts the arrivals dropped, trimmed or CE-marked
	// because the port's real queue (its qdisc, as the dequeue monitor's
	// snapshots reckon it) held more than the model's: what the machine's
	// lag decided, not the ideal link (c/realq.h).
	LagDecided uint64
}

// RealQueue is what the link model knows of a port's real egress queue
// (its qdisc, c/realq.h): the bytes tc_shaped handed it, and the
// dequeue monitor's latest snapshot of its backlog.
type RealQueue struct {
	EnqBytes    uint64 // handed to the qdisc (Ethernet frames)
	SnapEnq     uint64 // EnqBytes at the snapshot
	SnapBacklog uint64 // the qdisc's backlog right after the snapshot's dequeue
	SnapNs      uint64 // when (CLOCK_MONOTONIC); 0 = never
}

// Backlog is the real queue's bytes as the link model reckons it: the
// snapshot plus what was handed over since (0 without a snapshot;
// staleness aside).
func (r RealQueue) Backlog() uint64 {
	if r.SnapNs == 0 {
		return 0
	}
	return r.SnapBacklog + r.EnqBytes - min(r.SnapEnq, r.EnqBytes)
}

// RealQueue reads a port's real-queue counts. A plane pinned by an older
// ftlab has none: an error.
func (s *Switch) RealQueue(port int) (RealQueue, error) {
	if err := s.checkPort(port); err != nil {
		return RealQueue{}, err
	}
	if err := s.lock(); err != nil {
		return RealQueue{}, err
	}
	defer s.mu.Unlock()
	if s.maps.Realq == nil {
		return RealQueue{}, fmt.Errorf("bpf: port %d: this plane has no real-queue map (pinned by an older ftlab)", port)
	}
	var v xdpIngressRealQueue
	if err := s.maps.Realq.Lookup(s.pp(port), &v); err != nil {
		return RealQueue{}, fmt.Errorf("bpf: port %d real queue: %w", port, err)
	}
	return RealQueue{EnqBytes: v.EnqBytes, SnapEnq: v.SnapEnq, SnapBacklog: v.SnapBacklog, SnapNs: v.SnapNs}, nil
}

// MeanBacklog is the time-averaged backlog in bytes between the first and
// the latest arrival.
func (q QueueStats) MeanBacklog() float64 {
	if q.LastNs <= q.FirstNs {
		return 0
	}
	return q.BacklogByteNs / float64(q.LastNs-q.FirstNs)
}

// QueueStats reads a port's link model statistics (a consistent snapshot,
// taken under the FIFO's spin lock).
func (s *Switch) QueueStats(port int) (QueueStats, error) {
	if err := s.checkPort(port); err != nil {
		return QueueStats{}, err
	}
	if err := s.lock(); err != nil {
		return QueueStats{}, err
	}
	defer s.mu.Unlock()
	var f xdpIngressFifo
	if err := s.maps.Fifos.LookupWithFlags(s.pp(port), &f, ebpf.LookupLock); err != nil {
		return QueueStats{}, fmt.Errorf("bpf: port %d queue stats: %w", port, err)
	}
	var pc xdpIngressPortCfg
	if err := s.maps.Ports.Lookup(s.pp(port), &pc); err != nil {
		return QueueStats{}, fmt.Errorf("bpf: port %d config: %w", port, err)
	}
	return QueueStats{
		Packets: f.Packets, Bytes: f.Bytes, MaxBacklog: f.MaxBacklog,
		FirstNs: f.T_first, LastNs: f.T_last, NextDepartNs: f.T_next, LastBacklog: f.B_last,
		BacklogByteNs: float64(f.IntegHi)*math.Exp2(64) + float64(f.IntegLo),
		Hist:          f.Hist,
		BucketBytes:   pc.HistWidth,
		LagDecided:    f.LagDecided,
	}, nil
}

// ResetStats zeroes a port's counters and its link model state (the
// virtual queue is forgotten: call it while the port is idle).
func (s *Switch) ResetStats(port int) error {
	if err := s.checkPort(port); err != nil {
		return err
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	zero := make([]xdpIngressPortCounters, s.nCPU)
	if err := s.maps.Counters.Put(s.pp(port), zero); err != nil {
		return fmt.Errorf("bpf: port %d: reset counters: %w", port, err)
	}
	if err := s.maps.Fifos.Update(s.pp(port), &xdpIngressFifo{}, ebpf.UpdateLock); err != nil {
		return fmt.Errorf("bpf: port %d: reset queue: %w", port, err)
	}
	return nil
}
