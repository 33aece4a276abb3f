package bpf

import (
	"fmt"
	"math"
	"net"
	"time"
)

// PortConfig is one switch port.
type PortConfig struct {
	Ifindex int              // the port's veth in the switch namespace
	MAC     net.HardwareAddr // own MAC: source of frames sent on the port
	PeerMAC net.HardwareAddr // the neighbour's MAC: destination of those frames
	Up      bool             // false: the link failed, drop everything in and out
	// CorruptProb is the probability in [0, 1] that a frame arriving on
	// the port is lost to corruption.
	CorruptProb float64
	RateBps     uint64 // link model rate in bits/s (shaped mode); 0 = no model
	BufferBytes uint64 // link model buffer (egress queue capacity)
	ECNBytes    uint64 // CE-mark ECT packets above this backlog; 0 = off
	Uplink      int    // uplink index of this port, or -1 for a downlink
	// Mark is the skb mark stamped on packets queued for the port in
	// shaped mode, so a DequeueMonitor can tell the port's dequeues from
	// every other qdisc's; 0 stamps nothing.
	Mark uint32
	// Delay and Jitter are the propagation delay and jitter bound of the
	// link direction arriving at the port, which the switch adds to the
	// agents' packets (c/delay.h; needs Config.AgentPort). Both up to
	// MaxPortDelay.
	Delay, Jitter time.Duration
}

// MaxPortDelay is the largest delay or jitter a port adds: what a 32-bit
// nanosecond word can hold.
const MaxPortDelay = time.Duration(math.MaxUint32)

func (s *Switch) checkPort(port int) error {
	if port < 0 || port >= s.opts.MaxPorts {
		return fmt.Errorf("bpf: port %d out of range (0..%d)", port, s.opts.MaxPorts-1)
	}
	return nil
}

// corruptThreshold maps a probability to the u32 threshold and the
// "always" flag used by the PHY stage (drop if prandom32 < thr).
func corruptThreshold(p float64) (thr uint32, all uint8, err error) {
	switch {
	case math.IsNaN(p) || p < 0 || p > 1:
		return 0, 0, fmt.Errorf("corruption probability %v not in [0, 1]", p)
	case p == 1:
		return math.MaxUint32, 1, nil
	}
	return uint32(p * (1 << 32)), 0, nil
}

func macBytes(dst *[6]uint8, mac net.HardwareAddr, what string) error {
	if len(mac) == 0 {
		*dst = [6]uint8{}
		return nil
	}
	if len(mac) != 6 {
		return fmt.Errorf("%s %s is not a 48-bit MAC", what, mac)
	}
	copy(dst[:], mac)
	return nil
}

// SetPort writes a port's configuration, its ifindex->port entry (used to
// find the ingress port), its DEVMAP entry (resolved in the calling
// thread's namespace) and, for an uplink, uplinks[Uplink] = port (the
// uplink count grows to cover it).
func (s *Switch) SetPort(port int, pc PortConfig) error {
	if err := s.checkPort(port); err != nil {
		return err
	}
	if pc.Ifindex <= 0 {
		return fmt.Errorf("bpf: port %d: invalid ifindex %d", port, pc.Ifindex)
	}
	if pc.Uplink < -1 || pc.Uplink >= MaxUplinks {
		return fmt.Errorf("bpf: port %d: uplink index %d out of range (-1..%d)", port, pc.Uplink, MaxUplinks-1)
	}
	for _, d := range []time.Duration{pc.Delay, pc.Jitter} {
		if d < 0 || d > MaxPortDelay {
			return fmt.Errorf("bpf: port %d: delay or jitter %v outside 0..%v", port, d, MaxPortDelay)
		}
	}
	v := xdpIngressPortCfg{
		Ifindex:     uint32(pc.Ifindex),
		Configured:  1,
		Uplink:      int32(pc.Uplink),
		RateBps:     pc.RateBps,
		BufferBytes: pc.BufferBytes,
		EcnBytes:    pc.ECNBytes,
		HistWidth:   max(1, pc.BufferBytes/HistBuckets),
		Mark:        pc.Mark,
		DelayNs:     uint32(pc.Delay),
		JitterNs:    uint32(pc.Jitter),
	}
	if pc.Up {
		v.AdminUp = 1
	}
	if pc.RateBps > 0 {
		v.deriveFromRate()
	}
	var err error
	if v.CorruptThr, v.CorruptAll, err = corruptThreshold(pc.CorruptProb); err != nil {
		return fmt.Errorf("bpf: port %d: %w", port, err)
	}
	if err := macBytes(&v.Mac, pc.MAC, "MAC"); err != nil {
		return fmt.Errorf("bpf: port %d: %w", port, err)
	}
	if err := macBytes(&v.PeerMac, pc.PeerMAC, "peer MAC"); err != nil {
		return fmt.Errorf("bpf: port %d: %w", port, err)
	}

	v.Sw = uint32(s.id)

	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	pp := s.pp(port)
	// The ifindex names the port to the programs: it must not be another
	// switch's (a plane spans namespaces, ifindexes are per namespace).
	var owner uint32
	if err := s.maps.If2port.Lookup(uint32(pc.Ifindex), &owner); err == nil && !s.hasPP(owner) {
		return fmt.Errorf("bpf: port %d: ifindex %d is already a port of another switch of the plane (plane port %d): a plane's ports need distinct ifindexes", port, pc.Ifindex, owner)
	}
	var old xdpIngressPortCfg
	if err := s.maps.Ports.Lookup(pp, &old); err != nil {
		return fmt.Errorf("bpf: port %d: read config: %w", port, err)
	}
	if err := s.maps.TxPorts.Put(pp, uint32(pc.Ifindex)); err != nil {
		return fmt.Errorf("bpf: port %d: DEVMAP entry for ifindex %d (is it in this thread's namespace?): %w", port, pc.Ifindex, err)
	}
	if err := s.maps.Ports.Put(pp, &v); err != nil {
		return fmt.Errorf("bpf: port %d: write config: %w", port, err)
	}
	if old.Configured != 0 && old.Ifindex != uint32(pc.Ifindex) {
		// Forget the port's previous ifindex, if it still names it.
		if err := s.maps.If2port.Lookup(old.Ifindex, &owner); err == nil && owner == pp {
			if err := s.maps.If2port.Delete(old.Ifindex); err != nil {
				return fmt.Errorf("bpf: port %d: forget ifindex %d: %w", port, old.Ifindex, err)
			}
		}
	}
	if err := s.maps.If2port.Put(uint32(pc.Ifindex), pp); err != nil {
		return fmt.Errorf("bpf: port %d: map ifindex %d: %w", port, pc.Ifindex, err)
	}
	if pc.Uplink >= 0 {
		if err := s.maps.Uplinks.Put(s.uplinkKey(pc.Uplink), uint32(port)); err != nil {
			return fmt.Errorf("bpf: port %d: uplink %d: %w", port, pc.Uplink, err)
		}
		if n := uint32(pc.Uplink) + 1; n > s.cfg.N_uplinks {
			s.cfg.N_uplinks = n
			return s.writeCfg()
		}
	}
	return nil
}

// hasPP reports whether plane port pp is one of the switch's.
func (s *Switch) hasPP(pp uint32) bool {
	return pp >= s.cfg.PortBase && pp-s.cfg.PortBase < s.cfg.N_ports
}

// uplinkKey is the uplinks map key of the switch's uplink u.
func (s *Switch) uplinkKey(u int) uint32 { return uint32(s.id*MaxUplinks + u) }

// portIfindex is the ifindex a configured port was given (0 if none).
func (s *Switch) portIfindex(port int) (uint32, error) {
	if err := s.checkPort(port); err != nil {
		return 0, err
	}
	var v xdpIngressPortCfg
	if err := s.maps.Ports.Lookup(s.pp(port), &v); err != nil {
		return 0, fmt.Errorf("bpf: port %d: read config: %w", port, err)
	}
	return v.Ifindex, nil
}

// updatePort applies f to a port's stored configuration.
func (s *Switch) updatePort(port int, f func(*xdpIngressPortCfg)) error {
	if err := s.checkPort(port); err != nil {
		return err
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	var v xdpIngressPortCfg
	if err := s.maps.Ports.Lookup(s.pp(port), &v); err != nil {
		return fmt.Errorf("bpf: port %d: read config: %w", port, err)
	}
	if v.Configured == 0 {
		return fmt.Errorf("bpf: port %d is not configured", port)
	}
	f(&v)
	if err := s.maps.Ports.Put(s.pp(port), &v); err != nil {
		return fmt.Errorf("bpf: port %d: write config: %w", port, err)
	}
	return nil
}

// SetPortUp sets a configured port's admin state (false: link failed).
func (s *Switch) SetPortUp(port int, up bool) error {
	return s.updatePort(port, func(v *xdpIngressPortCfg) {
		v.AdminUp = 0
		if up {
			v.AdminUp = 1
		}
	})
}

// SetCorruption sets a configured port's ingress corruption probability.
func (s *Switch) SetCorruption(port int, p float64) error {
	thr, all, err := corruptThreshold(p)
	if err != nil {
		return fmt.Errorf("bpf: port %d: %w", port, err)
	}
	return s.updatePort(port, func(v *xdpIngressPortCfg) { v.CorruptThr, v.CorruptAll = thr, all })
}

// SetPortRate changes a configured port's link model rate (bits/s), as a
// degraded link would: queued bytes drain at the new rate from now on.
func (s *Switch) SetPortRate(port int, bps uint64) error {
	if bps == 0 {
		return fmt.Errorf("bpf: port %d: rate must be positive", port)
	}
	return s.updatePort(port, func(v *xdpIngressPortCfg) {
		v.RateBps = bps
		v.deriveFromRate()
	})
}

// Real-queue snapshot staleness (c/realq.h): a backlogged qdisc dequeues
// at least once per frame time, so a snapshot older than a few jumbo
// frame times at the port's rate, plus a wake-up allowance, is a
// monitor's that stopped.
const (
	realqMinStale    = 20 * time.Millisecond // longer than any wake-up delay of a sane machine
	realqStaleFrames = 4
	realqMaxFrame    = 9018 // jumbo Ethernet frame, bytes
)

// deriveFromRate sets the fields the programs derive from a positive
// RateBps: the overflow clamp and the real-queue staleness bound.
func (v *xdpIngressPortCfg) deriveFromRate() {
	v.MaxDelayNs = math.MaxUint64 / v.RateBps
	v.RealqStaleNs = uint64(realqMinStale) + realqStaleFrames*realqMaxFrame*8*1_000_000_000/v.RateBps
}

// Port reads a port's configuration back as SetPort and the updates after
// it left it; CorruptProb is the threshold's probability (exact for 0 and
// 1). A port never configured reads as the zero PortConfig.
func (s *Switch) Port(port int) (PortConfig, error) {
	if err := s.checkPort(port); err != nil {
		return PortConfig{}, err
	}
	if err := s.lock(); err != nil {
		return PortConfig{}, err
	}
	defer s.mu.Unlock()
	var v xdpIngressPortCfg
	if err := s.maps.Ports.Lookup(s.pp(port), &v); err != nil {
		return PortConfig{}, fmt.Errorf("bpf: port %d: read config: %w", port, err)
	}
	if v.Configured == 0 {
		return PortConfig{}, nil
	}
	pc := PortConfig{
		Ifindex: int(v.Ifindex), MAC: net.HardwareAddr(v.Mac[:]), PeerMAC: net.HardwareAddr(v.PeerMac[:]),
		Up: v.AdminUp != 0, RateBps: v.RateBps, BufferBytes: v.BufferBytes, ECNBytes: v.EcnBytes,
		Uplink: int(v.Uplink), Mark: v.Mark, CorruptProb: float64(v.CorruptThr) / (1 << 32),
	}
	if v.CorruptAll != 0 {
		pc.CorruptProb = 1
	}
	return pc, nil
}
