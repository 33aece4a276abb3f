package bpf

import (
	"net"
	"net/netip"
	"strings"
	"testing"
)

func TestLoadSizesAndClose(t *testing.T) {
	requireRoot(t)
	s, err := Load(Options{MaxPorts: 8, MaxGroups: 4, MaxPointers: 16, MaxRoutes: 32})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]uint32{"ports": 8, "groups": 4, "ptrs": 16, "routes": 32} {
		var got uint32
		switch name {
		case "ports":
			got = s.maps.Ports.MaxEntries()
		case "groups":
			got = s.maps.Groups.MaxEntries()
		case "ptrs":
			got = s.maps.Ptrs.MaxEntries()
		case "routes":
			got = s.maps.Routes.MaxEntries()
		}
		if got != want {
			t.Errorf("map %s: %d entries, want %d", name, got, want)
		}
	}
	if err := s.SetPort(8, PortConfig{Ifindex: 1}); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("SetPort beyond MaxPorts: %v", err)
	}
	if err := s.SetGroupValid(4, 1); err == nil {
		t.Error("SetGroupValid beyond MaxGroups accepted")
	}
	if _, err := s.PointerIndex(PointerKey{Group: 3, Class: ClassAck}); err != nil {
		t.Errorf("PointerIndex: %v", err)
	}
	if err := s.AddRoute(netip.MustParsePrefix("2001:db8::/32"), Down(0)); err == nil {
		t.Error("IPv6 route accepted")
	}
	if err := s.SetPort(0, PortConfig{Ifindex: 1, MAC: net.HardwareAddr{1, 2, 3}}); err == nil {
		t.Error("short MAC accepted")
	}
	if err := s.SetConfig(Config{Addr: netip.MustParseAddr("::1")}); err == nil {
		t.Error("IPv6 identity address accepted")
	}
	c := Config{Mode: ModeShaped, Policy: PolicyPofan, Seed: 3, Addr: netip.MustParseAddr("10.0.0.1"),
		AckThreshold: 64, PipeSize: 2, Pipes: 3, Trim: true, ARQuantum: 1500}
	if err := s.SetConfig(c); err != nil {
		t.Fatal(err)
	}
	if got := s.Config(); got != c {
		t.Errorf("Config() = %+v, want %+v", got, c)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := s.SetGroupValid(0, 1); err == nil {
		t.Error("use after Close accepted")
	}
}
