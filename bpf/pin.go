package bpf

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// Pinning. With Options.PinDir set, Load pins the instance under that
// directory (on a bpffs) and every attachment made later is pinned too, so
// the data plane outlives the process; Open reopens it from there:
//
//	<dir>/maps/<map>                         every map
//	<dir>/progs/<program>                    xdp_ingress and whichever of tc_shaped,
//	                                         xdp_pass the instance loaded
//	<dir>/links/<kind>-<netns>-<ifindex>     one per attachment (kind: xdp, tc, xdp_pass;
//	                                         netns: inode of the namespace)
//
// Removing the directory (Unpin) releases everything no process holds.

var mapNames = []string{
	xdpIngressMapCfgMap, xdpIngressMapPorts, xdpIngressMapIf2port, xdpIngressMapTxPorts,
	xdpIngressMapCounters, xdpIngressMapFifos, xdpIngressMapRoutes, xdpIngressMapGroups,
	xdpIngressMapUplinks, xdpIngressMapPtrs, xdpIngressMapRrPtr,
	xdpIngressMapTapCfg, xdpIngressMapTapRing, xdpIngressMapTapScratch,
}

// mapRefs returns the instance's map fields by name.
func (s *Switch) mapRefs() map[string]**ebpf.Map {
	m := &s.objs.xdpIngressMaps
	return map[string]**ebpf.Map{
		xdpIngressMapCfgMap: &m.CfgMap, xdpIngressMapPorts: &m.Ports, xdpIngressMapIf2port: &m.If2port,
		xdpIngressMapTxPorts: &m.TxPorts, xdpIngressMapCounters: &m.Counters, xdpIngressMapFifos: &m.Fifos,
		xdpIngressMapRoutes: &m.Routes, xdpIngressMapGroups: &m.Groups, xdpIngressMapUplinks: &m.Uplinks,
		xdpIngressMapPtrs: &m.Ptrs, xdpIngressMapRrPtr: &m.RrPtr,
		xdpIngressMapTapCfg: &m.TapCfg, xdpIngressMapTapRing: &m.TapRing, xdpIngressMapTapScratch: &m.TapScratch,
	}
}

// progRefs returns the instance's program fields by name, with their bits.
func (s *Switch) progRefs() map[string]progRef {
	return map[string]progRef{
		xdpIngressProgXdpIngress: {ProgXDPIngress, &s.xdp},
		tcShapedProgTcShaped:     {ProgTCShaped, &s.tc},
		xdpPassProgXdpPass:       {ProgXDPPass, &s.pass},
	}
}

type progRef struct {
	bit Programs
	p   **ebpf.Program
}

// pinAll pins maps and programs under dir.
func (s *Switch) pinAll(dir string) error {
	for _, sub := range []string{"maps", "progs", "links"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return fmt.Errorf("bpf: pin directory: %w", err)
		}
	}
	for name, m := range s.mapRefs() {
		if err := (*m).Pin(filepath.Join(dir, "maps", name)); err != nil {
			return fmt.Errorf("bpf: pin map %s (is %s on a bpffs?): %w", name, dir, err)
		}
	}
	for name, r := range s.progRefs() {
		if s.progs&r.bit == 0 {
			continue
		}
		if err := (*r.p).Pin(filepath.Join(dir, "progs", name)); err != nil {
			return fmt.Errorf("bpf: pin program %s: %w", name, err)
		}
	}
	return nil
}

// Open reopens an instance that Load pinned under dir (Options.PinDir),
// e.g. from another process, to configure it, read its counters, attach
// or detach. Its attachments stay pinned under dir as well. It has the
// programs the instance was loaded with (Programs).
func Open(dir string) (*Switch, error) {
	nCPU, err := ebpf.PossibleCPU()
	if err != nil {
		return nil, fmt.Errorf("bpf: possible CPUs: %w", err)
	}
	s := &Switch{pinDir: dir, nCPU: nCPU, links: map[attachKey]link.Link{}, ifOf: map[int]uint32{}}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	for name, m := range s.mapRefs() {
		if *m, err = ebpf.LoadPinnedMap(filepath.Join(dir, "maps", name), nil); err != nil {
			return nil, fmt.Errorf("bpf: open pinned map %s: %w", name, err)
		}
	}
	for name, r := range s.progRefs() {
		p, err := ebpf.LoadPinnedProgram(filepath.Join(dir, "progs", name), nil)
		if errors.Is(err, fs.ErrNotExist) && r.bit != ProgXDPIngress {
			continue // the instance was loaded without it
		}
		if err != nil {
			return nil, fmt.Errorf("bpf: open pinned program %s: %w", name, err)
		}
		*r.p = p
		s.progs |= r.bit
	}
	s.objs.XdpIngress = s.xdp
	s.maps = &s.objs.xdpIngressMaps
	s.opts = Options{
		MaxPorts:    int(s.maps.Ports.MaxEntries()),
		MaxRoutes:   int(s.maps.Routes.MaxEntries()),
		MaxGroups:   int(s.maps.Groups.MaxEntries()),
		MaxPointers: int(s.maps.Ptrs.MaxEntries()),
		Programs:    s.progs,
		PinDir:      dir,
	}
	if err := s.maps.CfgMap.Lookup(uint32(0), &s.cfg); err != nil {
		return nil, fmt.Errorf("bpf: read switch config: %w", err)
	}
	var ifx, port uint32
	it := s.maps.If2port.Iterate()
	for it.Next(&ifx, &port) {
		s.ifOf[int(port)] = ifx
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("bpf: read port ifindexes: %w", err)
	}
	ok = true
	return s, nil
}

// Unpin removes the instance's pins (maps, programs, attachments) from
// its pin directory. Whatever no process holds is released: pinned
// attachments are detached.
func (s *Switch) Unpin() error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if s.pinDir == "" {
		return nil
	}
	var errs []error
	for _, sub := range []string{"links", "progs", "maps"} {
		if err := os.RemoveAll(filepath.Join(s.pinDir, sub)); err != nil {
			errs = append(errs, fmt.Errorf("bpf: unpin %s: %w", sub, err))
		}
	}
	if err := os.Remove(s.pinDir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, fmt.Errorf("bpf: unpin: %w", err))
	}
	return errors.Join(errs...)
}

// linkPin is the pin path of an attachment in the calling thread's netns.
func (s *Switch) linkPin(k attachKey) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/thread-self/ns/net", &st); err != nil {
		return "", fmt.Errorf("bpf: current netns: %w", err)
	}
	name := k.what + "-" + strconv.FormatUint(st.Ino, 10) + "-" + strconv.Itoa(k.ifindex)
	return filepath.Join(s.pinDir, "links", name), nil
}

// unpinLocked removes whatever pinAll created; s.mu must be held.
func (s *Switch) unpinLocked() {
	for _, sub := range []string{"links", "progs", "maps"} {
		os.RemoveAll(filepath.Join(s.pinDir, sub))
	}
	os.Remove(s.pinDir)
}
