package bench

import (
	"context"
	"strings"
	"testing"

	"github.com/ftlab/ftlab/hostagent/scheme"
)

// TestFlowHeap checks that an open rss+pfld flow costs a positive live
// heap that exceeds the scheme's own state (receiver plus sender).
func TestFlowHeap(t *testing.T) {
	const name = "rss+pfld"
	h, err := FlowHeap(name, heapFlows)
	if err != nil {
		t.Fatal(err)
	}
	rx, tx, err := FlowState(name, 100)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: heap %.1f B per open flow; scheme state rx %.0f B + tx %.0f B", name, h, rx, tx)
	if h <= 0 || h <= rx+tx {
		t.Errorf("%s: heap per open flow %.1f B, want > 0 and > scheme state %.0f + %.0f B", name, h, rx, tx)
	}
	if _, err := FlowHeap(name, 0); err == nil {
		t.Error("0 flows: no error")
	}
}

// TestFlowRows checks that every scheme gets a heap row and both scheme
// state rows, each with its spread, against the send window.
func TestFlowRows(t *testing.T) {
	const reps = 2
	rows, err := flowRows(context.Background(), Options{}, 20, 200, reps)
	if err != nil {
		t.Fatal(err)
	}
	byFigure := map[string]Row{}
	for _, r := range rows {
		byFigure[r.Figure] = r
		checkSpread(t, r, reps)
		if r.Unit != "B" || r.Baseline != flowWindow || r.BaselineName != "send window" {
			t.Errorf("%s: unit %q, baseline %v %q", r.Figure, r.Unit, r.Baseline, r.BaselineName)
		}
	}
	for _, name := range scheme.Names() {
		r, ok := byFigure[name+" heap per open flow"]
		if !ok {
			t.Errorf("%s: no heap per open flow row", name)
		} else if r.Value <= 0 {
			t.Errorf("%s: heap per open flow %v B", name, r.Value)
		}
		for _, side := range []string{"receiver", "sender"} {
			if _, ok := byFigure[name+" "+side+" scheme state per flow"]; !ok {
				t.Errorf("%s: no %s scheme state row", name, side)
			}
		}
	}
	if len(rows) != 3*len(scheme.Names()) {
		t.Errorf("%d rows for %d schemes", len(rows), len(scheme.Names()))
	}
	for _, r := range rows {
		if strings.Contains(r.Figure, "scheme state") && r.Spread.Min != r.Spread.Max {
			t.Errorf("%s: deterministic, got range %v–%v", r.Figure, r.Spread.Min, r.Spread.Max)
		}
	}
}
