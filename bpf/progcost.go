package bpf

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/cilium/ebpf"
)

// ProgramCost is the kernel's time per packet for one program on one
// path through it, measured with BPF_PROG_TEST_RUN on the reference
// switch.
type ProgramCost struct {
	Name        string  `json:"name"`
	NsPerPacket float64 `json:"ns_per_packet"`
}

// costCase is one program and path to time.
type costCase struct {
	name    string
	mode    Mode
	policy  Policy
	prog    func(*Switch) *ebpf.Program
	ingress int        // port the packet arrives on
	dst     netip.Addr // 10.0.0.3: down to port 1; 10.1.0.9: up through group 1
	verdict uint32
}

var (
	costDown = netip.MustParseAddr("10.0.0.3")
	costUp   = netip.MustParseAddr("10.1.0.9")
)

func xdpOf(s *Switch) *ebpf.Program  { return s.xdp }
func tcOf(s *Switch) *ebpf.Program   { return s.tc }
func passOf(s *Switch) *ebpf.Program { return s.pass }

// costCases are the measured paths; the first, xdp_pass, is the baseline:
// the least a program attached to a port costs.
var costCases = append([]costCase{
	{"xdp_pass", ModeLineRate, PolicyECMP, passOf, 0, costDown, xdpPass},
	{"xdp_ingress line rate, down", ModeLineRate, PolicyECMP, xdpOf, uplinkPort(0), costDown, xdpRedirect},
	{"xdp_ingress line rate, up, ecmp", ModeLineRate, PolicyECMP, xdpOf, 0, costUp, xdpRedirect},
	{"xdp_ingress line rate, up, ofan", ModeLineRate, PolicyOfan, xdpOf, 0, costUp, xdpRedirect},
	{"xdp_ingress line rate, up, rr", ModeLineRate, PolicyRR, xdpOf, 0, costUp, xdpRedirect},
	{"xdp_ingress line rate, up, random", ModeLineRate, PolicyRandom, xdpOf, 0, costUp, xdpRedirect},
	{"xdp_ingress shaped (passes to tc_shaped)", ModeShaped, PolicyECMP, xdpOf, uplinkPort(0), costDown, xdpPass},
	{"tc_shaped, down", ModeShaped, PolicyECMP, tcOf, uplinkPort(0), costDown, tcRedirect},
	{"tc_shaped, up, ecmp", ModeShaped, PolicyECMP, tcOf, 0, costUp, tcRedirect},
	{"tc_shaped, up, ofan", ModeShaped, PolicyOfan, tcOf, 0, costUp, tcRedirect},
	{"tc_shaped, up, ar", ModeShaped, PolicyAR, tcOf, 0, costUp, tcRedirect},
}, append(tapCostCases, delayCostCases...)...)

// setup loads the reference switch for the case, with link models that
// never fill (the cost of the common path, not of drops) and the Ofan
// pointers in place. The caller closes the switch.
func (c costCase) setup() (*Switch, []byte, error) {
	cfg := baseConfig()
	cfg.Mode, cfg.Policy = c.mode, c.policy
	s, err := loadReference(cfg)
	if err != nil {
		return nil, nil, err
	}
	steps := []func() error{}
	for p := range nPorts {
		pc := basePort(p)
		pc.RateBps, pc.BufferBytes, pc.ECNBytes = 100_000_000_000, 1<<30, 1<<29
		steps = append(steps, func() error { return s.SetPort(p, pc) })
	}
	steps = append(steps,
		func() error { return s.SetPointer(PointerKey{Group: 1, Class: ClassData}, 0, []int{0, 1, 2, 3}) },
		func() error { return s.setIngress(c.ingress) })
	for _, step := range steps {
		if err := step(); err != nil {
			s.Close()
			return nil, nil, err
		}
	}
	// A 500-byte frame with TTL 255: runs repeat over the same buffer, and
	// every one of them forwards.
	frame, delayCase, err := c.delaySetup(s)
	if !delayCase {
		frame, err = udpFrame(c.dst, 458)
	}
	if err != nil {
		s.Close()
		return nil, nil, err
	}
	return s, frame, nil
}

// run times the case: repeat runs per BPF_PROG_TEST_RUN call, calls
// calls, and returns the mean kernel time per run.
func (c costCase) run(s *Switch, frame []byte, repeat, calls int) (time.Duration, error) {
	p := c.prog(s)
	if p == nil {
		return 0, fmt.Errorf("bpf: %s: program not loaded", c.name)
	}
	drain, err := c.armTap(s)
	if err != nil {
		return 0, err
	}
	defer drain.Close()
	var total time.Duration
	for range calls {
		v, d, err := p.Benchmark(frame, repeat, nil)
		drain.drain()
		if err != nil {
			return 0, fmt.Errorf("bpf: %s: %w", c.name, err)
		}
		if v != c.verdict {
			return 0, fmt.Errorf("bpf: %s: verdict %d, want %d", c.name, v, c.verdict)
		}
		total += d
	}
	return total / time.Duration(calls), nil
}

// MeasureProgramCosts times every program on its main paths on the
// reference switch (BPF_PROG_TEST_RUN; repeat runs per call, calls calls
// per path). The first cost is xdp_pass, the baseline.
func MeasureProgramCosts(repeat, calls int) ([]ProgramCost, error) {
	var out []ProgramCost
	for _, c := range costCases {
		s, frame, err := c.setup()
		if err != nil {
			return out, err
		}
		d, err := c.run(s, frame, repeat, calls)
		s.Close()
		if err != nil {
			return out, err
		}
		out = append(out, ProgramCost{Name: c.name, NsPerPacket: float64(d.Nanoseconds())})
	}
	return out, nil
}
