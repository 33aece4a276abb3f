package bpf

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// TestPlaneSwitchesApart: one plane serves three switches; each switch's
// configuration, routes, pointers, counters and queues are its own. The
// middle switch is the reference switch on lo (ifindex 1); the others
// have ports on veths of a namespace of their own, so every port of the
// plane has its own ifindex.
func TestPlaneSwitchesApart(t *testing.T) {
	l := newLab(t)
	ns := l.newNS()
	var ifx []int
	for i := range 2 * nPorts {
		a, _ := l.veth(ns, fmt.Sprintf("p%d", i), portMAC(i), ns, fmt.Sprintf("q%d", i), peerMAC(i), 1500)
		ifx = append(ifx, a)
	}
	sizes := Sizes{MaxPorts: nPorts, MaxGroups: 16, MaxPointers: 256}
	p, err := LoadPlane(PlaneOptions{Switches: []Sizes{{MaxPorts: nPorts, MaxGroups: 4, MaxPointers: 8}, sizes, sizes}, Programs: ProgramsAll})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Len() != 3 {
		t.Fatalf("plane has %d switches, want 3", p.Len())
	}
	ref := p.Switch(1)
	must(t, ref.configureReference(baseConfig()))
	// Switch 0 sends 10.0.0.3 out of port 2 (the reference: port 1), and
	// 10.1/16 up with rr; switch 2 has ports and no routes at all.
	sw0, sw2 := p.Switch(0), p.Switch(2)
	l.in(ns, func() {
		for port := range nPorts {
			pc := basePort(port)
			pc.Ifindex = ifx[port]
			must(t, sw0.SetPort(port, pc))
			pc.Ifindex = ifx[nPorts+port]
			must(t, sw2.SetPort(port, pc))
		}
		// An ifindex of another switch is refused.
		pc := basePort(0)
		pc.Ifindex = ifx[0]
		if err := sw2.SetPort(1, pc); err == nil || !strings.Contains(err.Error(), "another switch") {
			t.Errorf("SetPort with switch 0's ifindex on switch 2: %v, want refused", err)
		}
	})
	c0 := baseConfig()
	c0.Policy, c0.Seed = PolicyRR, 99
	must(t, sw0.SetConfig(c0))
	must(t, sw0.AddRoute(netip.PrefixFrom(hostAddr(1), 32), Down(2)))
	must(t, sw0.AddRoute(netip.MustParsePrefix("10.1.0.0/16"), Up(1)))
	must(t, sw0.SetGroupValid(1, 0xf))
	must(t, sw0.SetRRCounter(2))
	must(t, sw2.SetConfig(baseConfig()))

	// Read back: each switch's routes, ports and valid sets.
	routes, err := p.Routes()
	must(t, err)
	want0 := map[netip.Prefix]Route{
		netip.PrefixFrom(hostAddr(1), 32):    Down(2),
		netip.MustParsePrefix("10.1.0.0/16"): Up(1),
	}
	if d := cmp.Diff(want0, routes[0]); d != "" {
		t.Errorf("switch 0 routes (-want +got):\n%s", d)
	}
	if len(routes[1]) != nDown+3 || len(routes[2]) != 0 {
		t.Errorf("routes: reference %d (want %d), switch 2 %d (want 0)", len(routes[1]), nDown+3, len(routes[2]))
	}
	if pc, err := sw2.Port(3); err != nil || pc.Ifindex != ifx[nPorts+3] || !pc.Up || pc.Uplink != -1 {
		t.Errorf("switch 2 port 3 reads back %+v, %v", pc, err)
	}
	if v, err := sw0.GroupValid(1); err != nil || v != 0xf {
		t.Errorf("switch 0 valid set 1 = %#x, %v; want 0xf", v, err)
	}
	if v, err := sw2.GroupValid(1); err != nil || v != 0 {
		t.Errorf("switch 2 valid set 1 = %#x, %v; want 0", v, err)
	}

	f := &fixture{t: t, s: ref}
	down := frame{dst: hostAddr(1), payload: 100}.bytes()
	up := frame{src: hostAddr(0), dst: netip.MustParseAddr("10.1.5.5"), payload: 100}.bytes()
	run := func(s *Switch, in []byte) (uint32, int) {
		t.Helper()
		must(t, s.setIngress(0))
		v, out := f.runXDP(in)
		return v, egressOf(out)
	}
	// A capture on every port of switch 0 sees switch 0's frames only.
	tap, err := sw0.Tap()
	must(t, err)
	defer tap.Close()
	all := []int{0, 1, 2, 3, 4, 5, 6, 7}
	must(t, tap.Start(TapConfig{In: all, Out: all, SnapLen: 64}))
	if v, e := run(ref, down); v != xdpRedirect || e != 1 {
		t.Errorf("reference switch: verdict %d out of port %d, want redirect out of 1", v, e)
	}
	if seen, _ := drain(t, tap); len(seen) != 0 {
		t.Errorf("switch 0's tap copied %d records of the reference switch's frame: %+v", len(seen), seen)
	}
	if v, e := run(sw0, down); v != xdpRedirect || e != 2 {
		t.Errorf("switch 0: verdict %d out of port %d, want redirect out of 2 (its own route)", v, e)
	}
	if seen, _ := drain(t, tap); len(seen) != 2 || seen[0].Port != 0 || seen[1].Port != 2 {
		t.Errorf("switch 0's tap: %+v, want its frame in on port 0 and out of port 2", seen)
	}
	must(t, tap.Stop())
	if v, e := run(sw0, up); v != xdpRedirect || e != uplinkPort(2) {
		t.Errorf("switch 0, rr from counter 2: out of port %d, want %d", e, uplinkPort(2))
	}
	if v, _ := run(sw2, down); v != xdpDrop {
		t.Errorf("switch 2 (no routes): verdict %d, want drop", v)
	}
	if c, _ := sw0.RRCounter(); c != 3 {
		t.Errorf("switch 0 rr counter %d, want 3", c)
	}
	if c, _ := ref.RRCounter(); c != 0 {
		t.Errorf("reference rr counter %d, want 0 (switch 0's rr is its own)", c)
	}

	// Counters: each switch's on its own ports only.
	want := map[int]map[int]PortCounters{
		0: {0: {RxPackets: 2, RxBytes: uint64(len(down) + len(up))}, 2: tx(down), uplinkPort(2): tx(up)},
		1: {0: rx(down), 1: tx(down)},
		2: {0: with(rx(down), func(c *PortCounters) { c.DropNoRoute = 1 })},
	}
	for i := range 3 {
		got := map[int]PortCounters{}
		for port := range nPorts {
			c, err := p.Switch(i).PortCounters(port)
			must(t, err)
			if c != (PortCounters{}) {
				got[port] = c
			}
		}
		if d := cmp.Diff(want[i], got); d != "" {
			t.Errorf("switch %d counters (-want +got):\n%s", i, d)
		}
	}

	// The link model: a shaped packet through the reference queues on
	// the reference's port 1 only.
	must(t, ref.SetConfig(Config{Mode: ModeShaped, Policy: PolicyECMP, Seed: 7, Addr: swAddr, AckThreshold: 100}))
	pc := basePort(1)
	pc.RateBps, pc.BufferBytes = 8000, 1<<20
	must(t, ref.setIngress(0)) // lo is the reference's again
	must(t, ref.SetPort(1, pc))
	must(t, ref.setIngress(0))
	if v, _, _ := f.runTC(down); v != tcRedirect {
		t.Fatalf("tc verdict %d, want redirect", v)
	}
	for i := range 3 {
		q, err := p.Switch(i).QueueStats(1)
		must(t, err)
		want := uint64(0)
		if i == 1 {
			want = 1
		}
		if q.Packets != want {
			t.Errorf("switch %d port 1 queued %d packets, want %d", i, q.Packets, want)
		}
	}
}

// TestPlanePinOpen: a pinned plane reopens with every switch's sizes and
// configuration.
func TestPlanePinOpen(t *testing.T) {
	requireRoot(t)
	dir := t.TempDir()
	if err := unix.Mount("bpf", dir, "bpf", 0, ""); err != nil {
		t.Skipf("cannot mount a bpffs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	pins := filepath.Join(dir, "plane")
	sizes := []Sizes{{MaxPorts: 4, MaxGroups: 8}, {MaxPorts: 16, MaxGroups: 2, MaxPointers: 32, MaxRoutes: 64}}
	p, err := LoadPlane(PlaneOptions{Switches: sizes, Programs: ProgramsLineRate, PinDir: pins})
	if err != nil {
		t.Fatal(err)
	}
	must(t, p.Switch(1).SetConfig(Config{Policy: PolicyOfan, Seed: 5}))
	must(t, p.Close())

	o, err := OpenSwitch(pins, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if c := o.Config(); c.Policy != PolicyOfan || c.Seed != 5 {
		t.Errorf("reopened config %+v", c)
	}
	if got, want := o.opts.sizes(), (Sizes{MaxPorts: 16, MaxRoutes: 64, MaxGroups: 2, MaxPointers: 32}); got != want {
		t.Errorf("reopened sizes %+v, want %+v", got, want)
	}
	if o.Programs() != ProgramsLineRate || o.p.Len() != 2 {
		t.Errorf("reopened %s with %d switches", o.Programs(), o.p.Len())
	}
	if _, err := OpenSwitch(pins, 2); err == nil {
		t.Error("OpenSwitch beyond the plane accepted")
	}
	must(t, o.Unpin())
}
