package bpf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
)

// RouteKind is what a route does.
type RouteKind uint32

const (
	RouteDown  RouteKind = RouteKind(xdpIngressFtlRouteKindROUTE_DOWN)  // out of one port
	RouteUp    RouteKind = RouteKind(xdpIngressFtlRouteKindROUTE_UP)    // a valid uplink of a group
	RouteLocal RouteKind = RouteKind(xdpIngressFtlRouteKindROUTE_LOCAL) // to the switch itself
)

// Route is the value of a route table entry.
type Route struct {
	Kind     RouteKind
	Port     int // RouteDown: the egress port
	Group    int // RouteUp: the pointer group (ofan destination index)
	ValidSet int // RouteUp: the valid set (SetGroupValid index) to choose from
}

// Down routes out of one port.
func Down(port int) Route { return Route{Kind: RouteDown, Port: port} }

// Up routes to a valid uplink of group, whose valid set has the same index.
func Up(group int) Route { return Route{Kind: RouteUp, Group: group, ValidSet: group} }

// UpSet routes to a valid uplink of valid set vset, with group's pointers.
func UpSet(group, vset int) Route { return Route{Kind: RouteUp, Group: group, ValidSet: vset} }

// Local delivers to the switch itself.
func Local() Route { return Route{Kind: RouteLocal} }

// routeKey is the LPM key of a prefix in switch sw's table: the switch's
// 32 bits always match, then the prefix (c/structs.h).
func routeKey(sw int, p netip.Prefix) (xdpIngressRouteKey, error) {
	if !p.IsValid() || !p.Addr().Is4() {
		return xdpIngressRouteKey{}, fmt.Errorf("bpf: route %s: not an IPv4 prefix", p)
	}
	p = p.Masked()
	return xdpIngressRouteKey{Prefixlen: 32 + uint32(p.Bits()), Sw: uint32(sw), Addr: be32(p.Addr())}, nil
}

// AddRoute adds or replaces the route for a destination prefix.
func (s *Switch) AddRoute(p netip.Prefix, r Route) error {
	key, err := routeKey(s.id, p)
	if err != nil {
		return err
	}
	v := xdpIngressRouteVal{Kind: xdpIngressFtlRouteKind(r.Kind)}
	switch r.Kind {
	case RouteDown:
		if err := s.checkPort(r.Port); err != nil {
			return fmt.Errorf("bpf: route %s: %w", p, err)
		}
		v.Arg = uint32(r.Port)
	case RouteUp:
		if err := s.checkGroup(r.Group); err != nil {
			return fmt.Errorf("bpf: route %s: %w", p, err)
		}
		if err := s.checkGroup(r.ValidSet); err != nil {
			return fmt.Errorf("bpf: route %s: valid set: %w", p, err)
		}
		v.Arg = uint32(r.Group)
		v.Vset = uint32(r.ValidSet)
	case RouteLocal:
	default:
		return fmt.Errorf("bpf: route %s: invalid kind %d", p, r.Kind)
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if err := s.maps.Routes.Put(&key, &v); err != nil {
		return fmt.Errorf("bpf: add route %s: %w", p, err)
	}
	return nil
}

// DeleteRoute removes the route for exactly this prefix.
func (s *Switch) DeleteRoute(p netip.Prefix) error {
	key, err := routeKey(s.id, p)
	if err != nil {
		return err
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if err := s.maps.Routes.Delete(&key); err != nil {
		return fmt.Errorf("bpf: delete route %s: %w", p, err)
	}
	return nil
}

func (s *Switch) checkGroup(g int) error {
	if g < 0 || g >= s.opts.MaxGroups {
		return fmt.Errorf("bpf: group %d out of range (0..%d)", g, s.opts.MaxGroups-1)
	}
	return nil
}

// SetGroupValid sets valid set `group` (by default a route's valid set
// has its group's index, see Up and UpSet) to the bitmap of currently
// valid uplinks (bit u = uplink index u).
func (s *Switch) SetGroupValid(group int, valid uint64) error {
	if err := s.checkGroup(group); err != nil {
		return err
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if err := s.maps.Groups.Put(s.cfg.GroupBase+uint32(group), valid); err != nil {
		return fmt.Errorf("bpf: group %d: %w", group, err)
	}
	return nil
}

// GroupValid reads valid set group's bitmap back.
func (s *Switch) GroupValid(group int) (uint64, error) {
	if err := s.checkGroup(group); err != nil {
		return 0, err
	}
	if err := s.lock(); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	var v uint64
	if err := s.maps.Groups.Lookup(s.cfg.GroupBase+uint32(group), &v); err != nil {
		return 0, fmt.Errorf("bpf: group %d: %w", group, err)
	}
	return v, nil
}

// Routes reads every switch's route table back: switch id, prefix, route.
// One walk of the plane's trie, however many switches it has.
func (p *Plane) Routes() (map[int]map[netip.Prefix]Route, error) {
	if p.closed.Load() {
		return nil, errors.New("bpf: plane is closed")
	}
	out := map[int]map[netip.Prefix]Route{}
	var k xdpIngressRouteKey
	var v xdpIngressRouteVal
	it := p.maps.Routes.Iterate()
	for it.Next(&k, &v) {
		var a [4]byte
		binary.NativeEndian.PutUint32(a[:], k.Addr)
		pfx := netip.PrefixFrom(netip.AddrFrom4(a), int(k.Prefixlen)-32)
		r := Route{Kind: RouteKind(v.Kind)}
		switch r.Kind {
		case RouteDown:
			r.Port = int(v.Arg)
		case RouteUp:
			r.Group, r.ValidSet = int(v.Arg), int(v.Vset)
		}
		sw := int(k.Sw)
		if out[sw] == nil {
			out[sw] = map[netip.Prefix]Route{}
		}
		out[sw][pfx] = r
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("bpf: read routes: %w", err)
	}
	return out, nil
}

// SetUplinks writes the whole uplink table: uplink index u is port
// ports[u]; the uplink count becomes len(ports).
func (s *Switch) SetUplinks(ports []int) error {
	if len(ports) > MaxUplinks {
		return fmt.Errorf("bpf: %d uplinks, at most %d", len(ports), MaxUplinks)
	}
	for _, p := range ports {
		if err := s.checkPort(p); err != nil {
			return err
		}
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	for u, p := range ports {
		if err := s.maps.Uplinks.Put(s.uplinkKey(u), uint32(p)); err != nil {
			return fmt.Errorf("bpf: uplink %d: %w", u, err)
		}
	}
	s.cfg.N_uplinks = uint32(len(ports))
	return s.writeCfg()
}

// PointerKey names an ofan/pofan pointer. Pipe is 0 for ofan.
type PointerKey struct {
	Group int
	Class Class
	Pipe  int
}

// PointerIndex is the pointer table index the data plane uses for k
// under the current configuration: ((group*2+class)*pipes+pipe), where
// pipes is Config.Pipes for pofan and 1 otherwise.
func (s *Switch) PointerIndex(k PointerKey) (int, error) {
	s.mu.Lock()
	pipes := 1
	if Policy(s.cfg.Policy) == PolicyPofan && s.cfg.N_pipes > 1 {
		pipes = int(s.cfg.N_pipes)
	}
	s.mu.Unlock()
	if err := s.checkGroup(k.Group); err != nil {
		return 0, err
	}
	if k.Class != ClassData && k.Class != ClassAck {
		return 0, fmt.Errorf("bpf: invalid class %d", k.Class)
	}
	if k.Pipe < 0 || k.Pipe >= pipes {
		return 0, fmt.Errorf("bpf: pipe %d out of range (0..%d)", k.Pipe, pipes-1)
	}
	i := (k.Group*NumClasses+int(k.Class))*pipes + k.Pipe
	if i >= s.opts.MaxPointers {
		return 0, fmt.Errorf("bpf: pointer index %d beyond the table (%d entries; raise Options.MaxPointers)", i, s.opts.MaxPointers)
	}
	return i, nil
}

func makePointer(counter uint32, order []int) (xdpIngressPointer, error) {
	v := xdpIngressPointer{Counter: counter}
	if len(order) > MaxUplinks {
		return v, fmt.Errorf("bpf: pointer order has %d entries, at most %d", len(order), MaxUplinks)
	}
	for i, u := range order {
		if u < 0 || u >= MaxUplinks {
			return v, fmt.Errorf("bpf: pointer order[%d] = %d is not an uplink index", i, u)
		}
		v.Order[i] = uint8(u)
	}
	return v, nil
}

// SetPointer writes an ofan/pofan pointer: its counter and its order of
// uplink indexes (one entry per uplink: order[(counter+i) % n_uplinks]).
// Set the configuration (policy, pipes) first: it decides the index.
func (s *Switch) SetPointer(k PointerKey, counter uint32, order []int) error {
	i, err := s.PointerIndex(k)
	if err != nil {
		return err
	}
	v, err := makePointer(counter, order)
	if err != nil {
		return err
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if err := s.maps.Ptrs.Put(s.cfg.PtrBase+uint32(i), &v); err != nil {
		return fmt.Errorf("bpf: pointer %+v: %w", k, err)
	}
	return nil
}

// Pointer reads an ofan/pofan pointer back: its counter and the first
// n_uplinks entries of its order.
func (s *Switch) Pointer(k PointerKey) (uint32, []int, error) {
	i, err := s.PointerIndex(k)
	if err != nil {
		return 0, nil, err
	}
	if err := s.lock(); err != nil {
		return 0, nil, err
	}
	defer s.mu.Unlock()
	var v xdpIngressPointer
	if err := s.maps.Ptrs.Lookup(s.cfg.PtrBase+uint32(i), &v); err != nil {
		return 0, nil, fmt.Errorf("bpf: pointer %+v: %w", k, err)
	}
	w := int(min(s.cfg.N_uplinks, MaxUplinks))
	order := make([]int, w)
	for j := range order {
		order[j] = int(v.Order[j])
	}
	return v.Counter, order, nil
}

// SetRRCounter sets the counter of the rr policy's switch-wide pointer
// (its order is the identity).
func (s *Switch) SetRRCounter(counter uint32) error {
	v := xdpIngressPointer{Counter: counter}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if err := s.maps.RrPtr.Put(uint32(s.id), &v); err != nil {
		return fmt.Errorf("bpf: rr pointer: %w", err)
	}
	return nil
}

// RRCounter returns the counter of the rr pointer.
func (s *Switch) RRCounter() (uint32, error) {
	var v xdpIngressPointer
	if err := s.lock(); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	if err := s.maps.RrPtr.Lookup(uint32(s.id), &v); err != nil {
		return 0, fmt.Errorf("bpf: rr pointer: %w", err)
	}
	return v.Counter, nil
}
