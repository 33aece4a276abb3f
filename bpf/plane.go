package bpf

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// Sizes bound one switch's tables in a plane. Zero values take the
// defaults of Options.
type Sizes struct {
	MaxPorts    int // ports (default and upper bound MaxPorts)
	MaxRoutes   int // LPM routes (default MaxRoutes)
	MaxGroups   int // groups (default MaxGroups)
	MaxPointers int // ofan/pofan pointers (default MaxPointers)
}

func (o Options) sizes() Sizes {
	return Sizes{MaxPorts: o.MaxPorts, MaxRoutes: o.MaxRoutes, MaxGroups: o.MaxGroups, MaxPointers: o.MaxPointers}
}

// PlaneOptions describe a plane: its switches and which programs it loads.
type PlaneOptions struct {
	// Switches sizes each switch's tables; switch i is Plane.Switch(i).
	Switches []Sizes
	// Programs to load, as Options.Programs (default ProgramsShaped).
	Programs Programs
	// PinDir, if set, is a directory on a bpffs where the plane and its
	// attachments are pinned, to outlive the process (see OpenPlane).
	PinDir string
}

// Plane is one load of the data plane's programs with the maps of a set
// of switches (a lab's): every program is verified once and attached to
// every port, whichever switch it belongs to. Loading per switch would
// verify each program once per switch and put one program per switch into
// the kernel's XDP dispatcher, whose every change waits for an RCU grace
// period under the RTNL lock (measured: ~10 ms per switch, attach and
// detach). A port finds its switch through its ifindex (if2port), so the
// ports of one plane need distinct ifindexes, also across namespaces; a
// lab's fabric gives them that.
type Plane struct {
	mu     sync.Mutex // attachments
	closed atomic.Bool

	progs         Programs
	xdp, tc, pass *ebpf.Program     // nil if not loaded
	objs          xdpIngressObjects // xdp_ingress and the maps all programs share
	maps          *xdpIngressMaps
	colls         []*ebpf.Collection
	links         map[attachKey]attachment
	pinDir        string
	nCPU          int

	switches []*Switch
}

// attachKey names an attachment: its kind ("xdp", "tc", "xdp_pass") and
// the interface, by namespace (inode) and ifindex.
type attachKey struct {
	what    string
	netns   uint64
	ifindex int
}

// attachment is what the plane holds of an unpinned attachment: closing
// it detaches.
type attachment interface{ Close() error }

// The embedded objects are parsed once per process; each load works on
// copies (MaxEntries differ between planes).
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

// layout places every switch's entries in the shared maps: it fills the
// offsets of each switch's configuration and returns the maps' sizes.
func layout(sizes []Sizes) ([]xdpIngressSwCfg, map[string]int) {
	cfgs := make([]xdpIngressSwCfg, len(sizes))
	var ports, routes, groups, ptrs int
	for i, z := range sizes {
		cfgs[i] = xdpIngressSwCfg{
			N_pipes: 1, Id: uint32(i),
			PortBase: uint32(ports), N_ports: uint32(z.MaxPorts),
			GroupBase: uint32(groups), N_groups: uint32(z.MaxGroups),
			PtrBase: uint32(ptrs), N_ptrs: uint32(z.MaxPointers),
			MaxRoutes: uint32(z.MaxRoutes),
		}
		ports += z.MaxPorts
		routes += z.MaxRoutes
		groups += z.MaxGroups
		ptrs += z.MaxPointers
	}
	n := len(sizes)
	return cfgs, map[string]int{
		xdpIngressMapCfgMap:   n,
		xdpIngressMapRrPtr:    n,
		xdpIngressMapTapCfg:   n,
		xdpIngressMapTapRings: n,
		xdpIngressMapUplinks:  n * MaxUplinks,
		xdpIngressMapPorts:    ports,
		xdpIngressMapIf2port:  ports,
		xdpIngressMapTxPorts:  ports,
		xdpIngressMapCounters: ports,
		xdpIngressMapFifos:    ports,
		xdpIngressMapRealq:    ports,
		xdpIngressMapRoutes:   routes,
		xdpIngressMapGroups:   groups,
		xdpIngressMapPtrs:     ptrs,
	}
}

// sizeMaps sets the plane's map sizes in an object's spec.
func sizeMaps(spec *ebpf.CollectionSpec, sizes map[string]int) error {
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

// LoadPlane loads the programs opts.Programs names (default xdp_ingress
// and tc_shaped) once, with maps for every switch of opts.Switches. Each
// switch starts in line-rate mode with policy ecmp, no ports, no routes.
func LoadPlane(opts PlaneOptions) (*Plane, error) {
	if len(opts.Switches) == 0 {
		return nil, errors.New("bpf: a plane needs at least one switch")
	}
	sizes := make([]Sizes, len(opts.Switches))
	var errs []error
	for i, z := range opts.Switches {
		o, err := Options{MaxPorts: z.MaxPorts, MaxRoutes: z.MaxRoutes, MaxGroups: z.MaxGroups, MaxPointers: z.MaxPointers, Programs: opts.Programs}.withDefaults()
		if err != nil {
			errs = append(errs, fmt.Errorf("switch %d: %w", i, err))
		}
		sizes[i] = o.sizes()
		opts.Programs = o.Programs
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	nCPU, err := ebpf.PossibleCPU()
	if err != nil {
		return nil, fmt.Errorf("bpf: possible CPUs: %w", err)
	}
	cfgs, mapSizes := layout(sizes)

	xspec, err := specCopy(xdpIngressSpec)
	if err != nil {
		return nil, err
	}
	if err := sizeMaps(xspec, mapSizes); err != nil {
		return nil, err
	}
	p := &Plane{progs: opts.Programs, pinDir: opts.PinDir, nCPU: nCPU, links: map[attachKey]attachment{}}
	ok := false
	defer func() {
		if !ok {
			p.Close()
		}
	}()
	if p.pinDir != "" {
		if _, err := os.Stat(filepath.Join(p.pinDir, "progs")); err == nil {
			return nil, fmt.Errorf("bpf: %s already holds a pinned plane: Open it, or Unpin it first", p.pinDir)
		}
	}

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
	// Assign moves the objects out of the collection: p.objs owns them.
	err = xcoll.Assign(&p.objs)
	xcoll.Close()
	if err != nil {
		return nil, fmt.Errorf("bpf: assign xdp_ingress objects: %w", err)
	}
	p.maps = &p.objs.xdpIngressMaps
	p.xdp = p.objs.XdpIngress

	if opts.Programs&ProgTCShaped != 0 {
		if p.tc, err = p.loadProgram(tcShapedSpec, tcShapedProgTcShaped, mapSizes, shared); err != nil {
			return nil, err
		}
	}
	if opts.Programs&ProgXDPPass != 0 {
		if p.pass, err = p.loadProgram(xdpPassSpec, xdpPassProgXdpPass, mapSizes, shared); err != nil {
			return nil, err
		}
	}

	for i := range cfgs {
		if err := p.maps.CfgMap.Put(uint32(i), &cfgs[i]); err != nil {
			return nil, fmt.Errorf("bpf: write switch %d config: %w", i, err)
		}
	}
	p.addSwitches(cfgs)
	if p.pinDir != "" {
		if err := p.pinAll(p.pinDir); err != nil {
			p.unpinAll()
			return nil, err
		}
	}
	ok = true
	return p, nil
}

// addSwitches makes the plane's switch views from their configurations.
func (p *Plane) addSwitches(cfgs []xdpIngressSwCfg) {
	p.switches = make([]*Switch, len(cfgs))
	for i, c := range cfgs {
		p.switches[i] = &Switch{
			p: p, id: i, progs: p.progs, xdp: p.xdp, tc: p.tc, pass: p.pass, maps: p.maps, nCPU: p.nCPU,
			cfg: c,
			opts: Options{
				MaxPorts: int(c.N_ports), MaxRoutes: int(c.MaxRoutes), MaxGroups: int(c.N_groups),
				MaxPointers: int(c.N_ptrs), Programs: p.progs, PinDir: p.pinDir,
			},
		}
	}
}

// loadProgram loads the object of one more program against the shared
// maps (its other maps, if any, are its own) and keeps the collection.
func (p *Plane) loadProgram(load func() (*ebpf.CollectionSpec, error), prog string, mapSizes map[string]int, shared map[string]*ebpf.Map) (*ebpf.Program, error) {
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
		if err := sizeMaps(spec, mapSizes); err != nil {
			return nil, err
		}
	}
	coll, err := ebpf.NewCollectionWithOptions(spec, ebpf.CollectionOptions{MapReplacements: repl})
	if err != nil {
		return nil, loadError(prog, err)
	}
	p.colls = append(p.colls, coll)
	pr := coll.Programs[prog]
	if pr == nil {
		return nil, fmt.Errorf("bpf: program %s missing from its generated object", prog)
	}
	return pr, nil
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

// Len is the number of switches of the plane.
func (p *Plane) Len() int { return len(p.switches) }

// Switch returns switch i of the plane (0 <= i < Len()). Closing it does
// not close the plane.
func (p *Plane) Switch(i int) *Switch {
	if i < 0 || i >= len(p.switches) {
		return nil
	}
	return p.switches[i]
}

// Programs returns the programs this plane has loaded (or, opened from
// pins, the ones pinned).
func (p *Plane) Programs() Programs { return p.progs }

// Close releases the plane's file descriptors: programs, maps and
// attachments go away unless they are pinned (PlaneOptions.PinDir,
// OpenPlane), in which case they stay until Unpin. Safe to call more than
// once.
func (p *Plane) Close() error {
	if p.closed.Swap(true) {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	for k, l := range p.links {
		if err := l.Close(); err != nil {
			errs = append(errs, fmt.Errorf("bpf: detach %s from ifindex %d: %w", k.what, k.ifindex, err))
		}
	}
	p.links = nil
	for _, c := range p.colls {
		c.Close()
	}
	p.colls = nil
	closeAll(p.tc, p.pass, p.objs.XdpIngress, p.objs.CfgMap, p.objs.Counters, p.objs.Fifos, p.objs.Groups,
		p.objs.If2port, p.objs.Ports, p.objs.Ptrs, p.objs.Routes, p.objs.RrPtr, p.objs.TxPorts,
		p.objs.Uplinks, p.objs.TapCfg, p.objs.TapRings, p.objs.TapScratch, p.objs.Realq)
	return errors.Join(errs...)
}

// AttachXDP attaches xdp_ingress in native (driver) mode to the interface
// with this ifindex in the calling thread's network namespace.
func (p *Plane) AttachXDP(ifindex int) error {
	return p.attach("xdp", ProgXDPIngress, ifindex, func() (attachment, link.Link, error) {
		l, err := link.AttachXDP(link.XDPOptions{Program: p.xdp, Interface: ifindex, Flags: link.XDPDriverMode})
		return l, l, err
	})
}

// AttachTC attaches tc_shaped at TC ingress of the interface: a
// direct-action cls_bpf filter on its ingress qdisc (created if missing).
// Not TCX: every TCX attach and detach waits for an RCU grace period
// under the RTNL lock (measured 9-13 ms each on this machine kind), which
// serialized a k=8 fabric's 640 ports into seconds, at setup and again in
// the kernel's namespace cleanup after teardown. It fails (ErrNotLoaded)
// if the plane did not load tc_shaped.
func (p *Plane) AttachTC(ifindex int) error {
	return p.attach("tc", ProgTCShaped, ifindex, func() (attachment, link.Link, error) {
		f, err := attachTCFilter(ifindex, p.tc)
		return f, nil, err
	})
}

// AttachPort attaches the plane's port programs to a switch port:
// xdp_ingress and, if loaded, tc_shaped.
func (p *Plane) AttachPort(ifindex int) error {
	if err := p.AttachXDP(ifindex); err != nil {
		return err
	}
	if p.progs&ProgTCShaped == 0 {
		return nil
	}
	return p.AttachTC(ifindex)
}

// AttachXDPPass attaches the XDP_PASS-only program in native mode (see
// Switch.AttachXDPPass).
func (p *Plane) AttachXDPPass(ifindex int) error {
	return p.attach("xdp_pass", ProgXDPPass, ifindex, func() (attachment, link.Link, error) {
		l, err := link.AttachXDP(link.XDPOptions{Program: p.pass, Interface: ifindex, Flags: link.XDPDriverMode})
		return l, l, err
	})
}

// attach runs do in the calling thread's namespace and records (or pins)
// what it attached. do returns the attachment and, for a BPF link, the
// link (pinned as such); a TC filter is recorded in the pin directory by
// a pin of its program.
func (p *Plane) attach(what string, prog Programs, ifindex int, do func() (attachment, link.Link, error)) error {
	if p.closed.Load() {
		return errors.New("bpf: plane is closed")
	}
	if p.progs&prog == 0 {
		return fmt.Errorf("bpf: attach %s to ifindex %d: %s %w (Options.Programs = %s)", what, ifindex, prog, ErrNotLoaded, p.progs)
	}
	ino, err := threadNetns()
	if err != nil {
		return err
	}
	k := attachKey{what, ino, ifindex}
	pin := ""
	if p.pinDir != "" {
		pin = p.linkPin(k)
		if _, err := os.Stat(pin); err == nil {
			return fmt.Errorf("bpf: %s already attached to ifindex %d (pinned)", what, ifindex)
		}
	}
	p.mu.Lock()
	_, dup := p.links[k]
	p.mu.Unlock()
	if dup {
		return fmt.Errorf("bpf: %s already attached to ifindex %d", what, ifindex)
	}
	// The attach calls resolve ifindex in the namespace of the calling
	// thread: the caller has locked its goroutine to a thread in there.
	a, l, err := do()
	if err != nil {
		if errors.Is(err, ebpf.ErrNotSupported) {
			return fmt.Errorf("bpf: attach %s to ifindex %d: kernel does not support it: %w", what, ifindex, err)
		}
		return fmt.Errorf("bpf: attach %s to ifindex %d: %w", what, ifindex, err)
	}
	if pin != "" {
		var perr error
		if l != nil {
			perr = l.Pin(pin)
		} else {
			perr = pinCopy(p.tc, pin)
		}
		if perr != nil {
			a.Close()
			return fmt.Errorf("bpf: pin %s attachment of ifindex %d: %w", what, ifindex, perr)
		}
		if l != nil {
			// The pin holds the link now; our descriptor can go.
			return l.Close()
		}
		// A TC filter lives on its interface; the pin records it.
		if f, ok := a.(*tcFilter); ok {
			f.forget()
		}
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.links == nil { // closed meanwhile
		return errors.Join(errors.New("bpf: plane is closed"), a.Close())
	}
	p.links[k] = a
	return nil
}

// pinCopy pins prog at path through a descriptor of its own: Pin on an
// object that is already pinned moves its pin.
func pinCopy(prog *ebpf.Program, path string) error {
	c, err := prog.Clone()
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Pin(path)
}

// Detach removes the plane's attachments (xdp, tc, xdp_pass) from the
// interface with this ifindex in the calling thread's namespace, pinned
// ones included.
func (p *Plane) Detach(ifindex int) error {
	if p.closed.Load() {
		return errors.New("bpf: plane is closed")
	}
	ino, err := threadNetns()
	if err != nil {
		return err
	}
	var errs []error
	for _, what := range []string{"xdp", "tc", "xdp_pass"} {
		k := attachKey{what, ino, ifindex}
		p.mu.Lock()
		a := p.links[k]
		delete(p.links, k)
		p.mu.Unlock()
		if p.pinDir != "" {
			pin := p.linkPin(k)
			if _, err := os.Stat(pin); err == nil {
				if what == "tc" {
					a = tcFilterHere(ifindex)
				} else if a == nil {
					l, err := link.LoadPinnedLink(pin, nil)
					if err != nil {
						errs = append(errs, fmt.Errorf("bpf: open pinned %s attachment of ifindex %d: %w", what, ifindex, err))
						continue
					}
					a = l
				}
				if err := os.Remove(pin); err != nil && !errors.Is(err, fs.ErrNotExist) {
					errs = append(errs, fmt.Errorf("bpf: unpin %s attachment of ifindex %d: %w", what, ifindex, err))
				}
			}
		}
		if a == nil {
			continue
		}
		if err := a.Close(); err != nil {
			errs = append(errs, fmt.Errorf("bpf: detach %s from ifindex %d: %w", what, ifindex, err))
		}
	}
	return errors.Join(errs...)
}
