package graph

import (
	"bytes"
	"encoding/xml"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ftlab/ftlab/bpf"
	"github.com/ftlab/ftlab/internal/testlab"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/switchd"
)

// svgDrawing is what an SVG shows: nodes by role and links by their ends.
type svgDrawing struct {
	nodes  map[string]string // name -> role
	links  map[string]string // "a b" -> class
	failed []string          // failed marks, by link
}

func parseSVG(t *testing.T, b []byte) svgDrawing {
	t.Helper()
	d := svgDrawing{nodes: map[string]string{}, links: map[string]string{}}
	dec := xml.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG does not parse: %v", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		attr := map[string]string{}
		for _, a := range se.Attr {
			attr[a.Name.Local] = a.Value
		}
		switch {
		case se.Name.Local == "g" && strings.HasPrefix(attr["class"], "node "):
			d.nodes[attr["data-name"]] = attr["data-role"]
		case se.Name.Local == "line" && strings.HasPrefix(attr["class"], "link "):
			d.links[attr["data-a"]+" "+attr["data-b"]] = attr["class"]
		case se.Name.Local == "text" && attr["class"] == "failed-mark":
			d.failed = append(d.failed, attr["data-link"])
		}
	}
	return d
}

var dotLink = regexp.MustCompile(`^\s+"([^"]+)" -- "([^"]+)" \[class="link (\w+)"(.*)\];$`)
var dotNode = regexp.MustCompile(`^\s+"([^"]+)" \[shape=`)

// parseDOT returns the dot's nodes and its links ("a b" -> state, attrs).
func parseDOT(t *testing.T, b []byte) (nodes []string, links map[string][2]string) {
	t.Helper()
	links = map[string][2]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if m := dotLink.FindStringSubmatch(line); m != nil {
			links[m[2]+" "+m[1]] = [2]string{m[3], m[4]}
		} else if m := dotNode.FindStringSubmatch(line); m != nil {
			nodes = append(nodes, m[1])
		}
	}
	return nodes, links
}

func render(t *testing.T, g *Graph, format string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, g, format); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestEveryNodeAndLink: the SVG, dot and Mermaid drawings of k=4, k=8 and
// a leaf-spine have every node (with its role) and every link, and
// nothing else.
func TestEveryNodeAndLink(t *testing.T) {
	for _, name := range []string{"fattree-k4", "fattree-k8", "leafspine-4x2"} {
		t.Run(name, func(t *testing.T) {
			topo := testlab.Topology(t, name)
			g := FromTopology(topo)
			svg := parseSVG(t, render(t, g, "svg"))
			nodes, links := parseDOT(t, render(t, g, "dot"))
			mermaid := string(render(t, g, "mermaid"))
			if len(svg.nodes) != len(topo.Nodes) || len(nodes) != len(topo.Nodes) {
				t.Errorf("%d nodes in the SVG, %d in dot, the topology has %d", len(svg.nodes), len(nodes), len(topo.Nodes))
			}
			for _, n := range topo.Nodes {
				if svg.nodes[n.Name] != string(n.Role) {
					t.Errorf("SVG: node %s has role %q, want %s", n.Name, svg.nodes[n.Name], n.Role)
				}
				if !slices.Contains(nodes, n.Name) {
					t.Errorf("dot: no node %s", n.Name)
				}
			}
			if len(svg.links) != len(topo.Links) || len(links) != len(topo.Links) {
				t.Errorf("%d links in the SVG, %d in dot, the topology has %d", len(svg.links), len(links), len(topo.Links))
			}
			mermaidLinks := strings.Count(mermaid, " --- ")
			if mermaidLinks != len(topo.Links) {
				t.Errorf("%d links in Mermaid, want %d", mermaidLinks, len(topo.Links))
			}
			for _, l := range topo.Links {
				k := l.A.Node + " " + l.B.Node
				if svg.links[k] != "link up" || links[k][0] != "up" {
					t.Errorf("link %s: SVG class %q, dot state %q; want up", l.Name, svg.links[k], links[k][0])
				}
			}
			// Rows by tier: a higher tier is drawn higher; pods do not overlap.
			for _, l := range g.Links {
				a, b := g.node(l.A), g.node(l.B)
				if a.Y <= b.Y {
					t.Errorf("link %s: %s (tier %d) is not drawn below %s (tier %d)", l.Name, a.Name, a.Tier, b.Name, b.Tier)
				}
			}
			for i := 1; i < len(g.Pods); i++ {
				if g.Pods[i].X0 <= g.Pods[i-1].X1 {
					t.Errorf("%s overlaps %s", g.Pods[i].Name, g.Pods[i-1].Name)
				}
			}
			if want := len(topo.Nodes) - topo.Count(topology.RoleCore) - topo.Count(topology.RoleSpine); sum(g.Pods) != want {
				t.Errorf("pods hold %d nodes, want every node below the top tier, %d", sum(g.Pods), want)
			}
		})
	}
}

func sum(pods []Pod) int {
	n := 0
	for _, p := range pods {
		n += p.Nodes
	}
	return n
}

func (g *Graph) node(name string) *Node {
	for i := range g.Nodes {
		if g.Nodes[i].Name == name {
			return &g.Nodes[i]
		}
	}
	return nil
}

// TestFailedLink: a failed link is drawn failed in every format, the
// others stay up.
func TestFailedLink(t *testing.T) {
	topo := testlab.Topology(t, "fattree-k4")
	l, _, _ := topo.LinkBetween("a0-0", "c0-0")
	down, _, _ := topo.LinkBetween("e1-0", "a1-1")
	g := FromTopology(topo)
	g.SetState(map[int]bool{l.ID: true}, map[string]bool{down.Name: true})
	key := l.A.Node + " " + l.B.Node
	svg := parseSVG(t, render(t, g, "svg"))
	if svg.links[key] != "link failed" || !slices.Equal(svg.failed, []string{l.Name}) {
		t.Errorf("SVG: %s has class %q and failed marks %v", l.Name, svg.links[key], svg.failed)
	}
	if c := svg.links[down.A.Node+" "+down.B.Node]; c != "link down" {
		t.Errorf("SVG: %s has class %q, want link down", down.Name, c)
	}
	failedCount := 0
	for _, c := range svg.links {
		if c == "link failed" {
			failedCount++
		}
	}
	if failedCount != 1 {
		t.Errorf("SVG: %d failed links, want 1", failedCount)
	}
	_, links := parseDOT(t, render(t, g, "dot"))
	if st := links[key]; st[0] != "failed" || !strings.Contains(st[1], "style=dashed") || !strings.Contains(st[1], colFailed) {
		t.Errorf("dot: %s is %v, want failed, dashed and red", l.Name, st)
	}
	mermaid := string(render(t, g, "mermaid"))
	if !strings.Contains(mermaid, "a0_0 -.- ") && !strings.Contains(mermaid, "c0_0 -.- a0_0") {
		t.Errorf("Mermaid: no dotted link for %s:\n%s", l.Name, mermaid)
	}
	if !strings.Contains(mermaid, "linkStyle "+strconv.Itoa(l.ID)+" stroke:"+colFailed) {
		t.Errorf("Mermaid: link %d is not styled failed", l.ID)
	}
	html := string(render(t, g, "html"))
	if !strings.Contains(html, `<tr class="failed" data-link="`+l.Name+`">`) || !strings.Contains(html, "1 failed") {
		t.Errorf("HTML does not list %s as failed", l.Name)
	}
	if c := g.Count(); c.Failed != 1 {
		t.Errorf("Count: %d failed", c.Failed)
	}
}

// TestCounters: a link's directions take the sending switch's tx (or, from
// a host, the edge's rx) and the drops on the way.
func TestCounters(t *testing.T) {
	topo := testlab.Topology(t, "fattree-k4")
	hl, _, _ := topo.LinkBetween("h0-0-0", "e0-0")
	ul, _, _ := topo.LinkBetween("e0-0", "a0-0")
	stats := []switchd.PortStats{
		{Switch: "e0-0", Port: hl.B.Port, Counters: bpf.PortCounters{RxPackets: 10, RxBytes: 1000, TxPackets: 7, TxBytes: 700, DropCorrupt: 2}},
		{Switch: "e0-0", Port: ul.A.Port, Counters: bpf.PortCounters{TxPackets: 5, TxBytes: 500, DropBuffer: 1, RxPackets: 6, RxBytes: 600}},
		{Switch: "a0-0", Port: ul.B.Port, Counters: bpf.PortCounters{TxPackets: 6, TxBytes: 600, RxPackets: 5, RxBytes: 500, DropLinkDown: 3}},
	}
	g := FromTopology(topo)
	g.SetCounters(topo, stats)
	h, u := g.Links[hl.ID], g.Links[ul.ID]
	want := map[string]Direction{
		"host up":   {Packets: 10, Bytes: 1000, Drops: 2, DropLoss: 2},
		"host down": {Packets: 7, Bytes: 700},
		"edge up":   {Packets: 5, Bytes: 500, Drops: 4, DropQueue: 1, DropDown: 3},
		"edge down": {Packets: 6, Bytes: 600},
	}
	got := map[string]Direction{"host up": *h.Up, "host down": *h.Down, "edge up": *u.Up, "edge down": *u.Down}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %+v, want %+v", k, got[k], w)
		}
	}
	svg := string(render(t, g, "svg"))
	if !strings.Contains(svg, "e0-0 -&gt; a0-0: 5 packets, 500B, 4 dropped (queue 1, corrupt 0, link down 3)") {
		t.Errorf("SVG tooltip lacks the counters of %s", ul.Name)
	}
	if !strings.Contains(string(render(t, g, "dot")), `label="up 5 pkt 500B / down 6 pkt 600B, 4 dropped"`) {
		t.Errorf("dot lacks the counters of %s", ul.Name)
	}
}
