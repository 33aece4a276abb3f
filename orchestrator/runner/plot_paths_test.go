package runner

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ftlab/ftlab/hostagent/transport"
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
	sf := func(cell string, rep, flow, sub int, at time.Duration, ev uint16, up int) subflowRow {
		return subflowRow{Cell: cell, Repetition: rep, Host: "h0", Peer: "h1", Flow: uint32(flow), Subflow: sub,
			At: at, EV: ev, Reason: "initial", Uplink: up, Uplinks: 2}
	}
	rows := map[string][]subflowRow{
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

// TestSubflowsRoundTrip writes runs of an ECMP-edge RSS cell and an Ofan
// cell with subflow histories through the result writer, then rebuilds
// the report from the files: subflows.csv reads back as written, the ECMP
// cell's EVs map to uplinks, and the paths plot is drawn and linked.
func TestSubflowsRoundTrip(t *testing.T) {
	sc := loadScenario(t, `
name: zz-test
topology: topologies/fattree-k4.yaml
dataplane: linerate
workload: {kind: ring-allreduce, size: 64KiB, hosts: [h0-0-0, h1-0-0, h2-0-0, h3-0-0]}
transport: rss
repetitions: 1
timeout: 10s
compare:
  policy: [ecmp, ofan]
`)
	dir := t.TempDir()
	w, err := newWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	meta := &RunMeta{Format: runFormat, Scenario: sc, Complete: true}
	byCell := map[string][]runRows{}
	var written []subflowRow
	const mono = int64(1_000_000_000)
	for _, cell := range sc.Cells {
		run := cell.Runs[0]
		r := &RunResult{Cell: cell.Name, Repetition: run.Repetition, Seed: run.Seed, Status: StatusComplete,
			StartMonoNs: mono, paths: newPathMap(cell.Config, run.Seed)}
		for f := range 4 {
			var subs []transport.SubflowRecord
			for s := range 8 {
				ev := uint16(s + 8*f)
				evs := []transport.EVChange{{AtNs: mono + int64(f)*1e5, EV: ev, Reason: "initial"}}
				if s%3 == 0 {
					evs = append(evs, transport.EVChange{AtNs: mono + 2e6 + int64(s)*1e5, EV: ev + 1000, Reason: "reroute"})
				}
				subs = append(subs, transport.SubflowRecord{ID: s, Packets: 10 + s, EVs: evs})
			}
			r.Flows = append(r.Flows, transport.FlowRecord{Kind: "flow", Host: "h0-0-0", Peer: "h1-0-0", Flow: uint32(f), Subflows: subs})
		}
		if err := w.addRun(r); err != nil {
			t.Fatal(err)
		}
		meta.Runs = append(meta.Runs, r)
		byCell[cell.Name] = append(byCell[cell.Name], rowsOf(r))
		written = append(written, subflowRowsOf(r)...)
	}
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	if err := writeJSON(dir, RunFile, meta); err != nil {
		t.Fatal(err)
	}
	read, err := readCSV(filepath.Join(dir, SubflowsFile), subflowsHeader, parseSubflowRow)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(read, written) || len(read) != 2*4*(8+3) {
		t.Fatalf("subflows.csv: read %d rows, wrote %d; equal %v", len(read), len(written), slices.Equal(read, written))
	}
	used := map[int]bool{}
	for _, r := range read {
		if r.At < 0 || r.At > 3*time.Millisecond {
			t.Errorf("at %v: not relative to the run start", r.At)
		}
		switch ecmp := strings.Contains(r.Cell, "policy=ecmp"); {
		case ecmp && (r.Uplink < 0 || r.Uplink >= 2 || r.Uplinks != 2):
			t.Errorf("ecmp cell row %+v: want an uplink of 2", r)
		case !ecmp && r.Uplink != -1:
			t.Errorf("ofan cell row %+v: want no uplink", r)
		case ecmp:
			used[r.Uplink] = true
		}
	}
	if len(used) != 2 {
		t.Errorf("44 EVs all hashed to uplinks %v", used)
	}
	if _, err := Report(dir); err != nil {
		t.Fatal(err)
	}
	checkPathsFiles(t, dir)
	report, _ := os.ReadFile(filepath.Join(dir, ReportFile))
	if !strings.Contains(string(report), "](paths.png)") || !strings.Contains(string(report), "policy=ecmp") {
		t.Errorf("report does not link the paths plot:\n%s", report)
	}
}
