package fabric

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"

	"github.com/ftlab/ftlab/internal/ethtool"
	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/topology"
)

// Options control a build.
type Options struct {
	// Namespace maps a node name to its namespace name. Required.
	Namespace func(node string) string
	// Workers is the number of nodes worked on at once; 0 picks a default.
	Workers int
	// DataPlane, if set, installs the data plane after every link exists
	// and before any is up. On a down interface the kernel skips what
	// makes qdisc changes and transmit queue resizes expensive on an up
	// one (deactivating the device, a grace period under the RTNL lock):
	// a shaped k=8 fabric's data plane installs in less time there.
	DataPlane func(context.Context) error
	// TxQueueLen, if set, gives the transmit queue length of one end of
	// a link (0: the default, 1000). Shaping sizes its leaf queues by it;
	// setting it at creation spares a change per port later.
	TxQueueLen func(l *topology.Link, side topology.Side) int
}

// Timings says where the time of a build went.
type Timings struct {
	Namespaces time.Duration `json:"namespaces"`
	Links      time.Duration `json:"links"`
	Config     time.Duration `json:"config"`
	DataPlane  time.Duration `json:"dataplane,omitempty"` // Options.DataPlane, if given
	Total      time.Duration `json:"total"`
}

// hostTxQueueLen is the transmit queue of every lab interface. The data plane
// replaces the root qdisc of shaped ports; this only bounds the default one.
const hostTxQueueLen = 1000

// stage names a build pass; failures name the pass they happened in.
type stage string

const (
	stageNamespaces stage = "namespaces"
	stageLinks      stage = "links"
	stageConfig     stage = "config"
	stageDataPlane  stage = "data plane"
)

// testHookBeforeNode, when set by tests, runs before each node's work in a
// pass and can fail it, to exercise rollback.
var testHookBeforeNode func(s stage, node string) error

// Build creates the fabric of t. On error or cancellation every namespace it
// created is removed again before it returns.
func Build(ctx context.Context, t *topology.Topology, opt Options) (Timings, error) {
	if opt.Namespace == nil {
		return Timings{}, errors.New("fabric: Options.Namespace is required")
	}
	b := &builder{topo: t, opt: opt, handles: make(map[string]netns.NsHandle, len(t.Nodes))}
	if b.opt.Workers <= 0 {
		// Namespace and link creation serialize on kernel locks; a few
		// more workers than cores hide the syscall round trips.
		b.opt.Workers = 2 * runtime.NumCPU()
	}
	tm, err := b.run(ctx)
	b.closeHandles()
	if err != nil {
		if rerr := Remove(b.created()); rerr != nil {
			err = errors.Join(err, fmt.Errorf("roll back: %w", rerr))
		}
		return tm, err
	}
	return tm, nil
}

type builder struct {
	topo *topology.Topology
	opt  Options

	mu      sync.Mutex
	handles map[string]netns.NsHandle // node name -> open namespace handle
	made    []string                  // namespaces created, in order
}

func (b *builder) run(ctx context.Context) (Timings, error) {
	var tm Timings
	start := time.Now()
	passes := []struct {
		s   stage
		d   *time.Duration
		run func(context.Context) error
	}{
		{stageNamespaces, &tm.Namespaces, b.createNamespaces},
		{stageLinks, &tm.Links, b.createLinks},
		{stageDataPlane, &tm.DataPlane, b.opt.DataPlane},
		{stageConfig, &tm.Config, b.configure},
	}
	for _, p := range passes {
		if p.run == nil {
			continue
		}
		t0 := time.Now()
		if err := p.run(ctx); err != nil {
			return tm, fmt.Errorf("build %s: %w", p.s, err)
		}
		*p.d = time.Since(t0)
	}
	tm.Total = time.Since(start)
	return tm, nil
}

func (b *builder) created() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.made...)
}

func (b *builder) closeHandles() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, h := range b.handles {
		h.Close()
	}
	b.handles = nil
}

func (b *builder) handle(node string) netns.NsHandle {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.handles[node]
}

// forEach runs fn for every item on opt.Workers goroutines and stops at the
// first error or at cancellation.
func forEach[T any](ctx context.Context, workers int, s stage, items []T, name func(T) string, fn func(T) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for _, it := range items {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			if testHookBeforeNode != nil {
				if err := testHookBeforeNode(s, name(it)); err != nil {
					return err
				}
			}
			return fn(it)
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err() // the caller's: the group's own is cancelled by Wait
}

func nodeName(n *topology.Node) string { return n.Name }

// nodes returns pointers to every node of the topology.
func (b *builder) nodes() []*topology.Node {
	out := make([]*topology.Node, len(b.topo.Nodes))
	for i := range b.topo.Nodes {
		out[i] = &b.topo.Nodes[i]
	}
	return out
}

// namespaceSysctls are written in every new lab namespace. IPv6 is off so
// no link-local addresses, DAD or router solicitations appear on lab links;
// reverse-path filtering is off so results never depend on the sysctls of
// the machine's own namespace, which new namespaces may inherit.
var namespaceSysctls = []struct{ key, value string }{
	{"net/ipv6/conf/all/disable_ipv6", "1"},
	{"net/ipv6/conf/default/disable_ipv6", "1"},
	{"net/ipv4/conf/all/rp_filter", "0"},
	{"net/ipv4/conf/default/rp_filter", "0"},
}

func initNamespace() error {
	_, ipv6Err := os.Stat("/proc/sys/net/ipv6")
	for _, s := range namespaceSysctls {
		if ipv6Err != nil && len(s.key) > 8 && s.key[:8] == "net/ipv6" {
			continue // IPv6 is not built into this kernel: nothing to silence
		}
		if err := nsutil.WriteSysctl(s.key, s.value); err != nil {
			return err
		}
	}
	return nil
}

func (b *builder) createNamespaces(ctx context.Context) error {
	return forEach(ctx, b.opt.Workers, stageNamespaces, b.nodes(), nodeName, func(n *topology.Node) error {
		name := b.opt.Namespace(n.Name)
		h, err := nsutil.Create(name, initNamespace)
		if err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		b.made = append(b.made, name)
		if b.handles == nil { // closed by a concurrent failure
			h.Close()
			return context.Canceled
		}
		b.handles[n.Name] = h
		return nil
	})
}

// createLinks makes every veth pair from the namespace of its lower (A) end,
// with the upper end created directly in the B node's namespace, both ends
// down (configure brings them up) and with the lab-unique ifindexes of
// Ifindex.
func (b *builder) createLinks(ctx context.Context) error {
	byA := make(map[string][]*topology.Link)
	var owners []*topology.Node
	for i := range b.topo.Links {
		l := &b.topo.Links[i]
		if _, ok := byA[l.A.Node]; !ok {
			n, _ := b.topo.Node(l.A.Node)
			owners = append(owners, n)
		}
		byA[l.A.Node] = append(byA[l.A.Node], l)
	}
	return forEach(ctx, b.opt.Workers, stageLinks, owners, nodeName, func(n *topology.Node) error {
		s, err := nl.GetNetlinkSocketAt(b.handle(n.Name), netns.None(), unix.NETLINK_ROUTE)
		if err != nil {
			return fmt.Errorf("node %s: netlink: %w", n.Name, err)
		}
		defer s.Close()
		sock := &nl.SocketHandle{Socket: s}
		for _, l := range byA[n.Name] {
			if err := ctx.Err(); err != nil {
				return err
			}
			a := vethEnd{name: l.A.Ifname, mac: l.A.MAC, index: Ifindex(l, topology.SideA), txqlen: b.txQueueLen(l, topology.SideA)}
			z := vethEnd{name: l.B.Ifname, mac: l.B.MAC, index: Ifindex(l, topology.SideB), txqlen: b.txQueueLen(l, topology.SideB)}
			if err := retry(func() error { return addVeth(sock, a, z, l.MTU, b.handle(l.B.Node)) }); err != nil {
				return fmt.Errorf("link %s: create veth: %w", l.Name, err)
			}
		}
		return nil
	})
}

func (b *builder) txQueueLen(l *topology.Link, side topology.Side) int {
	if b.opt.TxQueueLen != nil {
		if n := b.opt.TxQueueLen(l, side); n > 0 {
			return n
		}
	}
	return hostTxQueueLen
}

// configure sets up every namespace from inside it: the netlink handle, the
// ethtool socket and the sysctls all act on the thread's namespace.
func (b *builder) configure(ctx context.Context) error {
	err := forEach(ctx, b.opt.Workers, stageConfig, b.nodes(), nodeName, func(n *topology.Node) error {
		return nsutil.Do(b.handle(n.Name), func() error {
			if err := b.configureNode(n); err != nil {
				return fmt.Errorf("node %s: %w", n.Name, err)
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	// Once both ends of a veth are up, the kernel activates its qdisc
	// from a work item (linkwatch), which a busy machine runs late;
	// until then the interface drops what it is given. A fabric is
	// built when every port is operationally up.
	return forEach(ctx, b.opt.Workers, stageConfig, b.nodes(), nodeName, func(n *topology.Node) error {
		if err := b.waitPortsUp(ctx, n); err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
		return nil
	})
}

// portsUpTimeout bounds the wait for a node's ports to come up.
const portsUpTimeout = 10 * time.Second

// waitPortsUp waits until every port of n is operationally up.
func (b *builder) waitPortsUp(ctx context.Context, n *topology.Node) error {
	h, err := netlink.NewHandleAt(b.handle(n.Name))
	if err != nil {
		return fmt.Errorf("netlink: %w", err)
	}
	defer h.Close()
	deadline := time.Now().Add(portsUpTimeout)
	for {
		links, err := h.LinkList()
		if err != nil {
			return fmt.Errorf("list links: %w", err)
		}
		state := make(map[string]netlink.LinkOperState, len(links))
		for _, l := range links {
			state[l.Attrs().Name] = l.Attrs().OperState
		}
		down := ""
		for _, p := range n.Ports {
			if name := b.topo.Links[p.Link].End(p.Side).Ifname; state[name] != netlink.OperUp {
				down = name
				break
			}
		}
		if down == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("port %s is %s after %v", down, state[down], portsUpTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
}

func (b *builder) configureNode(n *topology.Node) error {
	h, err := netlink.NewHandle(unix.NETLINK_ROUTE)
	if err != nil {
		return fmt.Errorf("netlink: %w", err)
	}
	defer h.Close()
	links, err := h.LinkList()
	if err != nil {
		return fmt.Errorf("list links: %w", err)
	}
	byName := make(map[string]netlink.Link, len(links))
	for _, l := range links {
		byName[l.Attrs().Name] = l
	}
	if lo, ok := byName["lo"]; ok {
		if err := retry(func() error { return h.LinkSetUp(lo) }); err != nil {
			return fmt.Errorf("lo up: %w", err)
		}
	}
	for _, p := range n.Ports {
		self := b.topo.Links[p.Link].End(p.Side)
		peer := b.topo.Peer(p)
		peerNode, ok := b.topo.Node(peer.Node)
		if !ok {
			return fmt.Errorf("port %s: unknown peer %s", self.Ifname, peer.Node)
		}
		link, ok := byName[self.Ifname]
		if !ok {
			return fmt.Errorf("port %s: interface missing", self.Ifname)
		}
		if err := b.configurePort(h, n, link, peerNode, peer); err != nil {
			return fmt.Errorf("port %s: %w", self.Ifname, err)
		}
	}
	return nil
}

func hostRoute(a net.IP) *net.IPNet { return &net.IPNet{IP: a, Mask: net.CIDRMask(32, 32)} }

// configurePort gives one port its addresses, peer route and neighbour.
// Hosts carry their own address and a default route through their edge
// switch; switch ports carry the switch's identity address (unnumbered
// links) and a /32 route to the peer.
func (b *builder) configurePort(h *netlink.Handle, n *topology.Node, link netlink.Link, peerNode *topology.Node, peer *topology.Endpoint) error {
	idx := link.Attrs().Index
	self := net.IP(n.Addr.AsSlice())
	peerIP := net.IP(peerNode.Addr.AsSlice())
	if link.Attrs().Flags&net.FlagUp == 0 {
		if err := retry(func() error { return h.LinkSetUp(link) }); err != nil {
			return fmt.Errorf("set up: %w", err)
		}
	}
	addr := &netlink.Addr{IPNet: hostRoute(self)}
	if err := retry(func() error { return h.AddrAdd(link, addr) }); err != nil {
		return fmt.Errorf("add address %s: %w", n.Addr, err)
	}
	neigh := &netlink.Neigh{
		LinkIndex:    idx,
		Family:       unix.AF_INET,
		State:        netlink.NUD_PERMANENT,
		IP:           peerIP,
		HardwareAddr: peer.MAC,
	}
	if err := retry(func() error { return h.NeighAdd(neigh) }); err != nil {
		return fmt.Errorf("add neighbour %s: %w", peerNode.Addr, err)
	}
	route := &netlink.Route{LinkIndex: idx, Dst: hostRoute(peerIP), Scope: netlink.SCOPE_LINK}
	if n.Role == topology.RoleHost {
		// Everything, also the other hosts of the same edge switch, goes
		// through the gateway: the switch is the only thing on this wire.
		route = &netlink.Route{LinkIndex: idx, Gw: peerIP, Flags: int(netlink.FLAG_ONLINK)}
	}
	if err := retry(func() error { return h.RouteAdd(route) }); err != nil {
		return fmt.Errorf("add route to %s: %w", peerNode.Addr, err)
	}
	if n.Role == topology.RoleHost {
		name := link.Attrs().Name
		if err := ethtool.SetTxChecksum(name, false); err != nil {
			return err
		}
		if err := ethtool.SetGRO(name, true); err != nil {
			return err
		}
	}
	return nil
}
