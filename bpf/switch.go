package bpf

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// Options size one switch instance's maps. Zero values take the defaults.
type Options struct {
	MaxPorts    int // ports (default and upper bound MaxPorts)
	MaxRoutes   int // LPM routes (default MaxRoutes)
	MaxGroups   int // groups (default MaxGroups)
	MaxPointers int // ofan/pofan pointers (default MaxPointers)
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
	return o, err
}

// Switch is one loaded instance of the data plane: programs and maps.
// Its methods are safe for concurrent use.
type Switch struct {
	mu     sync.Mutex
	closed bool
	opts   Options

	xdp, tc, pass *ebpf.Program
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

// Load loads one switch instance: creates its maps (sized by opts) and
// loads the three programs, which share them. The switch starts in
// line-rate mode with policy ecmp, no ports, no routes.
func Load(opts Options) (*Switch, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	nCPU, err := ebpf.PossibleCPU()
	if err != nil {
		return nil, fmt.Errorf("bpf: possible CPUs: %w", err)
	}

	xspec, err := loadXdpIngress()
	if err != nil {
		return nil, fmt.Errorf("bpf: %w", err)
	}
	tspec, err := loadTcShaped()
	if err != nil {
		return nil, fmt.Errorf("bpf: %w", err)
	}
	pspec, err := loadXdpPass()
	if err != nil {
		return nil, fmt.Errorf("bpf: %w", err)
	}
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
	for _, spec := range []*ebpf.CollectionSpec{xspec, tspec} {
		for name, n := range sizes {
			ms, ok := spec.Maps[name]
			if !ok {
				return nil, fmt.Errorf("bpf: object lacks map %q", name)
			}
			ms.MaxEntries = uint32(n)
		}
	}

	s := &Switch{opts: opts, pinDir: opts.PinDir, nCPU: nCPU, links: map[attachKey]link.Link{}, ifOf: map[int]uint32{}}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()

	xcoll, err := ebpf.NewCollection(xspec)
	if err != nil {
		return nil, loadError("xdp_ingress", err)
	}
	repl := make(map[string]*ebpf.Map, len(tspec.Maps))
	for name := range tspec.Maps {
		m, found := xcoll.Maps[name]
		if !found {
			xcoll.Close()
			return nil, fmt.Errorf("bpf: tc_shaped map %q not in xdp_ingress", name)
		}
		repl[name] = m
	}
	// Assign moves the objects out of the collection: s.objs owns them.
	err = xcoll.Assign(&s.objs)
	xcoll.Close()
	if err != nil {
		return nil, fmt.Errorf("bpf: assign xdp_ingress objects: %w", err)
	}
	s.maps = &s.objs.xdpIngressMaps
	s.xdp = s.objs.XdpIngress

	tcoll, err := ebpf.NewCollectionWithOptions(tspec, ebpf.CollectionOptions{MapReplacements: repl})
	if err != nil {
		return nil, loadError("tc_shaped", err)
	}
	s.colls = append(s.colls, tcoll)
	s.tc = tcoll.Programs[tcShapedProgTcShaped]

	pcoll, err := ebpf.NewCollection(pspec)
	if err != nil {
		return nil, loadError("xdp_pass", err)
	}
	s.colls = append(s.colls, pcoll)
	s.pass = pcoll.Programs[xdpPassProgXdpPass]
	if s.xdp == nil || s.tc == nil || s.pass == nil {
		return nil, errors.New("bpf: a program is missing from the generated objects")
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
		s.objs.Uplinks)
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

// AttachXDP attaches xdp_ingress in native (driver) mode to the interface
// with this ifindex in the calling thread's network namespace.
func (s *Switch) AttachXDP(ifindex int) error {
	return s.attach("xdp", ifindex, func() (link.Link, error) {
		return link.AttachXDP(link.XDPOptions{Program: s.xdp, Interface: ifindex, Flags: link.XDPDriverMode})
	})
}

// AttachTC attaches tc_shaped at TCX ingress (Linux 6.6+) of the interface.
func (s *Switch) AttachTC(ifindex int) error {
	return s.attach("tc", ifindex, func() (link.Link, error) {
		return link.AttachTCX(link.TCXOptions{Program: s.tc, Interface: ifindex, Attach: ebpf.AttachTCXIngress})
	})
}

// AttachPort attaches both xdp_ingress and tc_shaped to a switch port.
func (s *Switch) AttachPort(ifindex int) error {
	if err := s.AttachXDP(ifindex); err != nil {
		return err
	}
	return s.AttachTC(ifindex)
}

// AttachXDPPass attaches the XDP_PASS-only program in native mode, e.g. to
// a host-facing peer veth (in the host's namespace: call it from a thread
// in that namespace) so that XDP_REDIRECT into it finds NAPI enabled.
func (s *Switch) AttachXDPPass(ifindex int) error {
	return s.attach("xdp_pass", ifindex, func() (link.Link, error) {
		return link.AttachXDP(link.XDPOptions{Program: s.pass, Interface: ifindex, Flags: link.XDPDriverMode})
	})
}

func (s *Switch) attach(what string, ifindex int, do func() (link.Link, error)) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
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
