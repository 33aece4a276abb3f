package graph

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/ftlab/ftlab/internal/units"
)

// DOT writes the graph in Graphviz dot: one rank per tier, a cluster per
// pod, links coloured by state (failed: red, dashed) and labelled with
// their counters when the graph has them.
func DOT(w io.Writer, g *Graph) error {
	ew := &errWriter{w: w}
	ew.printf("graph %q {\n  label=%q;\n  labelloc=t;\n  node [fontname=\"sans-serif\", fontsize=10];\n  edge [fontname=\"sans-serif\", fontsize=8];\n", "ftlab", g.Title)
	byPod := map[int][]Node{}
	var order []int
	var top []Node
	for _, n := range g.Nodes {
		if n.Pod < 0 {
			top = append(top, n)
			continue
		}
		if byPod[n.Pod] == nil {
			order = append(order, n.Pod)
		}
		byPod[n.Pod] = append(byPod[n.Pod], n)
	}
	node := func(indent string, n Node) {
		shape := "box"
		if n.Tier == 0 {
			shape = "ellipse"
		}
		ew.printf("%s%q [shape=%s, style=filled, fillcolor=%q, tooltip=%q];\n", indent, n.Name, shape, roleFill[n.Role], n.Addr)
	}
	for _, p := range order {
		ew.printf("  subgraph \"cluster_%d\" {\n    label=%q;\n    style=rounded;\n", p, podName(g, p))
		for _, n := range byPod[p] {
			node("    ", n)
		}
		ew.printf("  }\n")
	}
	for _, n := range top {
		node("  ", n)
	}
	// One rank per tier, top tier first.
	tiers := map[int][]string{}
	for _, n := range g.Nodes {
		tiers[n.Tier] = append(tiers[n.Tier], fmt.Sprintf("%q", n.Name))
	}
	for t := 3; t >= 0; t-- {
		if len(tiers[t]) > 0 {
			ew.printf("  { rank=same; %s; }\n", strings.Join(tiers[t], "; "))
		}
	}
	for _, l := range g.Links {
		attrs := []string{fmt.Sprintf("class=%q", "link "+string(l.State)), fmt.Sprintf("tooltip=%q", l.Name)}
		switch l.State {
		case LinkFailed:
			attrs = append(attrs, `color="`+colFailed+`"`, "style=dashed", "penwidth=2")
		case LinkDown:
			attrs = append(attrs, `color="`+colDown+`"`, "style=dotted")
		default:
			attrs = append(attrs, `color="`+colLink+`"`)
		}
		if g.Stats {
			attrs = append(attrs, fmt.Sprintf("label=%q", l.label()))
		}
		ew.printf("  %q -- %q [%s];\n", l.B, l.A, strings.Join(attrs, ", "))
	}
	ew.printf("}\n")
	return ew.err
}

func podName(g *Graph, p int) string {
	for _, pd := range g.Pods {
		if pd.Index == p {
			return pd.Name
		}
	}
	return fmt.Sprintf("pod %d", p)
}

// label is a link's counters in a few characters: packets up/down, drops.
func (l *Link) label() string {
	short := func(d *Direction) string {
		if d == nil {
			return "-"
		}
		return fmt.Sprintf("%d pkt %s", d.Packets, units.FormatSize(d.Bytes))
	}
	s := "up " + short(l.Up) + " / down " + short(l.Down)
	if d := l.drops(); d > 0 {
		s += fmt.Sprintf(", %d dropped", d)
	}
	return s
}

// Mermaid writes the graph as a Mermaid flowchart (top to bottom), a
// subgraph per pod; failed links are dotted and red (linkStyle), down
// links dotted and orange.
func Mermaid(w io.Writer, g *Graph) error {
	ew := &errWriter{w: w}
	id := func(name string) string { return strings.NewReplacer("-", "_", ".", "_", "~", "__").Replace(name) }
	ew.printf("---\ntitle: %s\n---\nflowchart TB\n", g.Title)
	byPod := map[int][]Node{}
	var order []int
	for _, n := range g.Nodes {
		if n.Pod < 0 {
			ew.printf("  %s[%s]\n", id(n.Name), n.Name)
			continue
		}
		if byPod[n.Pod] == nil {
			order = append(order, n.Pod)
		}
		byPod[n.Pod] = append(byPod[n.Pod], n)
	}
	for _, p := range order {
		ew.printf("  subgraph pod%d[%q]\n", p, podName(g, p))
		for _, n := range byPod[p] {
			if n.Tier == 0 {
				ew.printf("    %s((%s))\n", id(n.Name), n.Name)
			} else {
				ew.printf("    %s[%s]\n", id(n.Name), n.Name)
			}
		}
		ew.printf("  end\n")
	}
	var failed, down []string
	for i, l := range g.Links {
		arrow := "---"
		if l.State != LinkUp {
			arrow = "-.-"
		}
		label := ""
		if g.Stats {
			label = "|" + strings.ReplaceAll(l.label(), "|", "/") + "|"
		}
		ew.printf("  %s %s%s %s\n", id(l.B), arrow, label, id(l.A))
		switch l.State {
		case LinkFailed:
			failed = append(failed, fmt.Sprint(i))
		case LinkDown:
			down = append(down, fmt.Sprint(i))
		}
	}
	if len(failed) > 0 {
		ew.printf("  linkStyle %s stroke:%s,stroke-width:2px\n", strings.Join(failed, ","), colFailed)
	}
	if len(down) > 0 {
		ew.printf("  linkStyle %s stroke:%s\n", strings.Join(down, ","), colDown)
	}
	return ew.err
}

// JSON writes the graph model (nodes with positions, links with states
// and counters, pods).
func JSON(w io.Writer, g *Graph) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(g)
}

// Formats lists what Render writes.
var Formats = []string{"svg", "html", "dot", "mermaid", "json"}

// Render writes the graph in a format of Formats.
func Render(w io.Writer, g *Graph, format string) error {
	switch format {
	case "svg":
		return SVG(w, g)
	case "html":
		return HTML(w, g)
	case "dot":
		return DOT(w, g)
	case "mermaid":
		return Mermaid(w, g)
	case "json":
		return JSON(w, g)
	}
	return fmt.Errorf("graph: unknown format %q (valid: %s)", format, strings.Join(Formats, ", "))
}
