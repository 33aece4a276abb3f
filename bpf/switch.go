package bpf

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
)

// Programs is a set of the data plane's programs. Verifying a program is
// most of what Load costs, so an instance loads only those it needs.
type Programs uint8

const (
	// ProgXDPIngress is xdp_ingress, on every port in both modes. Every
	// instance loads it (the maps are created with it).
	ProgXDPIngress Programs = 1 << iota
	// ProgTCShaped is tc_shaped, at TCX ingress of every port: the
	// forwarding of shaped mode.
	ProgTCShaped
	// ProgXDPPass is xdp_pass, for host-facing peer veths (AttachXDPPass).
	ProgXDPPass

	// ProgramsLineRate is what a switch that stays in line-rate mode needs.
	ProgramsLineRate = ProgXDPIngress
	// ProgramsShaped is what shaped mode needs; it also runs line-rate
	// mode, so a switch with both can change mode with SetConfig. It is
	// the default (Options.Programs 0).
	ProgramsShaped = ProgXDPIngress | ProgTCShaped
	// ProgramsAll is every program.
	ProgramsAll = ProgXDPIngress | ProgTCShaped | ProgXDPPass
)

// ProgramsFor returns the programs a switch in mode m needs.
func ProgramsFor(m Mode) Programs {
	if m == ModeShaped {
		return ProgramsShaped
	}
	return ProgramsLineRate
}

var progNames = []struct {
	p    Programs
	name string
}{
	{ProgXDPIngress, xdpIngressProgXdpIngress},
	{ProgTCShaped, tcShapedProgTcShaped},
	{ProgXDPPass, xdpPassProgXdpPass},
}

// String lists the programs by name, joined with "+".
func (p Programs) String() string {
	var names []string
	for _, n := range progNames {
		if p&n.p != 0 {
			names = append(names, n.name)
		}
	}
	if rest := p &^ ProgramsAll; rest != 0 {
		names = append(names, fmt.Sprintf("programs(%#x)", uint8(rest)))
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, "+")
}

// ErrNotLoaded is returned (wrapped) by an attach function whose program
// the instance did not load (Options.Programs), and by SetConfig for shaped
// mode without tc_shaped.
var ErrNotLoaded = errors.New("program not loaded")

// Options size one switch's tables and, for Load, choose the programs of
// its own plane. Zero values take the defaults.
type Options struct {
	MaxPorts    int // ports (default and upper bound MaxPorts)
	MaxRoutes   int // LPM routes (default MaxRoutes)
	MaxGroups   int // groups (default MaxGroups)
	MaxPointers int // ofan/pofan pointers (default MaxPointers)
	// Programs to load; it must include ProgXDPIngress. Default (0):
	// ProgramsShaped, i.e. xdp_ingress and tc_shaped, without xdp_pass.
	// A switch that only ever runs line-rate loads ProgramsLineRate
	// (see ProgramsFor); add ProgXDPPass to use AttachXDPPass.
	Programs Programs
	// PinDir, if set, is a directory on a bpffs where the instance and
	// its attachments are pinned, to outlive the process (see Open).
	PinDir string
}

func (o Options) withDefaults() (Options, error) {
	def := func(v *int, d int, name string, max int) error {
		if *v == 0 {
			*v = d
		}
		if *v < 0 || (max > 0 && *v > max) {
			return fmt.Errorf("bpf: Options.%s = %d out of range (1..%d)", name, *v, max)
		}
		return nil
	}
	err := errors.Join(
		def(&o.MaxPorts, MaxPorts, "MaxPorts", MaxPorts),
		def(&o.MaxRoutes, MaxRoutes, "MaxRoutes", 1<<24),
		def(&o.MaxGroups, MaxGroups, "MaxGroups", 1<<20),
		def(&o.MaxPointers, MaxPointers, "MaxPointers", 1<<24),
	)
	if o.Programs == 0 {
		o.Programs = ProgramsShaped
	}
	if o.Programs&^ProgramsAll != 0 || o.Programs&ProgXDPIngress == 0 {
		err = errors.Join(err, fmt.Errorf("bpf: Options.Programs = %s: must include xdp_ingress and name only known programs", o.Programs))
	}
	return o, err
}

// Switch is one switch of a Plane: its configuration, ports, routes,
// pointers and counters, at its own offsets in the plane's maps. Its
// methods are safe for concurrent use, also with other switches of the
// same plane.
type Switch struct {
	p     *Plane
	id    int
	owner bool // Close closes the plane too (Load, Open)

	mu     sync.Mutex
	closed bool
	opts   Options // this switch's sizes; Programs and PinDir are the plane's

	// The plane's programs and maps (tests and MeasureProgramCosts run
	// the programs directly).
	progs         Programs
	xdp, tc, pass *ebpf.Program
	maps          *xdpIngressMaps

	cfg  xdpIngressSwCfg // cached: SetConfig and the uplink setters both write it
	nCPU int
}

// Load loads a plane for one switch (programs and maps of its own, sized
// by opts) and returns that switch; closing it closes the plane. The
// switch starts in line-rate mode with policy ecmp, no ports, no routes.
// A lab's switches share one plane instead (LoadPlane).
func Load(opts Options) (*Switch, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	p, err := LoadPlane(PlaneOptions{Switches: []Sizes{opts.sizes()}, Programs: opts.Programs, PinDir: opts.PinDir})
	if err != nil {
		return nil, err
	}
	s := p.switches[0]
	s.owner = true
	return s, nil
}

// Close releases the switch. A switch from Load or Open closes its plane:
// programs, maps and attachments go away unless they are pinned, in which
// case they stay until Unpin. A switch from Plane.Switch only becomes
// unusable; the plane stays. Safe to call more than once.
func (s *Switch) Close() error {
	s.mu.Lock()
	already := s.closed
	s.closed = true
	s.mu.Unlock()
	if already || !s.owner {
		return nil
	}
	return s.p.Close()
}

func (s *Switch) lock() error {
	s.mu.Lock()
	if s.closed || s.p.closed.Load() {
		s.mu.Unlock()
		return errors.New("bpf: switch is closed")
	}
	return nil
}

// ID is the switch's index in its plane.
func (s *Switch) ID() int { return s.id }

// Sizes are the bounds of the switch's tables in its plane.
func (s *Switch) Sizes() Sizes { return s.opts.sizes() }

// Programs returns the programs of the switch's plane.
func (s *Switch) Programs() Programs { return s.progs }

// Unpin removes the pins of the switch's plane (see Plane.Unpin).
func (s *Switch) Unpin() error { return s.p.Unpin() }

// AttachXDP attaches xdp_ingress in native (driver) mode to the interface
// with this ifindex in the calling thread's network namespace.
func (s *Switch) AttachXDP(ifindex int) error { return s.p.AttachXDP(ifindex) }

// AttachTC attaches tc_shaped at TC ingress (a direct-action cls_bpf
// filter on the interface's ingress qdisc). It fails (ErrNotLoaded) if the
// plane did not load tc_shaped.
func (s *Switch) AttachTC(ifindex int) error { return s.p.AttachTC(ifindex) }

// AttachPort attaches the port programs of the plane to a switch port:
// xdp_ingress and, if loaded (Options.Programs), tc_shaped.
func (s *Switch) AttachPort(ifindex int) error { return s.p.AttachPort(ifindex) }

// AttachXDPPass attaches the XDP_PASS-only program in native mode, e.g. to
// a host-facing peer veth (in the host's namespace: call it from a thread
// in that namespace) so that XDP_REDIRECT into it finds NAPI enabled. It
// fails (ErrNotLoaded) unless Options.Programs included ProgXDPPass.
func (s *Switch) AttachXDPPass(ifindex int) error { return s.p.AttachXDPPass(ifindex) }

// Detach removes the plane's attachments (xdp, tc, xdp_pass) from the
// interface with this ifindex in the calling thread's namespace, pinned
// ones included.
func (s *Switch) Detach(ifindex int) error { return s.p.Detach(ifindex) }

// PlanePort is the index of one of the switch's ports in its plane's
// shared maps (DequeueMonitor.WatchPort).
func (s *Switch) PlanePort(port int) (uint32, error) {
	if err := s.checkPort(port); err != nil {
		return 0, err
	}
	return s.pp(port), nil
}

// pp is the plane port of one of the switch's ports.
func (s *Switch) pp(port int) uint32 { return s.cfg.PortBase + uint32(port) }

// closeAll closes whatever of the objects exist.
func closeAll(objs ...interface{ Close() error }) {
	for _, o := range objs {
		switch v := o.(type) {
		case *ebpf.Map:
			if v != nil {
				v.Close()
			}
		case *ebpf.Program:
			if v != nil {
				v.Close()
			}
		}
	}
}
