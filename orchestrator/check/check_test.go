package check

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ftlab/ftlab/orchestrator/fidelity"
	"github.com/ftlab/ftlab/orchestrator/results"
	"github.com/ftlab/ftlab/orchestrator/scenario"
)

func TestClaimJudge(t *testing.T) {
	for _, tt := range []struct {
		name          string
		holds         bool
		fid           fidelity.Verdict
		thin, missing string
		want          Verdict
	}{
		{"holds on OK runs", true, fidelity.OK, "", "", Holds},
		{"fails on OK runs", false, fidelity.OK, "", "", DoesNotHold},
		{"a WARN run cannot make it hold", true, fidelity.WARN, "", "", Inconclusive},
		{"nor refute it", false, fidelity.WARN, "", "", Inconclusive},
		{"FAIL", true, fidelity.FAIL, "", "", Inconclusive},
		{"too few flows", true, fidelity.OK, "32 flows", "", Inconclusive},
		{"not run", true, fidelity.OK, "", "not run: ecmp", NoData},
		{"nothing ran", true, "", "", "", NoData},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := Claim{PaperValue: 0.5, Measured: 0.25}
			c.judge(tt.holds, tt.fid, tt.thin, tt.missing)
			if c.Verdict != tt.want {
				t.Errorf("verdict %s, want %s (%s)", c.Verdict, tt.want, c.Why)
			}
			if c.Ratio != 0.5 {
				t.Errorf("ratio %v, want 0.5", c.Ratio)
			}
			if tt.want != Holds && tt.want != DoesNotHold && c.Why == "" {
				t.Error("no reason given")
			}
		})
	}
	c := Claim{PaperValue: nan, Measured: 3}
	c.judge(true, fidelity.OK, "", "")
	if !math.IsNaN(c.Ratio) || c.RatioText() != "-" {
		t.Errorf("no paper number: ratio %v", c.Ratio)
	}
}

func TestCombine(t *testing.T) {
	v := func(vs ...Verdict) []Claim {
		var cs []Claim
		for _, x := range vs {
			cs = append(cs, Claim{Verdict: x})
		}
		return cs
	}
	for _, tt := range []struct {
		in   []Claim
		want Verdict
	}{
		{v(Holds, Holds), Holds},
		{v(Holds, NoData), Holds},
		{v(Holds, Inconclusive), Inconclusive},
		{v(Inconclusive, DoesNotHold, Holds), DoesNotHold},
		{v(NoData), NoData},
		{nil, NoData},
	} {
		if got := Combine(tt.in); got != tt.want {
			t.Errorf("%v: %s, want %s", tt.in, got, tt.want)
		}
	}
}

// TestClaimJSON: numbers the paper does not give are null, not NaN
// (which encoding/json refuses).
func TestClaimJSON(t *testing.T) {
	b, err := json.Marshal(Claim{ID: "x", PaperValue: nan, Measured: 2, Ratio: nan, Verdict: Holds})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["paper_value"] != nil || m["ratio"] != nil || m["measured"] != 2.0 || m["verdict"] != "HOLDS" {
		t.Errorf("json %s", b)
	}
}

func TestLookup(t *testing.T) {
	got, err := Lookup([]string{"psn-path", "ofan"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range got {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"psn-path", "ofan"}, names); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := Lookup([]string{"nope"}); err == nil {
		t.Error("unknown check: no error")
	}
}

// TestPaperScenarios: every shipped paper scenario loads, every check's
// scenarios exist, and every quick reduction applies and loads, leaving
// the regime (rate, topology) as it is.
func TestPaperScenarios(t *testing.T) {
	const dir = "../../scenarios/paper"
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no paper scenarios: %v", err)
	}
	used := map[string]bool{}
	for _, c := range Checks {
		for _, f := range c.Scenarios {
			used[f] = true
			full, err := scenario.Load(filepath.Join(dir, f))
			if err != nil {
				t.Errorf("check %s: %v", c.Name, err)
				continue
			}
			red, ok := c.Quick[f]
			if !ok || red.Skip {
				continue
			}
			quick, err := loadReduced(filepath.Join(dir, f), red.Patch, scenario.Options{})
			if err != nil {
				t.Errorf("check %s, quick: %v", c.Name, err)
				continue
			}
			if len(quick.Cells) >= len(full.Cells) && len(quick.Seeds) >= len(full.Seeds) {
				t.Errorf("check %s: the quick %s is not smaller (%d cells x %d seeds)", c.Name, f, len(quick.Cells), len(quick.Seeds))
			}
			if q, w := quick.Cells[0].Config.Regime, full.Cells[0].Config.Regime; q.Dilation != w.Dilation || q.EmulatedRTT != w.EmulatedRTT {
				t.Errorf("check %s: the quick %s runs another regime: %+v, want %+v", c.Name, f, q, w)
			}
		}
	}
	for _, f := range files {
		if !used[filepath.Base(f)] {
			t.Errorf("%s belongs to no check", f)
		}
	}
}

func TestLoadReduced(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.yaml")
	src := `topology: {kind: fattree, k: 4}
workload: {kind: permutation, size: 1MiB}
repetitions: 5
compare:
  transport: [ecmp, rps, rss]
  workload.size: [64KiB, 1MiB]
`
	if err := os.WriteFile(path, []byte(strings.Replace(src, "workload: {kind: permutation, size: 1MiB}", "workload: {kind: permutation}", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := loadReduced(path, []Patch{seeds(1), keep("transport", 0, 2), keep("workload.size", 0), set("8s", "timeout")}, scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range sc.Cells {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"transport=ecmp,workload.size=64KiB", "transport=rss,workload.size=64KiB"}, names); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	if len(sc.Seeds) != 1 || sc.Cells[0].Config.Timeout != 8*time.Second {
		t.Errorf("seeds %v, timeout %v", sc.Seeds, sc.Cells[0].Config.Timeout)
	}
	for _, bad := range []Patch{keep("transport", 7), keep("nothing", 0), set("1", "workload", "size", "deeper")} {
		if _, err := loadReduced(path, []Patch{bad}, scenario.Options{}); err == nil {
			t.Errorf("patch %+v: no error", bad)
		}
	}
}

// TestMarkdownAndText render a report with a claim of every verdict.
func TestMarkdownAndText(t *testing.T) {
	rep := &Report{Dir: "results/paper/check-x", Results: []Result{{Check: Check{Name: "c", Paper: "P 1", Title: "t", Setup: "s", Deviations: []string{"d"}},
		Verdict: DoesNotHold, Figures: []string{"c-fig.png", "c-fig.svg"}, Tables: "| a |",
		Runs: []ScenarioResult{{File: "f.yaml", Runs: 2, Cells: 1, Seeds: 2, Rate: "40Mbit", Regime: "time dilated", Fidelity: "WARN",
			FidelityCounts: map[fidelity.Verdict]int{fidelity.OK: 1, fidelity.WARN: 1}}},
		Claims: []Claim{{ID: "a", Text: "claim a", Paper: "half", PaperValue: 0.5, Measured: 0.4, Ratio: 0.8, Unit: "ratio", Verdict: Holds, Fidelity: fidelity.OK},
			{ID: "b", Text: "claim b", PaperValue: nan, Measured: nan, Ratio: nan, Verdict: NoData, Why: "not run: x"}}}}}
	var md, txt strings.Builder
	Markdown(&md, rep)
	WriteText(&txt, rep)
	for _, want := range []string{"| claim a | half | 0.4 | 0.80x |", "**HOLDS**", "NO DATA", "not run: x", "![c-fig](c-fig.png)", "1 OK, 1 WARN", "- d"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	for _, want := range []string{"c  ", "DOES NOT HOLD", "a  ", "0.80x", "rule:", "report: results/paper/check-x/report.md"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, txt.String())
		}
	}
	if rep.Holds() {
		t.Error("a report with a claim of NO DATA holds")
	}
	rep.Interrupted = "interrupted (context canceled) during check d"
	md.Reset()
	txt.Reset()
	Markdown(&md, rep)
	WriteText(&txt, rep)
	if want := "**Incomplete**: interrupted (context canceled) during check d"; !strings.Contains(md.String(), want) {
		t.Errorf("markdown of an interrupted report lacks %q", want)
	}
	if want := "incomplete: interrupted (context canceled) during check d"; !strings.Contains(txt.String(), want) {
		t.Errorf("text of an interrupted report lacks %q", want)
	}
}

// silence unused helpers in builds without every test.
var _ = results.StatusComplete

func TestDelays(t *testing.T) {
	sc := parseScenario(t, "s.yaml", `topology:
  kind: leafspine
  leaves: 2
  spines: 2
  hosts_per_leaf: 2
  links: {rate: 100Gbit, delay: 1us}
  switches:
    s1: {delay: 5us}
rate: 50Mbit
workload: {kind: permutation}
`)
	if got, want := delays(sc.Cells[0].Config.Topo()), "host-leaf 2ms, leaf-spine 2ms-10ms"; got != want {
		t.Errorf("delays %q, want %q (stretched 2000x)", got, want)
	}
	if got := delays(parseScenario(t, "s.yaml", "topology: {kind: fattree, k: 4}\nworkload: {kind: permutation}\n").Cells[0].Config.Topo()); got != "" {
		t.Errorf("no delays: %q", got)
	}
}
