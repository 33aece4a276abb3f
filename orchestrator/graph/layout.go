package graph

import (
	"fmt"
	"slices"

	"github.com/ftlab/ftlab/internal/topology"
)

// Layout: tiers are rows, the top tier (cores, spines) at the top, hosts
// at the bottom. Hosts are spaced evenly, each pod's hosts together with a
// gap between pods; an edge or leaf switch sits centred over its hosts,
// aggregation switches spread over their pod, core switches over the whole
// width in group order (core group j attaches to aggregation switch j of
// every pod).
const (
	margin    = 40.0
	hostGap   = 26.0 // between neighbouring hosts
	podGap    = 46.0 // extra space between pods: their boxes must not touch
	rowGap    = 130.0
	titleH    = 40.0 // title and legend
	nodeR     = 9.0  // host radius
	switchW   = 44.0 // switch box
	switchH   = 20.0
	podPad    = 16.0
	hostLabel = 46.0 // room under the host row for vertical names
)

func (g *Graph) layout() {
	idx := map[string]int{}
	for i := range g.Nodes {
		idx[g.Nodes[i].Name] = i
	}
	tiers := 3
	if g.Kind == topology.LeafSpine {
		tiers = 2
	}
	rowY := func(tier int) float64 { return margin + titleH + float64(tiers-tier)*rowGap }

	// Hosts: in plan order, which is pod order.
	x := margin
	lastPod := -2
	pods := map[int]*Pod{}
	var podOrder []int
	hostsOf := map[string][]float64{} // switch -> x of its hosts
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if n.Tier != 0 {
			continue
		}
		if lastPod != -2 && n.Pod != lastPod {
			x += podGap
		}
		lastPod = n.Pod
		n.X, n.Y = x, rowY(0)
		x += hostGap
	}
	width := x - hostGap + margin
	if width < margin*2 {
		width = margin * 2
	}

	// Edges and leaves: over their hosts (found through the links).
	for _, l := range g.Links {
		a, b := &g.Nodes[idx[l.A]], &g.Nodes[idx[l.B]]
		if a.Tier == 0 && b.Tier == 1 {
			hostsOf[b.Name] = append(hostsOf[b.Name], a.X)
		}
	}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if n.Tier != 1 {
			continue
		}
		n.Y = rowY(1)
		if xs := hostsOf[n.Name]; len(xs) > 0 {
			n.X = (slices.Min(xs) + slices.Max(xs)) / 2
		}
	}
	// A leaf or edge switch without hosts, and aggregation switches:
	// spread over the pod's span (its hosts' range), in plan order.
	span := map[int][2]float64{}
	for _, n := range g.Nodes {
		if n.Tier == 0 || (n.Tier == 1 && len(hostsOf[n.Name]) > 0) {
			s, ok := span[n.Pod]
			if !ok {
				s = [2]float64{n.X, n.X}
			}
			span[n.Pod] = [2]float64{min(s[0], n.X), max(s[1], n.X)}
		}
	}
	spread := func(tier int, filter func(*Node) bool) {
		byPod := map[int][]*Node{}
		var order []int
		for i := range g.Nodes {
			n := &g.Nodes[i]
			if n.Tier == tier && filter(n) {
				if byPod[n.Pod] == nil {
					order = append(order, n.Pod)
				}
				byPod[n.Pod] = append(byPod[n.Pod], n)
			}
		}
		for _, p := range order {
			s, ok := span[p]
			if !ok || p < 0 {
				s = [2]float64{margin, width - margin}
			}
			ns := byPod[p]
			for j, n := range ns {
				n.Y = rowY(tier)
				if len(ns) == 1 {
					n.X = (s[0] + s[1]) / 2
				} else {
					n.X = s[0] + (s[1]-s[0])*float64(j)/float64(len(ns)-1)
				}
			}
		}
	}
	spread(1, func(n *Node) bool { return len(hostsOf[n.Name]) == 0 })
	spread(2, func(*Node) bool { return true })
	spread(3, func(*Node) bool { return true })
	// Top tier with a single node, or wider than the hosts: widen.
	for _, n := range g.Nodes {
		width = max(width, n.X+margin)
	}

	// Pod boxes around every non-top node of a pod.
	for _, n := range g.Nodes {
		if n.Pod < 0 || n.Tier == tiers {
			continue
		}
		p, ok := pods[n.Pod]
		if !ok {
			name := fmt.Sprintf("pod %d", n.Pod)
			if g.Kind == topology.LeafSpine {
				name = fmt.Sprintf("leaf %d", n.Pod)
			}
			p = &Pod{Name: name, Index: n.Pod, X0: n.X, X1: n.X, Y0: n.Y, Y1: n.Y}
			pods[n.Pod] = p
			podOrder = append(podOrder, n.Pod)
		}
		p.X0, p.X1 = min(p.X0, n.X), max(p.X1, n.X)
		p.Y0, p.Y1 = min(p.Y0, n.Y), max(p.Y1, n.Y)
		p.Nodes++
	}
	for _, i := range podOrder {
		p := pods[i]
		p.X0 -= switchW/2 + podPad/2
		p.X1 += switchW/2 + podPad/2
		p.Y0 -= switchH/2 + podPad
		p.Y1 += nodeR + hostLabel
		g.Pods = append(g.Pods, *p)
	}
	g.Width = width
	g.Height = rowY(0) + nodeR + hostLabel + margin
}
