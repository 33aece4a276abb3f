package graph_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ftlab/ftlab/internal/testlab"
	"github.com/ftlab/ftlab/orchestrator/fabric"
	"github.com/ftlab/ftlab/orchestrator/graph"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/switchd"
)

// TestLabGraph draws a real lab after traffic and a link failure: the
// failed link is failed, links that carried the pings have counters, and
// the HTML page shows every node and the failed link in a real browser.
func TestLabGraph(t *testing.T) {
	testlab.RequireRoot(t)
	store := &lab.Store{Dir: t.TempDir(), Prefix: testlab.Prefix(t)}
	ctx := context.Background()
	st, err := store.Up(ctx, "graph", testlab.Topology(t, "fattree-k4"), lab.UpOptions{DataPlane: switchd.Config{ConvergenceDelay: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := store.Down("graph"); err != nil {
			t.Error(err)
		}
	})
	failed, err := store.SetLink(ctx, "graph", "a0-0", "c0-0", false)
	if err != nil {
		t.Fatal(err)
	}
	if st, err = store.Get("graph"); err != nil {
		t.Fatal(err)
	}
	if _, err := fabric.PingAll(ctx, st.Topology, store.Namer("graph")); err != nil {
		t.Fatal(err)
	}
	g, err := graph.FromLab(ctx, store, st)
	if err != nil {
		t.Fatal(err)
	}
	busy := 0
	for _, l := range g.Links {
		if l.Name == failed {
			if l.State != graph.LinkFailed {
				t.Errorf("%s is %s, want failed", l.Name, l.State)
			}
		} else if l.State != graph.LinkUp {
			t.Errorf("%s is %s, want up", l.Name, l.State)
		}
		if l.Up == nil || l.Down == nil {
			t.Fatalf("%s has no counters", l.Name)
		}
		if l.Up.Packets > 0 && l.Down.Packets > 0 {
			busy++
		}
	}
	// Every host pinged every other: each host link carried traffic both ways.
	if busy < len(st.Topology.Hosts()) {
		t.Errorf("only %d links carried traffic both ways", busy)
	}

	chromium := testlab.Tool(t, "chromium", "the HTML page is checked in a browser")
	page := filepath.Join(t.TempDir(), "graph.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := graph.HTML(f, g); err != nil {
		t.Fatal(err)
	}
	f.Close()
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	// The DOM the browser built from the page.
	cmd := exec.CommandContext(cctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir="+t.TempDir(), "--dump-dom", "file://"+page)
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	nodes := len(regexp.MustCompile(`<g class="node `).FindAll(dom, -1))
	links := len(regexp.MustCompile(`<line class="link `).FindAll(dom, -1))
	if nodes != len(st.Topology.Nodes) || links != len(st.Topology.Links) {
		t.Errorf("the browser's DOM has %d nodes and %d links, want %d and %d", nodes, links, len(st.Topology.Nodes), len(st.Topology.Links))
	}
	if !strings.Contains(string(dom), `class="link failed" data-link="`+failed+`"`) {
		t.Errorf("the browser's DOM does not draw %s as failed", failed)
	}
}
