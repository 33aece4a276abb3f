package graph

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/internal/units"
)

// Colours of the drawing, by role and link state.
var roleFill = map[topology.Role]string{
	topology.RoleHost: "#4c78a8", topology.RoleEdge: "#59a14f", topology.RoleLeaf: "#59a14f",
	topology.RoleAgg: "#f28e2b", topology.RoleSpine: "#f28e2b", topology.RoleCore: "#b07aa1",
}

const (
	colLink   = "#8a96a3"
	colFailed = "#d62728"
	colDown   = "#ff7f0e"
	colDrop   = "#d62728"
)

// SVG writes the graph as a standalone SVG document. Every node is a
// <g class="node ROLE" data-name=...>, every link a <line class="link
// STATE" data-link=... data-a=... data-b=...>, with a <title> tooltip
// (counters per direction when the graph has them), so that pages and
// tests can find them.
func SVG(w io.Writer, g *Graph) error {
	ew := &errWriter{w: w}
	writeSVG(ew, g)
	return ew.err
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

func esc(s string) string { return html.EscapeString(s) }

func writeSVG(w *errWriter, g *Graph) {
	w.printf(`<svg xmlns="http://www.w3.org/2000/svg" class="ftlab-graph" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" font-family="sans-serif">`+"\n",
		g.Width, g.Height, g.Width, g.Height)
	w.printf(`<style>.link{stroke-linecap:round}.link.failed{stroke-dasharray:6 4}.link.down{stroke-dasharray:2 3}.node text{font-size:10px;pointer-events:none}.pod{fill:#f4f6f8;stroke:#d0d6dc}</style>` + "\n")
	w.printf(`<text x="%.0f" y="%.0f" font-size="15" font-weight="bold">%s</text>`+"\n", margin, margin, esc(g.Title))
	for _, p := range g.Pods {
		w.printf(`<rect class="pod" data-pod="%d" x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="8"/>`+"\n", p.Index, p.X0, p.Y0, p.X1-p.X0, p.Y1-p.Y0)
		w.printf(`<text x="%.1f" y="%.1f" font-size="10" fill="#667">%s</text>`+"\n", p.X0+4, p.Y1-4, esc(p.Name))
	}
	pos := map[string]*Node{}
	for i := range g.Nodes {
		pos[g.Nodes[i].Name] = &g.Nodes[i]
	}
	maxBytes := uint64(0)
	for _, l := range g.Links {
		maxBytes = max(maxBytes, l.bytes())
	}
	w.printf(`<g class="links">` + "\n")
	for _, l := range g.Links {
		a, b := pos[l.A], pos[l.B]
		col, width := colLink, 1.2
		switch l.State {
		case LinkFailed:
			col, width = colFailed, 2.2
		case LinkDown:
			col, width = colDown, 1.8
		}
		if g.Stats && l.State == LinkUp && maxBytes > 0 {
			// Width by traffic, on a log scale: idle 1, busiest 5.
			width = 1 + 4*math.Log1p(float64(l.bytes()))/math.Log1p(float64(maxBytes))
		}
		w.printf(`<line class="link %s" data-link="%s" data-a="%s" data-b="%s" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="%.2f"><title>%s</title></line>`+"\n",
			l.State, esc(l.Name), esc(l.A), esc(l.B), a.X, a.Y, b.X, b.Y, col, width, esc(l.tooltip()))
		mx, my := (a.X+b.X)/2, (a.Y+b.Y)/2
		if l.State == LinkFailed {
			w.printf(`<text class="failed-mark" data-link="%s" x="%.1f" y="%.1f" text-anchor="middle" dominant-baseline="middle" font-size="14" font-weight="bold" fill="%s">✕</text>`+"\n",
				esc(l.Name), mx, my, colFailed)
		}
		if d := l.drops(); d > 0 {
			w.printf(`<circle class="drops" data-link="%s" cx="%.1f" cy="%.1f" r="4" fill="%s"><title>%s: %d dropped</title></circle>`+"\n",
				esc(l.Name), mx, my, colDrop, esc(l.Name), d)
		}
	}
	w.printf("</g>\n<g class=\"nodes\">\n")
	for _, n := range g.Nodes {
		fill := roleFill[n.Role]
		w.printf(`<g class="node %s" data-name="%s" data-role="%s" data-tier="%d"><title>%s (%s, %s)</title>`, n.Role, esc(n.Name), n.Role, n.Tier, esc(n.Name), n.Role, esc(n.Addr))
		if n.Tier == 0 {
			w.printf(`<circle cx="%.1f" cy="%.1f" r="%.0f" fill="%s"/>`, n.X, n.Y, nodeR, fill)
			w.printf(`<text x="%.1f" y="%.1f" transform="rotate(90 %.1f %.1f)">%s</text>`, n.X, n.Y+nodeR+3, n.X, n.Y+nodeR+3, esc(n.Name))
		} else {
			w.printf(`<rect x="%.1f" y="%.1f" width="%.0f" height="%.0f" rx="4" fill="%s"/>`, n.X-switchW/2, n.Y-switchH/2, switchW, switchH, fill)
			w.printf(`<text x="%.1f" y="%.1f" text-anchor="middle" dominant-baseline="middle" fill="white">%s</text>`, n.X, n.Y, esc(n.Name))
		}
		w.printf("</g>\n")
	}
	w.printf("</g>\n")
	writeLegend(w, g)
	w.printf("</svg>\n")
}

func writeLegend(w *errWriter, g *Graph) {
	x, y := margin, margin+16 // under the title
	item := func(dx float64, col, dash, label string) {
		w.printf(`<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="%s" stroke-width="2" stroke-dasharray="%s"/><text x="%.0f" y="%.0f" font-size="10">%s</text>`,
			x+dx, y, x+dx+22, y, col, dash, x+dx+26, y+3, label)
	}
	w.printf(`<g class="legend">`)
	item(0, colLink, "", "up")
	item(60, colFailed, "6 4", "failed")
	item(130, colDown, "2 3", "down")
	if g.Stats {
		w.printf(`<text x="%.0f" y="%.0f" font-size="10">width: bytes (log)</text>`, x+195, y+3)
	}
	w.printf("</g>\n")
}

func (l *Link) bytes() uint64 {
	var b uint64
	for _, d := range []*Direction{l.Up, l.Down} {
		if d != nil {
			b += d.Bytes
		}
	}
	return b
}

func (l *Link) drops() uint64 {
	var n uint64
	for _, d := range []*Direction{l.Up, l.Down} {
		if d != nil {
			n += d.Drops
		}
	}
	return n
}

// tooltip describes the link and its counters.
func (l *Link) tooltip() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s, %s)", l.Name, l.Stage, l.State)
	dir := func(from, to string, d *Direction) {
		if d == nil {
			return
		}
		fmt.Fprintf(&b, "\n%s -> %s: %d packets, %s", from, to, d.Packets, units.FormatSize(d.Bytes))
		if d.Drops > 0 {
			fmt.Fprintf(&b, ", %d dropped (queue %d, corrupt %d, link down %d)", d.Drops, d.DropQueue, d.DropLoss, d.DropDown)
		}
	}
	dir(l.A, l.B, l.Up)
	dir(l.B, l.A, l.Down)
	return b.String()
}
