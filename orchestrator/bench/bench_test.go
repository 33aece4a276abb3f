package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
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
