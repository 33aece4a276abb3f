package bench

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ftlab/ftlab/hostagent/scheme"
	"github.com/ftlab/ftlab/internal/testlab"
)

// checkSpread fails t unless r is a well-formed row of n measurements:
// median value and baseline within their min and max, ratio of the
// medians, a non-negative relative spread.
func checkSpread(t *testing.T, r Row, n int) {
	t.Helper()
	sp := r.Spread
	if sp == nil {
		t.Errorf("%s: no spread", r.Figure)
		return
	}
	if sp.N != n {
		t.Errorf("%s: n = %d, want %d", r.Figure, sp.N, n)
	}
	if !(sp.Min <= r.Value && r.Value <= sp.Max) {
		t.Errorf("%s: median %v not within [%v, %v]", r.Figure, r.Value, sp.Min, sp.Max)
	}
	if !(sp.BaselineMin <= r.Baseline && r.Baseline <= sp.BaselineMax) {
		t.Errorf("%s: baseline median %v not within [%v, %v]", r.Figure, r.Baseline, sp.BaselineMin, sp.BaselineMax)
	}
	if sp.RatioMin > sp.RatioMax || sp.Rel < 0 {
		t.Errorf("%s: ratio range [%v, %v], rel %v", r.Figure, sp.RatioMin, sp.RatioMax, sp.Rel)
	}
	if r.Baseline != 0 && r.Ratio != r.Value/r.Baseline {
		t.Errorf("%s: ratio %v, want %v / %v", r.Figure, r.Ratio, r.Value, r.Baseline)
	}
}

func TestRowOf(t *testing.T) {
	// The median of an even count is the lower middle value (internal/stats,
	// nearest rank): 2 of {1, 2, 3, 10}. It was the mean of the two
	// middle values, 2.5, before the tree had one definition of a
	// percentile; ratio and spread follow from it.
	r := rowOf("x", "MiB", []float64{3, 1, 2, 10}, []float64{1, 1, 2, 1}, "base")
	if r.Value != 2 || r.Baseline != 1 || r.Ratio != 2 {
		t.Errorf("medians: %+v", r)
	}
	checkSpread(t, r, 4)
	if sp := r.Spread; sp.Min != 1 || sp.Max != 10 || sp.RatioMin != 1 || sp.RatioMax != 10 || sp.Rel != 9/2.0 {
		t.Errorf("spread: %+v", *sp)
	}
	one := rowOf("y", "B", []float64{5}, []float64{0}, "zero")
	checkSpread(t, one, 1)
	if one.Ratio != 0 || one.Spread.Rel != 0 {
		t.Errorf("single measurement against 0: %+v %+v", one, *one.Spread)
	}
	if got := rowOf("z", "B", []float64{4, 1, 3}, []float64{1, 1, 1}, "base").Value; got != 3 {
		t.Errorf("median odd = %v", got)
	}
	if (Options{}).repetitions() != DefaultRepetitions || (Options{Quick: true}).repetitions() != 1 ||
		(Options{Quick: true, Repetitions: 2}).repetitions() != 2 {
		t.Error("repetitions defaults")
	}
}

// TestMemoryRepetitions runs the memory section at its quick size with two
// repetitions and checks that every row is the median of two measurements
// and that JSON and markdown carry the spread.
func TestMemoryRepetitions(t *testing.T) {
	testlab.RequireRoot(t)
	var scopes []*scope
	scopeHook = func(s *scope) { scopes = append(scopes, s) }
	t.Cleanup(func() {
		scopeHook = nil
		for _, s := range scopes {
			if err := s.close(); err != nil {
				t.Errorf("cleanup %s: %v", s.prefix, err)
			}
		}
	})
	const reps = 2
	sec, err := Memory(context.Background(), Options{Quick: true, Repetitions: reps})
	if err != nil {
		t.Fatal(err)
	}
	if len(scopes) != 2*reps {
		t.Errorf("%d lab builds, want %d (bare and full per repetition)", len(scopes), 2*reps)
	}
	for _, s := range scopes {
		if left, err := Leftovers(); err == nil {
			for _, ns := range left {
				if strings.HasPrefix(ns, s.prefix) {
					t.Errorf("left behind: %s", ns)
				}
			}
		}
	}
	back := jsonRoundTrip(t, &Report{Machine: MachineInfo(), Quick: true, Sections: []Section{*sec}})
	rows := back.Sections[0].Rows
	// k=4: kernel, slab, RSS, heap; then heap per open flow and rx and tx
	// scheme state per scheme.
	if len(rows) < 6 || !strings.HasPrefix(rows[0].Figure, "k=4 kernel memory") || rows[0].Unit != "MiB" {
		t.Fatalf("rows %+v", rows)
	}
	for _, r := range rows {
		checkSpread(t, r, reps)
		if strings.HasSuffix(r.Figure, "scheme state per flow") && r.Spread != nil && r.Spread.Min != r.Spread.Max {
			t.Errorf("%s: the simulator is deterministic, got range %v–%v", r.Figure, r.Spread.Min, r.Spread.Max)
		}
	}
	if n := len(rows) - 4; n != 3*len(scheme.Names()) {
		t.Errorf("%d per-flow rows, want heap and two scheme state rows for each of %d schemes", n, len(scheme.Names()))
	}
	for _, r := range rows {
		if strings.HasSuffix(r.Figure, "heap per open flow") && r.Value <= 0 {
			t.Errorf("%s: %v B", r.Figure, r.Value)
		}
	}
	// The kernel rows are machine-wide (other tests free memory meanwhile)
	// and may even come out negative; this process's RSS may not.
	for _, r := range rows {
		if strings.Contains(r.Figure, "RSS after up") && (r.Value <= 0 || r.Baseline <= 0) {
			t.Errorf("%+v: want positive RSS with and without the lab", r)
		}
	}
	var md bytes.Buffer
	if err := back.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| figure | value | baseline | ratio | n | value min–max | spread |") {
		t.Errorf("markdown has no spread columns:\n%s", md.String())
	}
	for _, r := range rows {
		if cell := fmt.Sprintf("| %d | %s–%s %s |", reps, num(r.Spread.Min), num(r.Spread.Max), r.Unit); !strings.Contains(md.String(), r.Figure+" |") || !strings.Contains(md.String(), cell) {
			t.Errorf("markdown lacks %q or %q", r.Figure, cell)
		}
	}
	var txt bytes.Buffer
	if err := back.Text(&txt); err != nil || !strings.Contains(txt.String(), "SPREAD") {
		t.Errorf("text (%v):\n%s", err, txt.String())
	}
}
