package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
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
	if want := 2 + 5*len(pacedRuntimes); len(rows) != want {
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
