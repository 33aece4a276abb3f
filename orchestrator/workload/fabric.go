package workload

import (
	"fmt"
	"slices"

	"github.com/ftlab/ftlab/internal/topology"
)

// Host is a host as workloads see it: where it sits and how fast its link
// is.
type Host struct {
	Name string
	// Pod is the group an inter-pod permutation must leave: the pod in a
	// fat tree, the leaf in a leaf-spine fabric.
	Pod int
	// Rack numbers the edge switch (leaf) the host hangs off, fabric-wide.
	Rack int
	// SendBps and RecvBps are the rates of the host's link towards the
	// fabric and back (Up and Down of its host link).
	SendBps, RecvBps uint64
}

// Fabric is what workloads and the CCT bound need to know about a
// topology: its hosts in plan order, how many tiers packets climb, and the
// fastest link.
type Fabric struct {
	Hosts []Host
	// Tiers is 3 for a fat tree, 2 for a leaf-spine fabric.
	Tiers int
	// MTU is the smallest link MTU, so every packet fits every path.
	MTU int
	// MaxBps is the fastest link direction anywhere; a packet crosses no
	// link faster than this.
	MaxBps uint64

	index map[string]int
}

// FabricOf describes a resolved topology.
func FabricOf(t *topology.Topology) *Fabric {
	f := &Fabric{Tiers: 3, MTU: 0}
	if t.Kind == topology.LeafSpine {
		f.Tiers = 2
	}
	for i := range t.Links {
		l := &t.Links[i]
		if f.MTU == 0 || l.MTU < f.MTU {
			f.MTU = l.MTU
		}
		f.MaxBps = max(f.MaxBps, l.Up.RateBps, l.Down.RateBps)
	}
	for _, n := range t.Hosts() {
		h := Host{Name: n.Name}
		if t.Kind == topology.LeafSpine {
			h.Pod, h.Rack = n.Edge, n.Edge
		} else {
			h.Pod, h.Rack = n.Pod, n.Pod*t.K/2+n.Edge
		}
		if len(n.Ports) > 0 {
			l := &t.Links[n.Ports[0].Link]
			h.SendBps, h.RecvBps = l.Params(n.Ports[0].Side).RateBps, l.Params(1-n.Ports[0].Side).RateBps
		}
		f.Hosts = append(f.Hosts, h)
	}
	f.reindex()
	return f
}

func (f *Fabric) reindex() {
	f.index = make(map[string]int, len(f.Hosts))
	for i, h := range f.Hosts {
		f.index[h.Name] = i
	}
}

// Host returns the host with the given name.
func (f *Fabric) Host(name string) (Host, bool) {
	i, ok := f.lookup(name)
	if !ok {
		return Host{}, false
	}
	return f.Hosts[i], true
}

func (f *Fabric) lookup(name string) (int, bool) {
	if f.index == nil {
		f.reindex()
	}
	i, ok := f.index[name]
	return i, ok
}

// Subset returns the hosts with the given names, in the given order; nil
// names means every host in plan order.
func (f *Fabric) Subset(names []string) ([]Host, error) {
	if names == nil {
		return slices.Clone(f.Hosts), nil
	}
	out := make([]Host, 0, len(names))
	for _, n := range names {
		i, ok := f.lookup(n)
		if !ok {
			return nil, fmt.Errorf("no host named %q", n)
		}
		out = append(out, f.Hosts[i])
	}
	return out, nil
}

// Hops is the number of links on a shortest path between two hosts: 2
// under one edge switch (leaf), 4 within a fat-tree pod, and otherwise up
// to the top tier and back down (6 in a fat tree, 4 in a leaf-spine).
func (f *Fabric) Hops(a, b Host) int {
	switch {
	case a.Name == b.Name:
		return 0
	case a.Rack == b.Rack:
		return 2
	case f.Tiers == 3 && a.Pod == b.Pod:
		return 4
	}
	return 2 * f.Tiers
}
