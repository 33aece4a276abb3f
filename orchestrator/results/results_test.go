package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ftlab/ftlab/bpf"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/orchestrator/scenario"
	"github.com/ftlab/ftlab/orchestrator/workload"
	"github.com/ftlab/ftlab/switchd"
	"github.com/ftlab/ftlab/switchd/shaping"
)

// testRun is a finished run with one delivered and one lost message, two
// switch ports (one shaped and measured) and one flow with a rerouted
// subflow.
func testRun(cell string, rep int) *Run {
	const mono = int64(5_000_000_000)
	sent := &transport.MessageRecord{Packets: 12, Retransmissions: 3, RetxNeeded: 2, RetxSpurious: 1, NACKs: 1, RTOs: 1, Reroutes: 1,
		Probes: transport.ProbeCounts{Tail: 1, Periodic: 2},
		Losses: []transport.LossRecord{{DelayNs: 300}, {DelayNs: 100}, {DelayNs: 200}, {DelayNs: 400}}}
	r := &Run{Cell: cell, Repetition: rep, Seed: 7, Status: StatusComplete, Duration: time.Second, CCT: 3 * time.Millisecond,
		Bound: &workload.Bound{CCT: 2 * time.Millisecond}, StartMonoNs: mono,
		Messages: []*Message{
			{Message: workload.Message{ID: 0, Src: "h0", Dst: "h1", Bytes: 65536}, Released: time.Millisecond, Done: 3 * time.Millisecond,
				Sent: sent, Received: &transport.ReceiveRecord{Verified: true, RetxSpurious: 1, RetxUseful: 2}},
			{Message: workload.Message{ID: 1, Src: "h1", Dst: "h0", Bytes: 1024, Step: 1}},
		},
		Ports: []switchd.PortStats{
			{Switch: "e0", Port: 1, Ifname: "e0-p1", Link: "e0~a0", Direction: "E->A", Stage: topology.Stage("edge-agg"),
				Counters: bpf.PortCounters{TxPackets: 10, TxBytes: 62_500_000, RxPackets: 9, DropCorrupt: 1},
				Queue:    bpf.QueueStats{MaxBacklog: 3000},
				Params:   topology.LinkParams{RateBps: 1_000_000_000, BufferBytes: 1 << 20},
				Qdisc:    &shaping.Stats{Installed: true, Drops: 2},
				Dequeue:  &bpf.DequeueStats{Dequeues: 10, BusyGaps: 3}},
			{Switch: "a0", Port: 2, Direction: "A->E"},
		},
		Flows: []transport.FlowRecord{{Host: "h0", Peer: "10.0.0.3", Flow: 4, Subflows: []transport.SubflowRecord{
			{ID: 0, Packets: 12, EVs: []transport.EVChange{{AtNs: mono + 10, EV: 3, Reason: "initial"}, {AtNs: mono + 900, EV: 9, Reason: "reroute"}}},
		}}},
	}
	return r
}

// TestRoundTrip writes runs through Writer and WriteMeta and reads them
// back: the rows Read returns are the rows RowsOf made, run by run.
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	uplink := func(host, peer string, ev uint16) (int, int) { return int(ev % 2), 2 }
	meta := &Meta{Format: Format, Scenario: &scenario.Scenario{Name: "t"}, Complete: true}
	var want []Rows
	for _, r := range []*Run{testRun("a", 0), testRun("b", 0), testRun("a", 1)} {
		rows := RowsOf(r, uplink)
		if err := w.Add(rows); err != nil {
			t.Fatal(err)
		}
		meta.Runs = append(meta.Runs, r)
		want = append(want, rows)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := WriteMeta(dir, meta); err != nil {
		t.Fatal(err)
	}
	set, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, set.Runs); diff != "" {
		t.Errorf("rows read back (-written +read):\n%s", diff)
	}
	if got := set.ByCell(); len(got["a"]) != 2 || got["a"][1].Repetition != 1 || len(got["b"]) != 1 {
		t.Errorf("by cell: %+v", got)
	}
	// The rows say what the run said.
	f, l, s := want[0].Flows[0], want[0].Links[0], want[0].Subflows
	if f.FCT != 2*time.Millisecond || !f.Delivered || f.Losses != 4 || f.LossDetectP50 != 200 || f.ProbesPeriodic != 2 {
		t.Errorf("flow row %+v", f)
	}
	if want[0].Flows[1].Delivered || want[0].Flows[1].FCT != 0 {
		t.Errorf("lost message's row %+v", want[0].Flows[1])
	}
	if l.Utilization != 0.5 || l.QdiscDrops != "2" || l.Dequeues != "10" || want[0].Links[1].QdiscDrops != "" {
		t.Errorf("link rows %+v, %+v", l, want[0].Links[1])
	}
	if len(s) != 2 || s[1].At != 900 || s[1].EV != 9 || s[1].Uplink != 1 || s[1].Uplinks != 2 || want[0].Bound != 2*time.Millisecond {
		t.Errorf("subflow rows %+v", s)
	}
}

func TestRowsWithoutUplinks(t *testing.T) {
	for _, s := range RowsOf(testRun("a", 0), nil).Subflows {
		if s.Uplink != -1 || s.Uplinks != 0 {
			t.Errorf("no uplink map, but row %+v", s)
		}
	}
}

// TestReadOldResults: results from before subflows.csv read without it.
func TestReadOldResults(t *testing.T) {
	dir := t.TempDir()
	writeSet(t, dir, testRun("a", 0))
	if err := os.Remove(filepath.Join(dir, SubflowsFile)); err != nil {
		t.Fatal(err)
	}
	set, err := Read(dir)
	if err != nil || len(set.Runs) != 1 || len(set.Runs[0].Flows) != 2 || set.Runs[0].Subflows != nil {
		t.Fatalf("%+v, %v", set, err)
	}
}

// TestReadFlowsV1: a flows.csv from before the retx and retx_useful
// columns reads with both 0 and everything else as it was.
func TestReadFlowsV1(t *testing.T) {
	dir := t.TempDir()
	writeSet(t, dir, testRun("a", 0))
	want, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, FlowsFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v1 []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Split(line, ",")
		v1 = append(v1, strings.Join(f[:len(f)-2], ","))
	}
	if err := os.WriteFile(path, []byte(strings.Join(v1, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want.Runs[0].Flows[0].Retx != 3 || want.Runs[0].Flows[0].RetxUseful != 2 {
		t.Errorf("current file: retx %d, useful %d; want 3 and 2", want.Runs[0].Flows[0].Retx, want.Runs[0].Flows[0].RetxUseful)
	}
	for i := range want.Runs[0].Flows {
		want.Runs[0].Flows[i].Retx, want.Runs[0].Flows[i].RetxUseful = 0, 0
	}
	if diff := cmp.Diff(want.Runs[0].Flows, got.Runs[0].Flows); diff != "" {
		t.Errorf("v1 flows (-want +got):\n%s", diff)
	}
}

func TestPacketCounts(t *testing.T) {
	var c PacketCounts
	c.Add(PacketCounts{DataSent: 100, DataReceived: 95, Trimmed: 2, ControlSent: 90, ControlReceived: 89, SpuriousLate: 1})
	c.Add(PacketCounts{DataSent: 10, DataReceived: 10, ProbesSent: 4, ProbesReceived: 3, HostDrops: 1})
	if diff := cmp.Diff(PacketCounts{DataSent: 110, DataReceived: 105, Trimmed: 2, ControlSent: 90, ControlReceived: 89,
		ProbesSent: 4, ProbesReceived: 3, SpuriousLate: 1, HostDrops: 1}, c); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := c.DataLost(); got != 7 { // 5 dropped, 2 trimmed
		t.Errorf("DataLost %d, want 7", got)
	}
}

func TestReadErrors(t *testing.T) {
	for _, tt := range []struct {
		name  string
		file  string
		data  string
		wants []string
	}{
		{"no scenario", RunFile, `{"format": 1}`, []string{"run.json has no scenario"}},
		{"not json", RunFile, `{`, []string{"run.json:", "unexpected end"}},
		{"other header", FlowsFile, "a,b\n1,2\n", []string{"flows.csv: not an ftlab results file"}},
		{"bad field", LinksFile, strings.Join(linksHeader, ",") + "\n" + "a,x" + strings.Repeat(",0", len(linksHeader)-2) + "\n",
			[]string{"links.csv:2: column repetition:", `"x"`}},
		{"short row", SubflowsFile, strings.Join(subflowsHeader, ",") + "\na,0\n", []string{"subflows.csv: record on line 2", "wrong number of fields"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeSet(t, dir, testRun("a", 0))
			if err := os.WriteFile(filepath.Join(dir, tt.file), []byte(tt.data), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Read(dir)
			for _, want := range tt.wants {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v, want %q", err, want)
				}
			}
		})
	}
	if _, err := Read(t.TempDir()); !os.IsNotExist(err) {
		t.Errorf("empty directory: %v, want not exist", err)
	}
}

func TestNewDir(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "sc")
	a, err := NewDir(parent, "20260101-000000")
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewDir(parent, "20260101-000000")
	if err != nil || b != a+"-2" {
		t.Errorf("second directory %q (%v), want %q", b, err, a+"-2")
	}
	if err := MakeDir(a); err == nil {
		t.Error("MakeDir over an existing directory: no error")
	}
}

func writeSet(t *testing.T, dir string, runs ...*Run) {
	t.Helper()
	w, err := NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	meta := &Meta{Format: Format, Scenario: &scenario.Scenario{Name: "t"}, Runs: runs}
	for _, r := range runs {
		if err := w.Add(RowsOf(r, nil)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := WriteMeta(dir, meta); err != nil {
		t.Fatal(err)
	}
}
