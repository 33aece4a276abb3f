package routing

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
)

// Kind says what a switch does with packets matching a route.
type Kind uint8

const (
	// NoRoute drops the packet: the destination is unreachable from here.
	// It is the zero Kind so a forgotten route fails closed.
	NoRoute Kind = iota
	// Local delivers the packet to the switch itself.
	Local
	// Down forwards it on Route.Port, towards the hosts.
	Down
	// Up forwards it on one of the uplinks in ValidSets[Route.ValidSet],
	// picked by pointer group Route.Pointer.
	Up
)

func (k Kind) String() string {
	switch k {
	case NoRoute:
		return "noroute"
	case Local:
		return "local"
	case Down:
		return "down"
	case Up:
		return "up"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Route is one entry of a switch's forwarding table. Fields that do not
// apply to the Kind are -1.
type Route struct {
	Prefix   netip.Prefix
	Kind     Kind
	Port     int // Down: the port to send on
	Pointer  int // Up: the pointer group (Ofan destination index)
	ValidSet int // Up: index into Table.ValidSets
}

// Table is the forwarding state of one switch.
type Table struct {
	Switch string
	// Uplinks maps an uplink index (a bit of a valid set) to the port
	// number on the switch, in port order.
	Uplinks []int
	// Pointers is the number of pointer groups, the N_d of Ofan: every edge
	// switch at an edge, every pod at an aggregation switch, every leaf at
	// a leaf; 0 at switches without uplinks. Destinations are numbered
	// globally, so the switch's own index is allocated but unused.
	Pointers int
	// ValidSets are the distinct bitmaps of uplinks (bit i: Uplinks[i]) that
	// lead to some destination; never empty.
	ValidSets []uint64
	// Routes, sorted by prefix address then length.
	Routes []Route
}

// Lookup returns the longest-prefix match for a, as the data plane does.
func (t *Table) Lookup(a netip.Addr) (Route, bool) {
	best := -1
	for i, r := range t.Routes {
		if r.Prefix.Contains(a) && (best < 0 || r.Prefix.Bits() > t.Routes[best].Prefix.Bits()) {
			best = i
		}
	}
	if best < 0 {
		return Route{}, false
	}
	return t.Routes[best], true
}

// Valid returns the uplink mask of an Up route (0 for other kinds).
func (t *Table) Valid(r Route) uint64 {
	if r.Kind != Up {
		return 0
	}
	return t.ValidSets[r.ValidSet]
}

// builder accumulates a table's routes; finish sorts them and numbers the
// valid sets.
type builder struct {
	t     *Table
	masks []uint64 // per route, the valid mask of Up routes
}

func (b *builder) local(p netip.Prefix) { b.add(Route{Prefix: p, Kind: Local}, 0) }

func (b *builder) noRoute(p netip.Prefix) { b.add(Route{Prefix: p, Kind: NoRoute}, 0) }

// down adds a Down route, or NoRoute if the port's link is down.
func (b *builder) down(p netip.Prefix, port int, up bool) {
	if !up {
		b.noRoute(p)
		return
	}
	b.add(Route{Prefix: p, Kind: Down, Port: port}, 0)
}

// up adds an Up route, or NoRoute if no uplink is valid.
func (b *builder) up(p netip.Prefix, pointer int, valid uint64) {
	if valid == 0 {
		b.noRoute(p)
		return
	}
	b.add(Route{Prefix: p, Kind: Up, Pointer: pointer}, valid)
}

func (b *builder) add(r Route, mask uint64) {
	if r.Kind != Down {
		r.Port = -1
	}
	if r.Kind != Up {
		r.Pointer = -1
	}
	r.ValidSet = -1
	b.t.Routes = append(b.t.Routes, r)
	b.masks = append(b.masks, mask)
}

func (b *builder) finish() *Table {
	t := b.t
	for i, r := range t.Routes {
		if r.Kind == Up {
			t.ValidSets = append(t.ValidSets, b.masks[i])
		}
	}
	slices.Sort(t.ValidSets)
	t.ValidSets = slices.Compact(t.ValidSets)
	for i := range t.Routes {
		if t.Routes[i].Kind == Up {
			t.Routes[i].ValidSet, _ = slices.BinarySearch(t.ValidSets, b.masks[i])
		}
	}
	slices.SortFunc(t.Routes, func(x, y Route) int {
		if c := x.Prefix.Addr().Compare(y.Prefix.Addr()); c != 0 {
			return c
		}
		return cmp.Compare(x.Prefix.Bits(), y.Prefix.Bits())
	})
	return t
}
