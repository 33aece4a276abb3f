package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ftlab/ftlab/orchestrator/results"
)

func checkPathsFiles(t *testing.T, dir string) {
	t.Helper()
	for _, ext := range plotFormats {
		name := filepath.Join(dir, PathsPlot+"."+ext)
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if ext == "png" && !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) {
			t.Errorf("%s does not start with the PNG signature", name)
		}
		if ext == "svg" && !bytes.Contains(data, []byte("<svg")) {
			t.Errorf("%s has no <svg", name)
		}
	}
}

func TestPathsPlot(t *testing.T) {
	sf := func(cell string, rep, flow, sub int, at time.Duration, ev uint16, up int) results.SubflowRow {
		return results.SubflowRow{Cell: cell, Repetition: rep, Host: "h0", Peer: "h1", Flow: uint32(flow), Subflow: sub,
			At: at, EV: ev, Reason: "initial", Uplink: up, Uplinks: 2}
	}
	rows := map[string][]results.SubflowRow{
		"rss": {
			sf("rss", 0, 1, 0, 0, 1, 0), sf("rss", 0, 1, 1, 0, 2, 0), sf("rss", 0, 1, 2, 0, 3, 1),
			sf("rss", 0, 1, 0, 3*time.Millisecond, 9, 1), sf("rss", 0, 2, 0, 5*time.Millisecond, 4, 1),
			sf("rss", 1, 1, 0, 0, 7, 1), // another repetition: not drawn
		},
		"same-edge": {{Cell: "same-edge", Uplink: -1}},
	}
	lines, n := pathShares(rows["rss"][:5])
	if n != 4 || len(lines) != 2 {
		t.Fatalf("%d subflows, %d lines; want 4, 2", n, len(lines))
	}
	// After every change: 1/4 on uplink 0, 3/4 on uplink 1.
	if last := lines[0][len(lines[0])-1]; last.Y != 0.25 || lines[1][len(lines[1])-1].Y != 0.75 {
		t.Errorf("final shares %v, %v", last, lines[1][len(lines[1])-1])
	}
	if first := lines[0][0]; first.X != 0 || first.Y != 2.0/3 {
		t.Errorf("first point of uplink 0: %v, want (0, 2/3)", first)
	}
	dir := t.TempDir()
	if err := writePathsPlot(dir, []string{"rss", "same-edge"}, rows); err != nil {
		t.Fatal(err)
	}
	checkPathsFiles(t, dir)

	empty := t.TempDir()
	if err := writePathsPlot(empty, nil, rows); err != nil {
		t.Fatal(err)
	}
	if files, _ := os.ReadDir(empty); len(files) != 0 {
		t.Errorf("no qualifying cell, but wrote %d files", len(files))
	}
	var b strings.Builder
	if err := writePathsLink(&b, nil); err != nil || !strings.Contains(b.String(), "No paths plot") {
		t.Errorf("link without cells: %q, %v", b.String(), err)
	}
	b.Reset()
	if err := writePathsLink(&b, []string{"rss"}); err != nil || !strings.Contains(b.String(), "](paths.png)") {
		t.Errorf("link: %q, %v", b.String(), err)
	}
}
