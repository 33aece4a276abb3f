package bpf

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
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

// Options size one switch instance's maps and choose its programs. Zero
// values take the defaults.
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

// Switch is one loaded instance of the data plane: programs and maps.
// Its methods are safe for concurrent use.
type Switch struct {
	mu     sync.Mutex
	closed bool
	opts   Options

	progs         Programs          // which of xdp, tc, pass exist
	xdp, tc, pass *ebpf.Program     // nil if not loaded
	objs          xdpIngressObjects // xdp_ingress and the maps all programs share
	maps          *xdpIngressMaps
	colls         []*ebpf.Collection
	links         map[attachKey]link.Link

	pinDir string

	cfg  xdpIngressSwCfg // cached: SetConfig and the uplink setters both write it
	ifOf map[int]uint32  // port -> ifindex currently in if2port
	nCPU int
}

type attachKey struct {
	what    string // "xdp", "tc", "xdp_pass"
	ifindex int
}

// The embedded objects are parsed once per process; each Load works on
// copies (MaxEntries differ between instances).
var (
	xdpIngressSpec = sync.OnceValues(loadXdpIngress)
	tcShapedSpec   = sync.OnceValues(loadTcShaped)
	xdpPassSpec    = sync.OnceValues(loadXdpPass)
)

func specCopy(load func() (*ebpf.CollectionSpec, error)) (*ebpf.CollectionSpec, error) {
	spec, err := load()
	if err != nil {
		return nil, fmt.Errorf("bpf: %w", err)
	}
	return spec.Copy(), nil
}

// sizeMaps sets the instance's map sizes in an object's spec.
func sizeMaps(spec *ebpf.CollectionSpec, opts Options) error {
	sizes := map[string]int{
		xdpIngressMapPorts:    opts.MaxPorts,
		xdpIngressMapIf2port:  opts.MaxPorts,
		xdpIngressMapTxPorts:  opts.MaxPorts,
		xdpIngressMapCounters: opts.MaxPorts,
		xdpIngressMapFifos:    opts.MaxPorts,
		xdpIngressMapRoutes:   opts.MaxRoutes,
		xdpIngressMapGroups:   opts.MaxGroups,
		xdpIngressMapPtrs:     opts.MaxPointers,
	}
	for name, n := range sizes {
		ms, ok := spec.Maps[name]
		if !ok {
			return fmt.Errorf("bpf: object lacks map %q", name)
		}
		ms.MaxEntries = uint32(n)
	}
	for _, ms := range spec.Maps {
		if ms.Type == ebpf.DevMap || ms.Type == ebpf.DevMapHash {
			// The kernel refuses BTF key/value types on a DEVMAP only
			// after allocating it, and frees that one with an RCU
			// barrier (~15 ms) before the loader retries without
			// them: create it without BTF right away.
			ms.Key, ms.Value = nil, nil
		}
	}
	return nil
}

// Load loads one switch instance: creates its maps (sized by opts) and
// loads the programs opts.Programs names (default xdp_ingress and
// tc_shaped), which share them. The switch starts in line-rate mode with
// policy ecmp, no ports, no routes.
func Load(opts Options) (*Switch, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	nCPU, err := ebpf.PossibleCPU()
	if err != nil {
		return nil, fmt.Errorf("bpf: possible CPUs: %w", err)
	}

	xspec, err := specCopy(xdpIngressSpec)
	if err != nil {
		return nil, err
	}
	if err := sizeMaps(xspec, opts); err != nil {
		return nil, err
	}

	s := &Switch{opts: opts, progs: opts.Programs, pinDir: opts.PinDir, nCPU: nCPU,
		links: map[attachKey]link.Link{}, ifOf: map[int]uint32{}}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()

	xcoll, err := ebpf.NewCollection(xspec)
	if err != nil {
		return nil, loadError(xdpIngressProgXdpIngress, err)
	}
	// The maps every object shares, by name.
	shared := make(map[string]*ebpf.Map, len(mapNames))
	for _, name := range mapNames {
		m, found := xcoll.Maps[name]
		if !found {
			xcoll.Close()
			return nil, fmt.Errorf("bpf: xdp_ingress object lacks map %q", name)
		}
		shared[name] = m
	}
	// Assign moves the objects out of the collection: s.objs owns them.
	err = xcoll.Assign(&s.objs)
	xcoll.Close()
	if err != nil {
		return nil, fmt.Errorf("bpf: assign xdp_ingress objects: %w", err)
	}
	s.maps = &s.objs.xdpIngressMaps
	s.xdp = s.objs.XdpIngress

	if opts.Programs&ProgTCShaped != 0 {
		if s.tc, err = s.loadProgram(tcShapedSpec, tcShapedProgTcShaped, opts, shared); err != nil {
			return nil, err
		}
	}
	if opts.Programs&ProgXDPPass != 0 {
		if s.pass, err = s.loadProgram(xdpPassSpec, xdpPassProgXdpPass, opts, shared); err != nil {
			return nil, err
		}
	}

	s.cfg.N_pipes = 1
	if err := s.writeCfg(); err != nil {
		return nil, err
	}
	if s.pinDir != "" {
		if _, err := os.Stat(filepath.Join(s.pinDir, "progs")); err == nil {
			return nil, fmt.Errorf("bpf: %s already holds a pinned instance: Open it, or Unpin it first", s.pinDir)
		}
		if err := s.pinAll(s.pinDir); err != nil {
			s.mu.Lock()
			s.unpinLocked()
			s.mu.Unlock()
			return nil, err
		}
	}
	ok = true
	return s, nil
}

// loadProgram loads the object of one more program against the shared
// maps (its other maps, if any, are its own) and keeps the collection.
func (s *Switch) loadProgram(load func() (*ebpf.CollectionSpec, error), prog string, opts Options, shared map[string]*ebpf.Map) (*ebpf.Program, error) {
	spec, err := specCopy(load)
	if err != nil {
		return nil, err
	}
	repl := map[string]*ebpf.Map{}
	for name := range spec.Maps {
		if m, ok := shared[name]; ok {
			repl[name] = m
		}
	}
	if len(repl) > 0 {
		if err := sizeMaps(spec, opts); err != nil {
			return nil, err
		}
	}
	coll, err := ebpf.NewCollectionWithOptions(spec, ebpf.CollectionOptions{MapReplacements: repl})
	if err != nil {
		return nil, loadError(prog, err)
	}
	s.colls = append(s.colls, coll)
	p := coll.Programs[prog]
	if p == nil {
		return nil, fmt.Errorf("bpf: program %s missing from its generated object", prog)
	}
	return p, nil
}

func loadError(prog string, err error) error {
	var ve *ebpf.VerifierError
	if errors.As(err, &ve) {
		return fmt.Errorf("bpf: load %s: verifier rejected it: %+v", prog, ve)
	}
	if errors.Is(err, ebpf.ErrNotSupported) {
		return fmt.Errorf("bpf: load %s: kernel lacks a needed feature: %w", prog, err)
	}
	return fmt.Errorf("bpf: load %s: %w", prog, err)
}

// Close releases the instance's file descriptors: programs, maps and
// attachments go away unless they are pinned (Options.PinDir, Open), in
// which case they stay until Unpin. Safe to call more than once.
func (s *Switch) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	for k, l := range s.links {
		if err := l.Close(); err != nil {
			errs = append(errs, fmt.Errorf("bpf: detach %s from ifindex %d: %w", k.what, k.ifindex, err))
		}
	}
	s.links = nil
	for _, c := range s.colls {
		c.Close()
	}
	s.colls = nil
	closeAll(s.tc, s.pass, s.objs.XdpIngress, s.objs.CfgMap, s.objs.Counters, s.objs.Fifos, s.objs.Groups,
		s.objs.If2port, s.objs.Ports, s.objs.Ptrs, s.objs.Routes, s.objs.RrPtr, s.objs.TxPorts,
		s.objs.Uplinks, s.objs.TapCfg, s.objs.TapRing, s.objs.TapScratch)
	return errors.Join(errs...)
}

func (s *Switch) lock() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errors.New("bpf: switch is closed")
	}
	return nil
}

// Programs returns the programs this instance has loaded (or, opened from
// pins, the ones pinned).
func (s *Switch) Programs() Programs {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.progs
}

// AttachXDP attaches xdp_ingress in native (driver) mode to the interface
// with this ifindex in the calling thread's network namespace.
func (s *Switch) AttachXDP(ifindex int) error {
	return s.attach("xdp", ProgXDPIngress, ifindex, func() (link.Link, error) {
		return link.AttachXDP(link.XDPOptions{Program: s.xdp, Interface: ifindex, Flags: link.XDPDriverMode})
	})
}

// AttachTC attaches tc_shaped at TCX ingress (Linux 6.6+) of the interface.
// It fails (ErrNotLoaded) if the instance did not load tc_shaped.
func (s *Switch) AttachTC(ifindex int) error {
	return s.attach("tc", ProgTCShaped, ifindex, func() (link.Link, error) {
		return link.AttachTCX(link.TCXOptions{Program: s.tc, Interface: ifindex, Attach: ebpf.AttachTCXIngress})
	})
}

// AttachPort attaches the port programs of the instance to a switch port:
// xdp_ingress and, if loaded (Options.Programs), tc_shaped.
func (s *Switch) AttachPort(ifindex int) error {
	if err := s.AttachXDP(ifindex); err != nil {
		return err
	}
	if s.Programs()&ProgTCShaped == 0 {
		return nil
	}
	return s.AttachTC(ifindex)
}

// AttachXDPPass attaches the XDP_PASS-only program in native mode, e.g. to
// a host-facing peer veth (in the host's namespace: call it from a thread
// in that namespace) so that XDP_REDIRECT into it finds NAPI enabled. It
// fails (ErrNotLoaded) unless Options.Programs included ProgXDPPass.
func (s *Switch) AttachXDPPass(ifindex int) error {
	return s.attach("xdp_pass", ProgXDPPass, ifindex, func() (link.Link, error) {
		return link.AttachXDP(link.XDPOptions{Program: s.pass, Interface: ifindex, Flags: link.XDPDriverMode})
	})
}

func (s *Switch) attach(what string, prog Programs, ifindex int, do func() (link.Link, error)) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if s.progs&prog == 0 {
		return fmt.Errorf("bpf: attach %s to ifindex %d: %s %w (Options.Programs = %s)", what, ifindex, prog, ErrNotLoaded, s.progs)
	}
	k := attachKey{what, ifindex}
	pin := ""
	if s.pinDir != "" {
		var err error
		if pin, err = s.linkPin(k); err != nil {
			return err
		}
		if _, err := os.Stat(pin); err == nil {
			return fmt.Errorf("bpf: %s already attached to ifindex %d (pinned)", what, ifindex)
		}
	}
	if _, dup := s.links[k]; dup {
		return fmt.Errorf("bpf: %s already attached to ifindex %d", what, ifindex)
	}
	// The attach syscalls resolve ifindex in the namespace of the calling
	// thread: the caller has locked its goroutine to a thread in there.
	l, err := do()
	if err != nil {
		if errors.Is(err, ebpf.ErrNotSupported) {
			return fmt.Errorf("bpf: attach %s to ifindex %d: kernel does not support it: %w", what, ifindex, err)
		}
		return fmt.Errorf("bpf: attach %s to ifindex %d: %w", what, ifindex, err)
	}
	if pin != "" {
		if err := l.Pin(pin); err != nil {
			l.Close()
			return fmt.Errorf("bpf: pin %s attachment of ifindex %d: %w", what, ifindex, err)
		}
	}
	s.links[k] = l
	return nil
}

// Detach removes this instance's attachments (xdp, tc, xdp_pass) from the
// interface with this ifindex in the calling thread's namespace, pinned
// ones included.
func (s *Switch) Detach(ifindex int) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	var errs []error
	for _, what := range []string{"xdp", "tc", "xdp_pass"} {
		k := attachKey{what, ifindex}
		l := s.links[k]
		delete(s.links, k)
		if s.pinDir != "" {
			pin, err := s.linkPin(k)
			if err != nil {
				return err
			}
			if l == nil {
				if l, err = link.LoadPinnedLink(pin, nil); errors.Is(err, fs.ErrNotExist) {
					l = nil
				} else if err != nil {
					errs = append(errs, fmt.Errorf("bpf: open pinned %s attachment of ifindex %d: %w", what, ifindex, err))
					continue
				}
			}
			if l != nil {
				if err := l.Unpin(); err != nil && !errors.Is(err, fs.ErrNotExist) {
					errs = append(errs, fmt.Errorf("bpf: unpin %s attachment of ifindex %d: %w", what, ifindex, err))
				}
			}
		}
		if l == nil {
			continue
		}
		if err := l.Close(); err != nil {
			errs = append(errs, fmt.Errorf("bpf: detach %s from ifindex %d: %w", what, ifindex, err))
		}
	}
	return errors.Join(errs...)
}

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
