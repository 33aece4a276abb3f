package switchd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/vishvananda/netlink"
	"golang.org/x/sync/errgroup"

	"github.com/ftlab/ftlab/bpf"
	"github.com/ftlab/ftlab/internal/ethtool"
	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/switchd/ofan"
	"github.com/ftlab/ftlab/switchd/routing"
	"github.com/ftlab/ftlab/switchd/shaping"
)

// PlaneDir is where a lab's data plane (one bpf.Plane for all its
// switches: programs, maps, attachments) is pinned under its bpffs.
func PlaneDir(pinRoot string) string { return filepath.Join(pinRoot, "plane") }

// switchIndexes maps every switch to its index in the lab's plane: its
// place among the topology's switches.
func switchIndexes(t *topology.Topology) map[string]int {
	m := make(map[string]int)
	for i, n := range t.Switches() {
		m[n.Name] = i
	}
	return m
}

// SwitchIndex is the index of switch name in the lab's plane.
func SwitchIndex(t *topology.Topology, name string) (int, bool) {
	i, ok := switchIndexes(t)[name]
	return i, ok
}

// OpenSwitch opens switch name of a lab's pinned plane; closing it closes
// the plane. Ifindexes given to it resolve in the calling thread's
// namespace.
func OpenSwitch(t *topology.Topology, pinRoot, name string) (*bpf.Switch, error) {
	i, ok := SwitchIndex(t, name)
	if !ok {
		return nil, fmt.Errorf("%s is not a switch of %s", name, t.Name)
	}
	sw, err := bpf.OpenSwitch(PlaneDir(pinRoot), i)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return sw, nil
}

// policyFor is the policy of a switch by its layer.
func (c Config) policyFor(r topology.Role) string {
	switch r {
	case topology.RoleEdge, topology.RoleLeaf:
		return c.EdgePolicy
	case topology.RoleAgg:
		return c.AggPolicy
	}
	return "ecmp" // core and spine switches only go down
}

// switchSeed derives a switch's own seed, so ECMP hashes of different
// switches (and layers) do not polarize and Ofan starts differ.
func switchSeed(seed uint64, index int) uint64 {
	x := seed ^ (uint64(index)+1)*0x9e3779b97f4a7c15
	x ^= x >> 31
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 29
	return x
}

// sizes bounds a switch's tables for every failure state, so reconvergence
// never needs bigger maps: each host and edge /24 and each pod /16 can
// appear at most once, valid sets are at most one per route.
func sizes(t *topology.Topology, sw *topology.Node, tab *routing.Table, pipes int) bpf.Sizes {
	routes := t.Count(topology.RoleHost) + t.Count(topology.RoleEdge) + t.Count(topology.RoleLeaf) + t.K + 8
	return bpf.Sizes{
		MaxPorts:    len(sw.Ports),
		MaxRoutes:   routes,
		MaxGroups:   max(routes+1, tab.Pointers+1),
		MaxPointers: max(1, tab.Pointers*bpf.NumClasses*pipes),
	}
}

// pipesOf is the number of pOfan pipes of a switch (1 unless pofan).
func (c Config) pipesOf(sw *topology.Node) int {
	if c.policyFor(sw.Role) != "pofan" {
		return 1
	}
	return c.pofanPipes(sw)
}

// pofanPipes is the number of pipes the switch would have under pofan.
// Tables are sized for it whatever the policy, so that one plane can be
// reconfigured between ofan, pofan and the others (Reconfigure) at the
// price of a few kilobytes of pointers.
func (c Config) pofanPipes(sw *topology.Node) int {
	return (len(sw.Ports) + c.PipeSize - 1) / c.PipeSize
}

// InstallBPF loads the eBPF data plane once for every switch (one
// bpf.Plane, pinned under pinRoot, a mounted bpffs), programs and attaches
// it in every switch namespace, and in shaped mode shapes every port,
// hosts' included, at its link's rate. The fabric must have no data plane
// (fresh, or after UninstallBPF).
func InstallBPF(ctx context.Context, t *topology.Topology, cfg Config, tables map[string]*routing.Table, namespace func(string) string, pinRoot string) (err error) {
	mode := bpf.ModeLineRate
	if cfg.Mode == ModeShaped {
		mode = bpf.ModeShaped
	}
	switches := t.Switches()
	sz := make([]bpf.Sizes, len(switches))
	for i, n := range switches {
		tab := tables[n.Name]
		if tab == nil {
			return fmt.Errorf("%s: no routing table", n.Name)
		}
		sz[i] = sizes(t, n, tab, cfg.pofanPipes(n))
	}
	// Verify only what the mode runs.
	plane, err := bpf.LoadPlane(bpf.PlaneOptions{Switches: sz, Programs: bpf.ProgramsFor(mode), PinDir: PlaneDir(pinRoot)})
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = plane.Unpin()
		}
		plane.Close() // the pins keep it loaded and attached
	}()
	swIndex := switchIndexes(t)
	return inEveryNode(ctx, t, namespace, func(i int, n *topology.Node) error {
		if n.Role == topology.RoleHost {
			return setupHost(t, n, cfg, nil)
		}
		return installSwitch(t, n, i, cfg, tables[n.Name], plane.Switch(swIndex[n.Name]), pinRoot)
	})
}

// inEveryNode runs fn(node index, node) for every node of t, in the node's
// namespace, a few at a time, and stops at the first error.
func inEveryNode(ctx context.Context, t *topology.Topology, namespace func(string) string, fn func(int, *topology.Node) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(2 * runtime.NumCPU())
	for i := range t.Nodes {
		n := &t.Nodes[i]
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return nsutil.DoNamed(namespace(n.Name), func() error {
				if err := fn(i, n); err != nil {
					return fmt.Errorf("%s: %w", n.Name, err)
				}
				return nil
			})
		})
	}
	return g.Wait()
}

// UninstallBPF removes what InstallBPF put into the fabric: attachments
// (detached at once, not when the pins' release gets to them, so that a
// new install can attach right away) and shaping, then the pins.
func UninstallBPF(ctx context.Context, t *topology.Topology, namespace func(string) string, pinRoot string) error {
	plane, err := bpf.OpenPlane(PlaneDir(pinRoot))
	if errors.Is(err, fs.ErrNotExist) {
		plane = nil // nothing was installed, or it is gone: shaping only
	} else if err != nil {
		return err
	}
	if plane != nil {
		defer plane.Close()
	}
	err = inEveryNode(ctx, t, namespace, func(_ int, n *topology.Node) error {
		h, links, err := openPorts(t, n)
		if err != nil {
			return err
		}
		defer h.Close()
		var errs []error
		for _, l := range links {
			if plane != nil && n.Role.IsSwitch() {
				errs = append(errs, plane.Detach(l.Attrs().Index))
			}
			errs = append(errs, shaping.Remove(h, l))
		}
		return errors.Join(errs...)
	})
	if err != nil {
		return err
	}
	if plane != nil {
		if err := plane.Unpin(); err != nil {
			return err
		}
	}
	return nil
}

// openPorts opens a netlink handle in the calling thread's namespace and
// maps the node's port numbers to its interfaces. The caller closes h.
func openPorts(t *topology.Topology, n *topology.Node) (h *netlink.Handle, links []netlink.Link, err error) {
	if h, err = netlink.NewHandle(); err != nil {
		return nil, nil, err
	}
	// One dump rather than a request per port: a switch has many.
	all, err := h.LinkList()
	if err != nil {
		h.Close()
		return nil, nil, fmt.Errorf("list interfaces: %w", err)
	}
	byName := make(map[string]netlink.Link, len(all))
	for _, l := range all {
		byName[l.Attrs().Name] = l
	}
	links = make([]netlink.Link, len(n.Ports))
	for i, p := range n.Ports {
		ep := t.Links[p.Link].End(p.Side)
		var ok bool
		if links[i], ok = byName[ep.Ifname]; !ok {
			h.Close()
			return nil, nil, fmt.Errorf("port %d (%s): no such interface", i, ep.Ifname)
		}
	}
	return h, links, nil
}

// egress returns the parameters of the direction leaving a node's port.
func egress(t *topology.Topology, p topology.PortRef) (topology.LinkParams, int) {
	l := &t.Links[p.Link]
	if p.Side == topology.SideA {
		return l.Up, l.MTU
	}
	return l.Down, l.MTU
}

// ingress returns the parameters of the direction arriving at port p: the
// one its peer sends, whose delay the port adds.
func ingress(t *topology.Topology, p topology.PortRef) topology.LinkParams {
	return *t.Links[p.Link].Params(1 - p.Side)
}

// setupHost shapes a host's egress at its link rate in shaped mode (a NIC
// cannot send faster than its link); in line-rate mode there is nothing
// to do (the fabric already turned GRO on for NAPI). re: see programSwitch.
func setupHost(t *topology.Topology, n *topology.Node, cfg Config, re *reprogram) error {
	if cfg.Mode != ModeShaped && re == nil {
		return nil
	}
	h, links, err := openPorts(t, n)
	if err != nil {
		return err
	}
	defer h.Close()
	if err := re.readQdiscs(h); err != nil {
		return err
	}
	params, mtu := egress(t, n.Ports[0])
	return shapePort(h, links[0], cfg, shaping.Link{RateBps: params.RateBps, BufferBytes: params.BufferBytes, MTU: mtu}, re.qdisc(links[0].Attrs().Index))
}

// readQdiscs fills re.qdiscs from the namespace of h.
func (re *reprogram) readQdiscs(h *netlink.Handle) error {
	if re == nil {
		return nil
	}
	var err error
	re.qdiscs, err = shaping.ReadAll(h)
	return err
}

// installSwitch programs switch n (node index index) into sw, its part
// of the lab's plane, and attaches the plane to its ports. It runs in the
// switch's namespace.
func installSwitch(t *topology.Topology, n *topology.Node, index int, cfg Config, tab *routing.Table, sw *bpf.Switch, pinRoot string) error {
	h, links, err := openPorts(t, n)
	if err != nil {
		return err
	}
	defer h.Close()
	if err := programSwitch(t, n, index, cfg, tab, sw, pinRoot, h, links, nil); err != nil {
		return err
	}
	for i := range links {
		if err := sw.AttachPort(links[i].Attrs().Index); err != nil {
			return err
		}
	}
	return nil
}

// reprogram says what programSwitch (and setupHost) find from an earlier
// install: the routes the switch has, which the new table may lack, and
// the qdiscs of the node's ports by ifindex (shaping.ReadAll).
type reprogram struct {
	routes map[netip.Prefix]bpf.Route
	qdiscs map[int]shaping.Stats
}

// qdisc is what an earlier install left on the port with this ifindex;
// nil on a fresh install.
func (re *reprogram) qdisc(ifindex int) *shaping.Stats {
	if re == nil {
		return nil
	}
	st := re.qdiscs[ifindex]
	return &st
}

// programSwitch writes everything of switch n that its part of the plane
// holds (configuration, ports, uplinks, valid sets, routes, pointers) and
// shapes its ports in shaped mode, as a fresh install leaves them. With
// re set, the switch was programmed before: its counters and queues are
// zeroed, its shaping renewed (shapePort) and routes the table lacks are
// deleted. It runs in the switch's namespace.
func programSwitch(t *topology.Topology, n *topology.Node, index int, cfg Config, tab *routing.Table, sw *bpf.Switch, pinRoot string, h *netlink.Handle, links []netlink.Link, re *reprogram) error {
	pipes := cfg.pipesOf(n)
	mode := bpf.ModeLineRate
	if cfg.Mode == ModeShaped {
		mode = bpf.ModeShaped
	}
	pol, err := LookupPolicy(cfg.policyFor(n.Role))
	if err != nil {
		return err
	}
	seed := switchSeed(cfg.Seed, index)
	if err := sw.SetConfig(bpf.Config{
		Mode: mode, Policy: pol.BPF, Seed: uint32(seed), Addr: n.Addr,
		AckThreshold: uint32(cfg.AckThreshold), PipeSize: uint32(cfg.PipeSize), Pipes: uint32(pipes),
		Trim: cfg.Trim, ARQuantum: uint32(cfg.ARQuantum), ProbeHeadroom: cfg.ProbeHeadroom, AgentPort: cfg.AgentPort,
	}); err != nil {
		return err
	}
	uplinkOf := map[int]int{}
	for u, port := range tab.Uplinks {
		uplinkOf[port] = u
	}
	for i, p := range n.Ports {
		self := t.Links[p.Link].End(p.Side)
		params, mtu := egress(t, p)
		in := ingress(t, p)
		uplink, ok := uplinkOf[i]
		if !ok {
			uplink = -1
		}
		if err := sw.SetPort(i, bpf.PortConfig{
			Ifindex: links[i].Attrs().Index, MAC: self.MAC, PeerMAC: t.Peer(p).MAC, Up: true,
			RateBps: params.RateBps, BufferBytes: params.BufferBytes, ECNBytes: params.ECNBytes, Uplink: uplink,
			Mark: PortMark(pinRoot, index, i), Delay: in.Delay, Jitter: in.Jitter,
		}); err != nil {
			return err
		}
		if re != nil {
			if err := sw.ResetStats(i); err != nil {
				return err
			}
		}
		if cfg.Mode == ModeShaped {
			// The link model accounts packets one by one: no GRO
			// super-packets on switch ports.
			if err := ethtool.SetGRO(self.Ifname, false); err != nil {
				return err
			}
		}
		if err := shapePort(h, links[i], cfg, shaping.Link{RateBps: params.RateBps, BufferBytes: params.BufferBytes, MTU: mtu}, re.qdisc(links[i].Attrs().Index)); err != nil {
			return err
		}
	}
	if err := sw.SetUplinks(tab.Uplinks); err != nil {
		return err
	}
	if err := writeRoutes(sw, tab, nil); err != nil {
		return err
	}
	if re != nil {
		for pfx := range re.routes {
			if !slices.ContainsFunc(tab.Routes, func(r routing.Route) bool { return r.Prefix == pfx }) {
				if err := sw.DeleteRoute(pfx); err != nil {
					return fmt.Errorf("remove route %s: %w", pfx, err)
				}
			}
		}
	}
	return writePointers(sw, cfg, tab, seed, pipes)
}

// shapePort gives a port the shaping of cfg's mode: the HTB tree at the
// link's rate in shaped mode, none in line-rate mode. before, if not nil,
// is the port's root qdisc as an earlier install left it: its tree is
// renewed (shaping.Renew: nothing queued, no drops counted), or removed.
func shapePort(h *netlink.Handle, link netlink.Link, cfg Config, l shaping.Link, before *shaping.Stats) error {
	switch {
	case cfg.Mode != ModeShaped && before != nil:
		if !before.Installed {
			return nil
		}
		return shaping.Remove(h, link)
	case cfg.Mode != ModeShaped:
		return nil
	case before != nil:
		return shaping.Renew(h, link, l, *before)
	}
	return shaping.Install(h, link, l)
}

// writeRoutes programs a routing table: valid sets first, then routes, so
// no route ever points at a set that is not written yet; then prefixes of
// the previous table that the new one lacks are removed. NoRoute entries
// are Up routes to an empty valid set, kept as longest-prefix exceptions.
func writeRoutes(sw *bpf.Switch, tab, previous *routing.Table) error {
	blackhole := len(tab.ValidSets)
	for i, v := range tab.ValidSets {
		if err := sw.SetGroupValid(i, v); err != nil {
			return err
		}
	}
	if err := sw.SetGroupValid(blackhole, 0); err != nil {
		return err
	}
	have := map[netip.Prefix]bool{}
	for _, r := range tab.Routes {
		var br bpf.Route
		switch r.Kind {
		case routing.Local:
			br = bpf.Local()
		case routing.Down:
			br = bpf.Down(r.Port)
		case routing.Up:
			br = bpf.UpSet(r.Pointer, r.ValidSet)
		default:
			br = bpf.UpSet(0, blackhole)
		}
		if err := sw.AddRoute(r.Prefix, br); err != nil {
			return fmt.Errorf("route %s: %w", r.Prefix, err)
		}
		have[r.Prefix] = true
	}
	if previous != nil {
		for _, r := range previous.Routes {
			if !have[r.Prefix] {
				if err := sw.DeleteRoute(r.Prefix); err != nil {
					return fmt.Errorf("remove route %s: %w", r.Prefix, err)
				}
			}
		}
	}
	return nil
}

// writePointers gives every Ofan pointer its order (Appendix F.2) and a
// random start, ACK pointers half a rotation from their data pointer; each
// pOfan pipe gets independent starts. rr gets one random start.
func writePointers(sw *bpf.Switch, cfg Config, tab *routing.Table, seed uint64, pipes int) error {
	w := len(tab.Uplinks)
	if w == 0 || tab.Pointers == 0 {
		return nil
	}
	for pipe := 0; pipe < pipes; pipe++ {
		data, ack := ofan.Starts(ofan.PipeSeed(seed, pipe), tab.Pointers, w)
		for d := 0; d < tab.Pointers; d++ {
			for _, class := range []bpf.Class{bpf.ClassData, bpf.ClassAck} {
				start := data[d]
				if class == bpf.ClassAck {
					start = ack[d]
				}
				order := ofan.Order(w, ofan.ID(d, int(class), tab.Pointers, w))
				if err := sw.SetPointer(bpf.PointerKey{Group: d, Class: class, Pipe: pipe}, uint32(start), order); err != nil {
					return err
				}
			}
		}
	}
	data, _ := ofan.Starts(seed, 1, w)
	return sw.SetRRCounter(uint32(data[0]))
}
