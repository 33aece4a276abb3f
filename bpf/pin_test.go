package bpf

import (
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// TestPinOpenUnpin: an instance loaded with a PinDir keeps its maps,
// programs and attachments after Close; Open reopens it; Detach and Unpin
// remove pinned attachments.
func TestPinOpenUnpin(t *testing.T) {
	l := newLab(t)
	dir := t.TempDir()
	if err := unix.Mount("bpf", dir, "bpf", 0, ""); err != nil {
		t.Skipf("cannot mount a bpffs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	pins := filepath.Join(dir, "sw1")
	ns := l.newNS()
	a, _ := l.veth(ns, "a", portMAC(0), ns, "b", peerMAC(0), 1500)

	s, err := Load(Options{PinDir: pins, MaxGroups: 8, Programs: ProgramsAll})
	if err != nil {
		t.Fatal(err)
	}
	l.in(ns, func() {
		pc := basePort(0)
		pc.Ifindex = a
		must(t, s.SetPort(0, pc))
		must(t, s.AttachPort(a))
	})
	must(t, s.SetConfig(Config{Mode: ModeShaped, Policy: PolicyOfan, Seed: 9}))
	must(t, s.AddRoute(netip.MustParsePrefix("10.0.0.0/8"), Up(3)))
	if _, err := Load(Options{PinDir: pins}); err == nil {
		t.Error("Load over a pinned instance accepted")
	}
	must(t, s.Close())

	attached := func() (xdp, tc bool) {
		l.in(ns, func() {
			var st unix.Stat_t
			must(t, unix.Stat("/proc/thread-self/ns/net", &st))
			_, e1 := os.Stat(filepath.Join(pins, "links", "xdp-"+itoa(st.Ino)+"-"+itoa(uint64(a))))
			_, e2 := os.Stat(filepath.Join(pins, "links", "tc-"+itoa(st.Ino)+"-"+itoa(uint64(a))))
			xdp, tc = e1 == nil, e2 == nil
		})
		return
	}
	if x, c := attached(); !x || !c {
		t.Fatalf("after Close: xdp pinned %v, tc pinned %v; want both", x, c)
	}

	o, err := Open(pins)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if p := o.Programs(); p != ProgramsAll {
		t.Errorf("reopened programs %s, want %s", p, ProgramsAll)
	}
	if c := o.Config(); c.Mode != ModeShaped || c.Policy != PolicyOfan || c.Seed != 9 {
		t.Errorf("reopened config %+v", c)
	}
	if ifx, err := o.portIfindex(0); err != nil || ifx != uint32(a) || o.opts.MaxGroups != 8 {
		t.Errorf("reopened: port 0 ifindex %d, %v (want %d), MaxGroups %d (want 8)", ifx, err, a, o.opts.MaxGroups)
	}
	if _, err := o.PortCounters(0); err != nil {
		t.Error(err)
	}
	l.in(ns, func() {
		if err := o.AttachXDP(a); err == nil {
			t.Error("second xdp attach over a pinned one accepted")
		}
		must(t, o.Detach(a))
		// The interface is free again: another XDP program can attach.
		lk, err := link.AttachXDP(link.XDPOptions{Program: o.pass, Interface: a})
		must(t, err)
		lk.Close()
	})
	if x, c := attached(); x || c {
		t.Errorf("after Detach: xdp pinned %v, tc pinned %v; want neither", x, c)
	}
	must(t, o.Unpin())
	if _, err := os.Stat(pins); !os.IsNotExist(err) {
		t.Errorf("pin directory still there after Unpin: %v", err)
	}
}

func itoa(v uint64) string { return strconv.FormatUint(v, 10) }
