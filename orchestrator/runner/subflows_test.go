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
	"github.com/ftlab/ftlab/orchestrator/report"
	"github.com/ftlab/ftlab/orchestrator/results"
)

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
	w, err := results.NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	meta := &results.Meta{Format: results.Format, Scenario: sc, Complete: true}
	var written []results.SubflowRow
	const mono = int64(1_000_000_000)
	for _, cell := range sc.Cells {
		run := cell.Runs[0]
		r := &results.Run{Cell: cell.Name, Repetition: run.Repetition, Seed: run.Seed, Status: results.StatusComplete,
			StartMonoNs: mono}
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
		rows := results.RowsOf(r, newPathMap(cell.Config, run.Seed).uplink)
		if err := w.Add(rows); err != nil {
			t.Fatal(err)
		}
		meta.Runs = append(meta.Runs, r)
		written = append(written, rows.Subflows...)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteMeta(dir, meta); err != nil {
		t.Fatal(err)
	}
	read, err := results.ReadSubflows(dir)
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
	if _, err := report.Rebuild(dir); err != nil {
		t.Fatal(err)
	}
	png, _ := os.ReadFile(filepath.Join(dir, report.PathsPlot+".png"))
	svg, _ := os.ReadFile(filepath.Join(dir, report.PathsPlot+".svg"))
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) || !bytes.Contains(svg, []byte("<svg")) {
		t.Errorf("paths plot not drawn: %d bytes of PNG, %d of SVG", len(png), len(svg))
	}
	md, _ := os.ReadFile(filepath.Join(dir, report.ReportFile))
	if !strings.Contains(string(md), "](paths.png)") || !strings.Contains(string(md), "policy=ecmp") {
		t.Errorf("report does not link the paths plot:\n%s", md)
	}
}
