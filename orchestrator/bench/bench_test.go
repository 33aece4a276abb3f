package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ftlab/ftlab/hostagent/cc"
)

func TestFabricQuick(t *testing.T) {
	if testing.Short() || os.Geteuid() != 0 {
		t.Skip("needs root to create network namespaces")
	}
	rep, err := Run(context.Background(), []string{"fabric"}, Options{Quick: true, K: []int{4}})
	if err != nil {
		t.Fatal(err)
	}
	back := jsonRoundTrip(t, rep)
	if len(back.Sections) != 1 || len(back.Sections[0].Rows) != 2 {
		t.Fatalf("sections %+v", back.Sections)
	}
	for _, r := range back.Sections[0].Rows {
		if !(r.Value > 0 && r.Baseline > 0 && r.Ratio > 0) {
			t.Errorf("row %+v: want positive value, baseline and ratio", r)
		}
	}
	var md bytes.Buffer
	if err := rep.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| figure | value | baseline | ratio |") || !strings.Contains(md.String(), "k=4 setup") {
		t.Errorf("markdown:\n%s", md.String())
	}
	if left, _ := Leftovers(); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

func TestFlowState(t *testing.T) {
	rx, tx, err := FlowState("rss+pfld", 10)
	if err != nil {
		t.Fatal(err)
	}
	if rx <= 0 || tx <= 0 {
		t.Errorf("rss+pfld per flow: rx %v tx %v, want positive", rx, tx)
	}
}

// jsonRoundTrip encodes a report as JSON and decodes it again, as a
// reader of ftlab bench --json would.
func jsonRoundTrip(t *testing.T, rep *Report) Report {
	t.Helper()
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return back
}

// TestAgentQuick: the agent section measures the unpaced transfer and the
// paced agents in every runtime against their baselines, and leaves
// nothing of its labs behind.
func TestAgentQuick(t *testing.T) {
	if testing.Short() || os.Geteuid() != 0 {
		t.Skip("needs root to create network namespaces")
	}
	var scopes []*scope
	scopeHook = func(s *scope) { scopes = append(scopes, s) }
	t.Cleanup(func() {
		scopeHook = nil
		for _, s := range scopes {
			_ = s.close()
		}
	})
	rep, err := Run(context.Background(), []string{"agent"}, Options{Quick: true, CC: []string{cc.None}})
	if err != nil {
		t.Fatal(err)
	}
	back := jsonRoundTrip(t, rep)
	rows := back.Sections[0].Rows
	if want := 2 + 6*len(pacedRuntimes); len(rows) != want {
		t.Fatalf("%d rows, want %d: %+v", len(rows), want, rows)
	}
	for _, r := range rows {
		if r.Baseline <= 0 || r.Value < 0 || strings.Contains(r.Figure, "per core") && r.Value <= 0 {
			t.Errorf("row %+v", r)
		}
	}
	left, err := Leftovers()
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range left {
		for _, s := range scopes {
			if strings.HasPrefix(ns, s.prefix) {
				t.Errorf("left behind: %s", ns)
			}
		}
	}
}

// TestSoakShort: three runs of a small scenario back to back leave no
// namespace, mount, run-directory file, descriptor, goroutine or child
// behind, and the heap flat.
func TestSoakShort(t *testing.T) {
	if testing.Short() || os.Geteuid() != 0 {
		t.Skip("needs root to create network namespaces")
	}
	scn := filepath.Join(t.TempDir(), "soak.yaml")
	if err := os.WriteFile(scn, []byte(`name: soak
topology: {kind: leafspine, leaves: 2, spines: 2, hosts_per_leaf: 2}
dataplane: shaped
workload: {kind: permutation, size: 64KiB}
timeout: 20s
`), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Soak(context.Background(), SoakOptions{Scenario: scn, Runs: 3, Rate: 20_000_000})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Samples) != 4 {
		t.Fatalf("%d samples, want the baseline and 3 runs", len(rep.Samples))
	}
	for _, s := range rep.Samples[1:] {
		if s.Status != "complete" {
			t.Errorf("run %d: %s", s.Run, s.Status)
		}
	}
	if len(rep.Leaks) != 0 {
		var md bytes.Buffer
		_ = rep.Markdown(&md)
		t.Errorf("the soak found leaks: %v\n%s", rep.Leaks, md.String())
	}
	if left, _ := Leftovers(); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestSoakJudge: what counts as a leak.
func TestSoakJudge(t *testing.T) {
	base := SoakSample{FDs: 10, Goroutines: 4, HeapAlloc: 1 << 20}
	after := func(run int, f func(*SoakSample)) SoakSample {
		s := base
		s.Run, s.FDs, s.HeapAlloc = run, 12, 2<<20 // the first run fills caches
		f(&s)
		return s
	}
	same := func(*SoakSample) {}
	for _, c := range []struct {
		name  string
		last  func(*SoakSample)
		leaks int
	}{
		{"flat", same, 0},
		{"a namespace left", func(s *SoakSample) { s.Namespaces = 1 }, 1},
		{"a mount left", func(s *SoakSample) { s.Mounts = 2 }, 1},
		{"a descriptor more than after run 1", func(s *SoakSample) { s.FDs = 13 }, 1},
		{"heap within noise", func(s *SoakSample) { s.HeapAlloc = 6 << 20 }, 0},
		{"heap beyond noise", func(s *SoakSample) { s.HeapAlloc = 20 << 20 }, 1},
	} {
		r := &SoakReport{Samples: []SoakSample{base, after(1, same), after(2, c.last)}}
		if got := r.judge(); len(got) != c.leaks {
			t.Errorf("%s: leaks %v, want %d", c.name, got, c.leaks)
		}
	}
}
