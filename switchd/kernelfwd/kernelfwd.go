// Package kernelfwd programs the Linux kernel's own IP forwarding into the
// switch namespaces of a fabric: the routing tables of package routing as
// kernel routes, Up routes as multipath routes hashed on the 5-tuple.
//
// It is ftlab's reference data plane. It needs no eBPF, so it checks the
// fabric and the routing tables independently of the XDP/TC switch, and it
// is the baseline the switch's forwarding rate is measured against.
package kernelfwd

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"

	"github.com/vishvananda/netlink"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"

	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/switchd/routing"
)

// sysctls turn a switch namespace into a kernel router that hashes flows
// on the 5-tuple (as switches hash on the UDP source port, the entropy
// value) and never sends ICMP redirects.
var sysctls = []struct{ key, value string }{
	{"net/ipv4/ip_forward", "1"},
	{"net/ipv4/fib_multipath_hash_policy", "1"},
	{"net/ipv4/conf/all/send_redirects", "0"},
	{"net/ipv4/conf/default/send_redirects", "0"},
}

// Program installs kernel forwarding on every switch of t according to
// tables (routing.Compute). It can be called again with new tables after
// failures: routes are replaced, stale ones removed.
func Program(ctx context.Context, t *topology.Topology, tables map[string]*routing.Table, namespace func(string) string) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(2 * runtime.NumCPU())
	for _, sw := range t.Switches() {
		tab, ok := tables[sw.Name]
		if !ok {
			return fmt.Errorf("kernelfwd: no routing table for %s", sw.Name)
		}
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return nsutil.DoNamed(namespace(sw.Name), func() error {
				if err := programSwitch(t, sw, tab); err != nil {
					return fmt.Errorf("kernelfwd: %s: %w", sw.Name, err)
				}
				return nil
			})
		})
	}
	return g.Wait()
}

// routeProto marks the routes this package installs, so a reprogram can
// find and remove its stale ones and nothing else.
const routeProto = netlink.RouteProtocol(0x66) // private range, "f"

func programSwitch(t *topology.Topology, sw *topology.Node, tab *routing.Table) error {
	for _, s := range sysctls {
		if _, err := os.Stat("/proc/sys/" + s.key); err != nil {
			continue // an older kernel without this knob
		}
		if err := nsutil.WriteSysctl(s.key, s.value); err != nil {
			return err
		}
	}
	h, err := netlink.NewHandle(unix.NETLINK_ROUTE)
	if err != nil {
		return err
	}
	defer h.Close()
	links, err := h.LinkList()
	if err != nil {
		return err
	}
	ifindex := make(map[string]int, len(links))
	for _, l := range links {
		ifindex[l.Attrs().Name] = l.Attrs().Index
	}
	// hop returns the next hop out of a port: the peer's identity address,
	// on link (switch ports are unnumbered).
	hop := func(port int) (*netlink.NexthopInfo, error) {
		if port < 0 || port >= len(sw.Ports) {
			return nil, fmt.Errorf("port %d out of range", port)
		}
		self := t.Links[sw.Ports[port].Link].End(sw.Ports[port].Side)
		peer, _ := t.Node(t.Peer(sw.Ports[port]).Node)
		idx, ok := ifindex[self.Ifname]
		if !ok {
			return nil, fmt.Errorf("interface %s missing", self.Ifname)
		}
		return &netlink.NexthopInfo{LinkIndex: idx, Gw: net.IP(peer.Addr.AsSlice()), Flags: int(netlink.FLAG_ONLINK)}, nil
	}

	want := map[string]bool{}
	for _, r := range tab.Routes {
		dst := &net.IPNet{IP: net.IP(r.Prefix.Addr().AsSlice()), Mask: net.CIDRMask(r.Prefix.Bits(), 32)}
		route := &netlink.Route{Dst: dst, Protocol: routeProto}
		switch r.Kind {
		case routing.Local:
			continue // the identity address is on every port already
		case routing.NoRoute:
			route.Type = unix.RTN_BLACKHOLE
		case routing.Down:
			nh, err := hop(r.Port)
			if err != nil {
				return fmt.Errorf("route %s: %w", r.Prefix, err)
			}
			route.LinkIndex, route.Gw, route.Flags = nh.LinkIndex, nh.Gw, nh.Flags
		case routing.Up:
			valid := tab.Valid(r)
			for u, port := range tab.Uplinks {
				if valid&(1<<u) == 0 {
					continue
				}
				nh, err := hop(port)
				if err != nil {
					return fmt.Errorf("route %s: %w", r.Prefix, err)
				}
				route.MultiPath = append(route.MultiPath, nh)
			}
		}
		if err := h.RouteReplace(route); err != nil {
			return fmt.Errorf("route %s (%s): %w", r.Prefix, r.Kind, err)
		}
		want[dst.String()] = true
	}
	// Remove routes of an earlier programming that the table no longer has.
	old, err := h.RouteListFiltered(unix.AF_INET, &netlink.Route{Protocol: routeProto}, netlink.RT_FILTER_PROTOCOL)
	if err != nil {
		return err
	}
	for _, r := range old {
		if r.Dst != nil && !want[r.Dst.String()] {
			if err := h.RouteDel(&r); err != nil {
				return fmt.Errorf("remove stale route %s: %w", r.Dst, err)
			}
		}
	}
	return nil
}
