package bpf

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// Pinning. With PlaneOptions.PinDir (Options.PinDir for Load) set, the
// plane is pinned under that directory (on a bpffs) and every attachment
// made later is recorded there too, so the data plane outlives the
// process; OpenPlane (Open, OpenSwitch) reopens it from there:
//
//	<dir>/maps/<map>                         every map
//	<dir>/progs/<program>                    xdp_ingress and whichever of tc_shaped,
//	                                         xdp_pass the plane loaded
//	<dir>/links/<kind>-<netns>-<ifindex>     one per attachment (kind: xdp, tc, xdp_pass;
//	                                         netns: inode of the namespace)
//
// An XDP attachment is a BPF link, pinned as such. A TC attachment is a
// cls_bpf filter, which lives on its interface: its entry is a pin of the
// tc_shaped program that records it. Removing the directory (Unpin)
// releases everything no process holds: pinned XDP links detach; TC
// filters stay until Detach or until their interface goes away.

var mapNames = []string{
	xdpIngressMapCfgMap, xdpIngressMapPorts, xdpIngressMapIf2port, xdpIngressMapTxPorts,
	xdpIngressMapCounters, xdpIngressMapFifos, xdpIngressMapRoutes, xdpIngressMapGroups,
	xdpIngressMapUplinks, xdpIngressMapPtrs, xdpIngressMapRrPtr,
	xdpIngressMapTapCfg, xdpIngressMapTapRings, xdpIngressMapTapScratch, xdpIngressMapRealq,
}

// optionalMaps are maps a plane pinned by an older ftlab may lack; it
// opens without them (its programs do not use them).
var optionalMaps = map[string]bool{xdpIngressMapRealq: true}

// mapRefs returns the plane's map fields by name.
func (p *Plane) mapRefs() map[string]**ebpf.Map {
	m := &p.objs.xdpIngressMaps
	return map[string]**ebpf.Map{
		xdpIngressMapCfgMap: &m.CfgMap, xdpIngressMapPorts: &m.Ports, xdpIngressMapIf2port: &m.If2port,
		xdpIngressMapTxPorts: &m.TxPorts, xdpIngressMapCounters: &m.Counters, xdpIngressMapFifos: &m.Fifos,
		xdpIngressMapRoutes: &m.Routes, xdpIngressMapGroups: &m.Groups, xdpIngressMapUplinks: &m.Uplinks,
		xdpIngressMapPtrs: &m.Ptrs, xdpIngressMapRrPtr: &m.RrPtr,
		xdpIngressMapTapCfg: &m.TapCfg, xdpIngressMapTapRings: &m.TapRings, xdpIngressMapTapScratch: &m.TapScratch,
		xdpIngressMapRealq: &m.Realq,
	}
}

// progRefs returns the plane's program fields by name, with their bits.
func (p *Plane) progRefs() map[string]progRef {
	return map[string]progRef{
		xdpIngressProgXdpIngress: {ProgXDPIngress, &p.xdp},
		tcShapedProgTcShaped:     {ProgTCShaped, &p.tc},
		xdpPassProgXdpPass:       {ProgXDPPass, &p.pass},
	}
}

type progRef struct {
	bit Programs
	p   **ebpf.Program
}

// pinAll pins maps and programs under dir.
func (p *Plane) pinAll(dir string) error {
	for _, sub := range []string{"maps", "progs", "links"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return fmt.Errorf("bpf: pin directory: %w", err)
		}
	}
	for name, m := range p.mapRefs() {
		if err := (*m).Pin(filepath.Join(dir, "maps", name)); err != nil {
			return fmt.Errorf("bpf: pin map %s (is %s on a bpffs?): %w", name, dir, err)
		}
	}
	for name, r := range p.progRefs() {
		if p.progs&r.bit == 0 {
			continue
		}
		if err := (*r.p).Pin(filepath.Join(dir, "progs", name)); err != nil {
			return fmt.Errorf("bpf: pin program %s: %w", name, err)
		}
	}
	return nil
}

// OpenPlane reopens a plane that LoadPlane (or Load) pinned under dir,
// e.g. from another process, to configure its switches, read their
// counters, attach or detach. Its attachments stay pinned under dir as
// well. It has the programs the plane was loaded with (Programs).
func OpenPlane(dir string) (*Plane, error) {
	nCPU, err := ebpf.PossibleCPU()
	if err != nil {
		return nil, fmt.Errorf("bpf: possible CPUs: %w", err)
	}
	p := &Plane{pinDir: dir, nCPU: nCPU, links: map[attachKey]attachment{}}
	ok := false
	defer func() {
		if !ok {
			p.Close()
		}
	}()
	for name, m := range p.mapRefs() {
		*m, err = ebpf.LoadPinnedMap(filepath.Join(dir, "maps", name), nil)
		if errors.Is(err, fs.ErrNotExist) && optionalMaps[name] {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("bpf: open pinned map %s: %w", name, err)
		}
	}
	for name, r := range p.progRefs() {
		pr, err := ebpf.LoadPinnedProgram(filepath.Join(dir, "progs", name), nil)
		if errors.Is(err, fs.ErrNotExist) && r.bit != ProgXDPIngress {
			continue // the plane was loaded without it
		}
		if err != nil {
			return nil, fmt.Errorf("bpf: open pinned program %s: %w", name, err)
		}
		*r.p = pr
		p.progs |= r.bit
	}
	p.objs.XdpIngress = p.xdp
	p.maps = &p.objs.xdpIngressMaps
	cfgs := make([]xdpIngressSwCfg, p.maps.CfgMap.MaxEntries())
	for i := range cfgs {
		if err := p.maps.CfgMap.Lookup(uint32(i), &cfgs[i]); err != nil {
			return nil, fmt.Errorf("bpf: read switch %d config: %w", i, err)
		}
	}
	p.addSwitches(cfgs)
	ok = true
	return p, nil
}

// Open reopens switch 0 of the plane pinned under dir (a plane Load
// pinned has no other); closing it closes the plane.
func Open(dir string) (*Switch, error) { return OpenSwitch(dir, 0) }

// OpenSwitch reopens switch i of the plane pinned under dir; closing it
// closes the plane.
func OpenSwitch(dir string, i int) (*Switch, error) {
	p, err := OpenPlane(dir)
	if err != nil {
		return nil, err
	}
	s := p.Switch(i)
	if s == nil {
		p.Close()
		return nil, fmt.Errorf("bpf: plane %s has no switch %d (it has %d)", dir, i, p.Len())
	}
	s.owner = true
	return s, nil
}

// Unpin removes the plane's pins (maps, programs, attachments) from its
// pin directory. Whatever no process holds is released: pinned XDP
// attachments are detached; TC filters stay until Detach or until their
// interface goes away.
func (p *Plane) Unpin() error {
	if p.closed.Load() {
		return errors.New("bpf: plane is closed")
	}
	if p.pinDir == "" {
		return nil
	}
	var errs []error
	for _, sub := range []string{"links", "progs", "maps"} {
		if err := os.RemoveAll(filepath.Join(p.pinDir, sub)); err != nil {
			errs = append(errs, fmt.Errorf("bpf: unpin %s: %w", sub, err))
		}
	}
	if err := os.Remove(p.pinDir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, fmt.Errorf("bpf: unpin: %w", err))
	}
	return errors.Join(errs...)
}

// threadNetns is the inode of the calling thread's network namespace.
func threadNetns() (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/thread-self/ns/net", &st); err != nil {
		return 0, fmt.Errorf("bpf: current netns: %w", err)
	}
	return st.Ino, nil
}

// linkPin is the pin path of an attachment.
func (p *Plane) linkPin(k attachKey) string {
	name := k.what + "-" + strconv.FormatUint(k.netns, 10) + "-" + strconv.Itoa(k.ifindex)
	return filepath.Join(p.pinDir, "links", name)
}

// unpinAll removes whatever pinAll created.
func (p *Plane) unpinAll() {
	for _, sub := range []string{"links", "progs", "maps"} {
		os.RemoveAll(filepath.Join(p.pinDir, sub))
	}
	os.Remove(p.pinDir)
}
