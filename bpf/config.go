package bpf

import (
	"encoding/binary"
	"fmt"
	"math"
	"net/netip"
	"strings"
)

// Mode is how a switch forwards.
type Mode uint32

const (
	// ModeLineRate forwards in XDP with bpf_redirect_map: no qdisc, no queue.
	ModeLineRate Mode = Mode(xdpIngressFtlModeMODE_LINE_RATE)
	// ModeShaped forwards in TC through the egress qdisc, with the link model.
	ModeShaped Mode = Mode(xdpIngressFtlModeMODE_SHAPED)
)

var modeNames = map[Mode]string{ModeLineRate: "linerate", ModeShaped: "shaped"}

func (m Mode) String() string {
	if n, ok := modeNames[m]; ok {
		return n
	}
	return fmt.Sprintf("mode(%d)", uint32(m))
}

// ParseMode parses "linerate" (or "line-rate") or "shaped".
func ParseMode(s string) (Mode, error) {
	for m, n := range modeNames {
		if strings.EqualFold(strings.ReplaceAll(s, "-", ""), n) {
			return m, nil
		}
	}
	return 0, fmt.Errorf("bpf: unknown mode %q (valid: linerate, shaped)", s)
}

// Policy chooses among the valid uplinks of a group.
type Policy uint32

const (
	PolicyECMP   Policy = Policy(xdpIngressFtlPolicyPOLICY_ECMP)   // flow hash
	PolicyOfan   Policy = Policy(xdpIngressFtlPolicyPOLICY_OFAN)   // per-destination pointers
	PolicyPofan  Policy = Policy(xdpIngressFtlPolicyPOLICY_POFAN)  // ofan per ingress pipe
	PolicyRR     Policy = Policy(xdpIngressFtlPolicyPOLICY_RR)     // one pointer per switch
	PolicyRandom Policy = Policy(xdpIngressFtlPolicyPOLICY_RANDOM) // uniform random
	PolicyAR     Policy = Policy(xdpIngressFtlPolicyPOLICY_AR)     // least backlog (shaped)
)

var policyNames = []string{
	PolicyECMP: "ecmp", PolicyOfan: "ofan", PolicyPofan: "pofan",
	PolicyRR: "rr", PolicyRandom: "random", PolicyAR: "ar",
}

func (p Policy) String() string {
	if int(p) < len(policyNames) {
		return policyNames[p]
	}
	return fmt.Sprintf("policy(%d)", uint32(p))
}

// ParsePolicy parses a policy name: ecmp, ofan, pofan, rr, random, ar.
func ParsePolicy(s string) (Policy, error) {
	for p, n := range policyNames {
		if strings.EqualFold(s, n) {
			return Policy(p), nil
		}
	}
	return 0, fmt.Errorf("bpf: unknown policy %q (valid: %s)", s, strings.Join(policyNames, ", "))
}

// Config is the switch-wide configuration.
type Config struct {
	Mode   Mode
	Policy Policy
	Seed   uint32     // ecmp hash seed
	Addr   netip.Addr // the switch's identity address (IPv4); invalid = none
	// AckThreshold: packets whose IPv4 total length is at most this are
	// header-only (ACK class): their own ofan pointers, never trimmed, and
	// in the priority class when trimming is on.
	AckThreshold uint32
	PipeSize     uint32 // pofan: pipe = ingress port / PipeSize
	Pipes        uint32 // pofan: number of pipes (0 acts as 1); pipes beyond wrap modulo Pipes
	Trim         bool   // shaped: trim data packets instead of tail-dropping them
	ARQuantum    uint32 // ar: backlog quantum in bytes (0 acts as 1)
	// ProbeHeadroom (shaped) is the share of every port's buffer only
	// ftlab's header-only probes may use (Ordered Chaos IV-B4): other
	// packets are dropped once the backlog would pass the rest. 0 is off;
	// kept in millionths.
	ProbeHeadroom float64
	// AgentPort is the host agents' UDP port: the switch adds link delays
	// (PortConfig.Delay) to packets to it that carry ftlab's header. 0:
	// none are.
	AgentPort uint16
}

// MaxProbeHeadroom bounds Config.ProbeHeadroom: a headroom is a small
// reserve, not half the buffer.
const MaxProbeHeadroom = 0.5

// SetConfig writes the switch-wide configuration. The uplink count set by
// SetUplinks/SetPort is kept. ModeShaped needs tc_shaped (ProgTCShaped).
func (s *Switch) SetConfig(c Config) error {
	if c.Mode != ModeLineRate && c.Mode != ModeShaped {
		return fmt.Errorf("bpf: set config: invalid mode %d", c.Mode)
	}
	if int(c.Policy) >= len(policyNames) {
		return fmt.Errorf("bpf: set config: invalid policy %d", c.Policy)
	}
	var addr uint32
	if c.Addr.IsValid() {
		if !c.Addr.Is4() {
			return fmt.Errorf("bpf: set config: identity address %s is not IPv4", c.Addr)
		}
		addr = be32(c.Addr)
	}
	if c.Pipes == 0 {
		c.Pipes = 1
	}
	if !(c.ProbeHeadroom >= 0 && c.ProbeHeadroom <= MaxProbeHeadroom) {
		return fmt.Errorf("bpf: set config: probe headroom %v outside 0..%v", c.ProbeHeadroom, MaxProbeHeadroom)
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if c.Mode == ModeShaped && s.progs&ProgTCShaped == 0 {
		// xdp_ingress would pass every frame to a tc_shaped that is not there.
		return fmt.Errorf("bpf: set config: shaped mode forwards in tc_shaped: %w (Options.Programs = %s)", ErrNotLoaded, s.progs)
	}
	s.cfg.Mode = xdpIngressFtlMode(c.Mode)
	s.cfg.Policy = xdpIngressFtlPolicy(c.Policy)
	s.cfg.Seed = c.Seed
	s.cfg.Addr = addr
	s.cfg.AckThr = c.AckThreshold
	s.cfg.PipeSize = c.PipeSize
	s.cfg.N_pipes = c.Pipes
	s.cfg.Trim = 0
	if c.Trim {
		s.cfg.Trim = 1
	}
	s.cfg.ArQuantum = c.ARQuantum
	s.cfg.ProbePpm = uint32(math.Round(c.ProbeHeadroom * 1e6))
	s.cfg.AgentPort = uint32(c.AgentPort)
	return s.writeCfg()
}

// Config returns the configuration last written.
func (s *Switch) Config() Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := Config{
		Mode: Mode(s.cfg.Mode), Policy: Policy(s.cfg.Policy), Seed: s.cfg.Seed,
		AckThreshold: s.cfg.AckThr, PipeSize: s.cfg.PipeSize, Pipes: s.cfg.N_pipes,
		Trim: s.cfg.Trim != 0, ARQuantum: s.cfg.ArQuantum, ProbeHeadroom: float64(s.cfg.ProbePpm) / 1e6,
		AgentPort: uint16(s.cfg.AgentPort),
	}
	if s.cfg.Addr != 0 {
		var b [4]byte
		binary.NativeEndian.PutUint32(b[:], s.cfg.Addr)
		c.Addr = netip.AddrFrom4(b)
	}
	return c
}

// writeCfg stores s.cfg; s.mu must be held.
func (s *Switch) writeCfg() error {
	if err := s.maps.CfgMap.Put(uint32(s.id), &s.cfg); err != nil {
		return fmt.Errorf("bpf: write switch config: %w", err)
	}
	return nil
}

// be32 returns an IPv4 address as the uint32 whose memory image is the
// address in network byte order (what the BPF side compares with).
func be32(a netip.Addr) uint32 {
	b := a.As4()
	return binary.NativeEndian.Uint32(b[:])
}
