package bpf

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func TestProgramsNames(t *testing.T) {
	for p, want := range map[Programs]string{
		0: "none", ProgramsLineRate: "xdp_ingress", ProgramsShaped: "xdp_ingress+tc_shaped",
		ProgramsAll: "xdp_ingress+tc_shaped+xdp_pass", ProgXDPPass | 1<<7: "xdp_pass+programs(0x80)",
	} {
		if got := p.String(); got != want {
			t.Errorf("Programs(%#x).String() = %q, want %q", uint8(p), got, want)
		}
	}
	if ProgramsFor(ModeLineRate) != ProgramsLineRate || ProgramsFor(ModeShaped) != ProgramsShaped {
		t.Error("ProgramsFor")
	}
}

// TestLoadLineRateOnly: a line-rate instance has xdp_ingress only; what
// needs the other programs says so, the rest works.
func TestLoadLineRateOnly(t *testing.T) {
	requireRoot(t)
	s, err := Load(Options{Programs: ProgramsLineRate, MaxGroups: 4, MaxPointers: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Programs() != ProgramsLineRate || s.xdp == nil || s.tc != nil || s.pass != nil {
		t.Fatalf("programs %s (xdp %v, tc %v, pass %v), want xdp_ingress only", s.Programs(), s.xdp, s.tc, s.pass)
	}
	for name, err := range map[string]error{
		"AttachTC":      s.AttachTC(1),
		"AttachXDPPass": s.AttachXDPPass(1),
		"SetConfig":     s.SetConfig(Config{Mode: ModeShaped}),
	} {
		if !errors.Is(err, ErrNotLoaded) {
			t.Errorf("%s without its program: %v, want ErrNotLoaded", name, err)
		}
	}
	// Line-rate forwarding works as in the full fixture.
	f := &fixture{t: t, s: s}
	f.must(s.SetConfig(baseConfig()))
	for p := range nPorts {
		f.must(s.SetPort(p, basePort(p)))
	}
	f.must(s.AddRoute(netip.MustParsePrefix("10.0.0.3/32"), Down(1)))
	f.ingress(0)
	in := frame{src: hostAddr(0), dst: hostAddr(1)}.bytes()
	if v, out := f.runXDP(in); v != xdpRedirect || egressOf(out) != 1 {
		t.Errorf("verdict %d, egress %d; want redirect out of port 1", v, egressOf(out))
	}
}

// TestPinnedSubset: a pinned line-rate instance pins xdp_ingress only;
// Open finds exactly that; AttachPort attaches XDP only.
func TestPinnedSubset(t *testing.T) {
	l := newLab(t)
	dir := t.TempDir()
	if err := unix.Mount("bpf", dir, "bpf", 0, ""); err != nil {
		t.Skipf("cannot mount a bpffs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	pins := filepath.Join(dir, "sw")
	ns := l.newNS()
	a, _ := l.veth(ns, "a", portMAC(0), ns, "b", peerMAC(0), 1500)

	s, err := Load(Options{PinDir: pins, Programs: ProgramsLineRate, MaxGroups: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"tc_shaped", "xdp_pass"} {
		if _, err := os.Stat(filepath.Join(pins, "progs", name)); !os.IsNotExist(err) {
			t.Errorf("%s pinned though not loaded: %v", name, err)
		}
	}
	must(t, s.Close())

	o, err := Open(pins)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if p := o.Programs(); p != ProgramsLineRate {
		t.Errorf("reopened programs %s, want %s", p, ProgramsLineRate)
	}
	if err := o.SetConfig(Config{Mode: ModeShaped}); !errors.Is(err, ErrNotLoaded) {
		t.Errorf("shaped mode without tc_shaped: %v, want ErrNotLoaded", err)
	}
	l.in(ns, func() {
		if err := o.AttachTC(a); !errors.Is(err, ErrNotLoaded) {
			t.Errorf("AttachTC: %v, want ErrNotLoaded", err)
		}
		must(t, o.AttachPort(a))
		var st unix.Stat_t
		must(t, unix.Stat("/proc/thread-self/ns/net", &st))
		suffix := "-" + itoa(st.Ino) + "-" + itoa(uint64(a))
		if _, err := os.Stat(filepath.Join(pins, "links", "xdp"+suffix)); err != nil {
			t.Errorf("xdp attachment not pinned: %v", err)
		}
		if _, err := os.Stat(filepath.Join(pins, "links", "tc"+suffix)); !os.IsNotExist(err) {
			t.Errorf("tc attached without tc_shaped: %v", err)
		}
		must(t, o.Detach(a))
	})
	must(t, o.Unpin())
}

// TestLoadParallel: Loads share the parsed objects; concurrent ones (as
// switchd runs them) must not race.
func TestLoadParallel(t *testing.T) {
	requireRoot(t)
	sets := []Programs{ProgramsLineRate, ProgramsShaped, ProgramsAll, ProgXDPIngress | ProgXDPPass}
	errs := make(chan error, 2*len(sets))
	for i := range 2 * len(sets) {
		go func() {
			s, err := Load(Options{Programs: sets[i%len(sets)], MaxPorts: 8, MaxGroups: 4, MaxPointers: 16})
			if err == nil {
				if got := s.Programs(); got != sets[i%len(sets)] {
					err = errors.New("loaded " + got.String() + ", want " + sets[i%len(sets)].String())
				}
				s.Close()
			}
			errs <- err
		}()
	}
	for range 2 * len(sets) {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
