package topology

import (
	"fmt"
	"testing"
)

// checkInvariants verifies the properties every resolved fabric must have,
// whatever its kind and size. The builder relies on all of them.
func checkInvariants(t *testing.T, top *Topology) {
	t.Helper()
	names := map[string]bool{}
	addrs := map[string]string{}
	macs := map[string]string{}
	for i := range top.Nodes {
		n := &top.Nodes[i]
		if names[n.Name] {
			t.Errorf("node name %s is used twice", n.Name)
		}
		names[n.Name] = true
		if other, dup := addrs[n.Addr.String()]; dup {
			t.Errorf("address %s is used by %s and %s", n.Addr, other, n.Name)
		}
		addrs[n.Addr.String()] = n.Name
		if got, ok := top.Node(n.Name); !ok || got != n {
			t.Errorf("Node(%q) does not return the node itself", n.Name)
		}
		ifnames := map[string]bool{}
		for port, ref := range n.Ports {
			if ref.Link < 0 || ref.Link >= len(top.Links) {
				t.Errorf("%s port %d refers to link %d of %d", n.Name, port, ref.Link, len(top.Links))
				continue
			}
			ep := top.Links[ref.Link].End(ref.Side)
			if ep.Node != n.Name || ep.Port != port {
				t.Errorf("%s port %d refers to endpoint %s port %d", n.Name, port, ep.Node, ep.Port)
			}
			if len(ep.Ifname) > 15 {
				t.Errorf("%s interface %q is longer than 15 characters (IFNAMSIZ)", n.Name, ep.Ifname)
			}
			if ifnames[ep.Ifname] {
				t.Errorf("%s has two interfaces named %q", n.Name, ep.Ifname)
			}
			ifnames[ep.Ifname] = true
			if peer := top.Peer(ref); ep.Ifname != peer.Node {
				t.Errorf("%s port %d is named %q, want the peer's name %q", n.Name, port, ep.Ifname, peer.Node)
			}
			mac := ep.MAC.String()
			if want := n.MAC(port).String(); mac != want {
				t.Errorf("%s port %d has MAC %s, want %s", n.Name, port, mac, want)
			}
			if other, dup := macs[mac]; dup {
				t.Errorf("MAC %s is used by %s and %s port %d", mac, other, n.Name, port)
			}
			macs[mac] = fmt.Sprintf("%s port %d", n.Name, port)
		}
		if n.Role == RoleHost && len(n.Ports) != 1 {
			t.Errorf("host %s has %d ports, want 1", n.Name, len(n.Ports))
		}
	}
	linkNames := map[string]bool{}
	for i := range top.Links {
		l := &top.Links[i]
		if l.ID != i {
			t.Errorf("link %s has ID %d at index %d", l.Name, l.ID, i)
		}
		if linkNames[l.Name] {
			t.Errorf("link name %s is used twice", l.Name)
		}
		linkNames[l.Name] = true
		if want := l.A.Node + "~" + l.B.Node; l.Name != want {
			t.Errorf("link %d is named %s, want %s", i, l.Name, want)
		}
		a, okA := top.Node(l.A.Node)
		b, okB := top.Node(l.B.Node)
		if !okA || !okB {
			t.Errorf("link %s joins unknown nodes", l.Name)
			continue
		}
		if a.Role.Tier()+1 != b.Role.Tier() {
			t.Errorf("link %s joins tier %d to tier %d; A must be the tier just below B", l.Name, a.Role.Tier(), b.Role.Tier())
		}
		if ref := a.Ports[l.A.Port]; ref.Link != i || ref.Side != SideA {
			t.Errorf("link %s: %s port %d does not point back at it", l.Name, a.Name, l.A.Port)
		}
		if ref := b.Ports[l.B.Port]; ref.Link != i || ref.Side != SideB {
			t.Errorf("link %s: %s port %d does not point back at it", l.Name, b.Name, l.B.Port)
		}
		if want := Stages(top.Kind)[a.Role.Tier()]; l.Stage != want {
			t.Errorf("link %s is in stage %s, want %s", l.Name, l.Stage, want)
		}
		if l.MTU < MinMTU || l.MTU > MaxMTU || l.Up.RateBps == 0 || l.Down.RateBps == 0 {
			t.Errorf("link %s has unresolved parameters: mtu %d, up %v, down %v", l.Name, l.MTU, l.Up, l.Down)
		}
		for _, p := range []LinkParams{l.Up, l.Down} {
			if p.ECNBytes > p.BufferBytes || p.BufferBytes < uint64(l.MTU) {
				t.Errorf("link %s has inconsistent parameters: mtu %d, %v", l.Name, l.MTU, p)
			}
		}
	}
	// Switches number downlinks before uplinks.
	for _, n := range top.Switches() {
		seenUp := false
		for port, ref := range n.Ports {
			up := ref.Side == SideA
			if seenUp && !up {
				t.Errorf("%s port %d is a downlink after an uplink", n.Name, port)
			}
			seenUp = seenUp || up
		}
	}
}
