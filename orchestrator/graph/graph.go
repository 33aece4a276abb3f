// Package graph draws a fabric: its nodes by tier (cores, aggregations,
// edges, hosts; spines, leaves, hosts), pods grouped, every link with its
// state and, for a lab, its counters per direction. It renders SVG (laid
// out by ftlab itself, no graphviz), a self-contained HTML page around
// it, Graphviz dot and Mermaid text, and JSON (the model), so that a live
// view can reuse the same drawing.
package graph

import (
	"github.com/ftlab/ftlab/internal/topology"
)

// Graph is a fabric to draw.
type Graph struct {
	Title  string        `json:"title"`
	Kind   topology.Kind `json:"kind"`
	Nodes  []Node        `json:"nodes"`
	Links  []Link        `json:"links"`
	Pods   []Pod         `json:"pods"`
	Stats  bool          `json:"stats"` // links carry counters
	Width  float64       `json:"width"`
	Height float64       `json:"height"`
}

// Node is one node, placed by Layout.
type Node struct {
	Name string        `json:"name"`
	Role topology.Role `json:"role"`
	Tier int           `json:"tier"` // 0 hosts .. 3 cores
	Pod  int           `json:"pod"`  // fat tree: pod; leaf-spine: leaf; -1 for the top tier
	Addr string        `json:"addr"`
	X    float64       `json:"x"`
	Y    float64       `json:"y"`
}

// Pod is a group of nodes drawn in one box: a fat tree's pod (its
// aggregation and edge switches and hosts) or a leaf with its hosts.
type Pod struct {
	Name           string  `json:"name"`
	X0, Y0, X1, Y1 float64 `json:"-"`
	Index          int     `json:"index"`
	Nodes          int     `json:"nodes"`
}

// LinkState is how a link is.
type LinkState string

const (
	LinkUp     LinkState = "up"
	LinkFailed LinkState = "failed" // failed on purpose (ftlab link down, a scenario fault)
	LinkDown   LinkState = "down"   // an interface is down or missing without a failure recorded
)

// Link is one link between A (the lower tier) and B.
type Link struct {
	Name  string         `json:"name"`
	A     string         `json:"a"`
	B     string         `json:"b"`
	Stage topology.Stage `json:"stage"`
	State LinkState      `json:"state"`
	// Up is the direction A->B, Down B->A; nil without counters.
	Up   *Direction `json:"up,omitempty"`
	Down *Direction `json:"down,omitempty"`
}

// Direction is one direction's counters.
type Direction struct {
	Packets uint64 `json:"packets"`
	Bytes   uint64 `json:"bytes"`
	// Drops of frames sent this way: the sender's egress queue (buffer),
	// the receiver's ingress (corruption), a failed end (link down).
	Drops     uint64 `json:"drops"`
	DropQueue uint64 `json:"drop_queue"`
	DropLoss  uint64 `json:"drop_corrupt"`
	DropDown  uint64 `json:"drop_link_down"`
}

// FromTopology is the graph of a topology, every link up, laid out.
func FromTopology(t *topology.Topology) *Graph {
	g := &Graph{Title: t.String(), Kind: t.Kind}
	for i := range t.Nodes {
		n := &t.Nodes[i]
		g.Nodes = append(g.Nodes, Node{Name: n.Name, Role: n.Role, Tier: n.Role.Tier(), Pod: podOf(t, n), Addr: n.Addr.String()})
	}
	for i := range t.Links {
		l := &t.Links[i]
		g.Links = append(g.Links, Link{Name: l.Name, A: l.A.Node, B: l.B.Node, Stage: l.Stage, State: LinkUp})
	}
	g.layout()
	return g
}

// podOf is the group a node is drawn in.
func podOf(t *topology.Topology, n *topology.Node) int {
	switch n.Role {
	case topology.RoleCore, topology.RoleSpine:
		return -1
	}
	if t.Kind == topology.LeafSpine {
		return n.Edge
	}
	return n.Pod
}

// SetState marks links failed (by link ID) or down (by link name).
func (g *Graph) SetState(failed map[int]bool, down map[string]bool) {
	for i := range g.Links {
		switch {
		case failed[i]:
			g.Links[i].State = LinkFailed
		case down[g.Links[i].Name]:
			g.Links[i].State = LinkDown
		default:
			g.Links[i].State = LinkUp
		}
	}
}

// Counts is what a graph has, for checks and summaries.
type Counts struct {
	Nodes  map[topology.Role]int
	Links  int
	Failed int
}

// Count counts the graph's nodes by role and its links.
func (g *Graph) Count() Counts {
	c := Counts{Nodes: map[topology.Role]int{}, Links: len(g.Links)}
	for _, n := range g.Nodes {
		c.Nodes[n.Role]++
	}
	for _, l := range g.Links {
		if l.State == LinkFailed {
			c.Failed++
		}
	}
	return c
}
