package graph

import (
	"io"
)

// HTML writes a self-contained page: the SVG inline, a table of the links
// that carry traffic, failed or drop, and nothing fetched from elsewhere.
func HTML(w io.Writer, g *Graph) error {
	ew := &errWriter{w: w}
	ew.printf("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s</title>\n", esc(g.Title))
	ew.printf("<style>body{font-family:sans-serif;margin:16px}#graph{overflow:auto;border:1px solid #ddd}table{border-collapse:collapse;margin-top:12px;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}td:first-child,th:first-child{text-align:left}.failed{color:#d62728;font-weight:bold}</style>\n</head><body>\n")
	ew.printf("<div id=\"graph\">\n")
	if ew.err == nil {
		writeSVG(ew, g)
	}
	ew.printf("</div>\n")
	c := g.Count()
	ew.printf("<p id=\"summary\">%d nodes, %d links, %d failed.</p>\n", len(g.Nodes), c.Links, c.Failed)
	if g.Stats || c.Failed > 0 {
		ew.printf("<table id=\"links\"><tr><th>link</th><th>state</th><th>up pkts</th><th>up bytes</th><th>up drops</th><th>down pkts</th><th>down bytes</th><th>down drops</th></tr>\n")
		for _, l := range g.Links {
			if l.State == LinkUp && l.bytes() == 0 && l.drops() == 0 {
				continue
			}
			cls := ""
			if l.State == LinkFailed {
				cls = ` class="failed"`
			}
			ew.printf("<tr%s data-link=\"%s\"><td>%s</td><td>%s</td>", cls, esc(l.Name), esc(l.Name), l.State)
			for _, d := range []*Direction{l.Up, l.Down} {
				if d == nil {
					ew.printf("<td></td><td></td><td></td>")
					continue
				}
				ew.printf("<td>%d</td><td>%d</td><td>%d</td>", d.Packets, d.Bytes, d.Drops)
			}
			ew.printf("</tr>\n")
		}
		ew.printf("</table>\n")
	}
	ew.printf("</body></html>\n")
	return ew.err
}
