package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ftlab/ftlab/internal/testlab"
)

// TestCheckQuick runs every paper check in its reduced form (ftlab check
// --quick --json) on real labs and checks that the pipeline gives
// well-formed verdicts: every check evaluated, every claim with a verdict
// of the four, a rule, and a reason when it is not HOLDS or DOES NOT
// HOLD; every scenario with its regime, rate, fidelity and results; the
// report, checks.json and the figures written. Whether a claim holds is
// not asserted: a quick check's cells have too few flows to tell, and the
// machine may be loaded. --require must fail on such a report. It runs
// on two lanes, so the checks' second lab is built, reused across the
// scenarios of a fabric, rebuilt for another and taken down with the
// first (one lane is the default for a full check; fidelity is not what
// this test asks of the quick one).
func TestCheckQuick(t *testing.T) {
	f := newFtlab(t)
	results := t.TempDir()
	stdout, stderr, code := f.run("check", "--quick", "--lanes", "2", "--json", "--results", results, "--require")
	if code == 0 {
		t.Errorf("--require passed a quick report, whose claims cannot all hold (too few flows):\n%s", stdout)
	}
	var rep struct {
		Dir     string   `json:"dir"`
		Quick   bool     `json:"quick"`
		Errors  []string `json:"errors"`
		Results []struct {
			Name    string `json:"name"`
			Verdict string `json:"verdict"`
			Claims  []struct {
				ID       string   `json:"id"`
				Paper    string   `json:"paper"`
				Measured *float64 `json:"measured"`
				Rule     string   `json:"rule"`
				Verdict  string   `json:"verdict"`
				Why      string   `json:"why"`
				Fidelity string   `json:"fidelity"`
			} `json:"claims"`
			Runs []struct {
				File     string `json:"file"`
				Dir      string `json:"results"`
				Regime   string `json:"regime"`
				Rate     string `json:"rate"`
				Delays   string `json:"delays"`
				Fidelity string `json:"fidelity"`
				Runs     int    `json:"runs"`
			} `json:"runs"`
			Figures []string `json:"figures"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("ftlab check --json: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	if !rep.Quick || len(rep.Errors) > 0 || len(rep.Results) != 4 {
		t.Fatalf("quick %v, errors %v, %d checks; want 4 evaluated\nstderr:\n%s", rep.Quick, rep.Errors, len(rep.Results), stderr)
	}
	verdicts := []string{"HOLDS", "DOES NOT HOLD", "INCONCLUSIVE", "NO DATA"}
	for _, r := range rep.Results {
		if !slices.Contains(verdicts, r.Verdict) || len(r.Claims) == 0 || len(r.Runs) == 0 || len(r.Figures) == 0 {
			t.Errorf("check %s: verdict %q, %d claims, %d scenarios, %d figures", r.Name, r.Verdict, len(r.Claims), len(r.Runs), len(r.Figures))
		}
		measured := 0
		for _, c := range r.Claims {
			if !slices.Contains(verdicts, c.Verdict) || c.Rule == "" || c.Paper == "" {
				t.Errorf("%s/%s: verdict %q, rule %q, paper %q", r.Name, c.ID, c.Verdict, c.Rule, c.Paper)
			}
			if (c.Verdict == "INCONCLUSIVE" || c.Verdict == "NO DATA") && c.Why == "" {
				t.Errorf("%s/%s: %s without a reason", r.Name, c.ID, c.Verdict)
			}
			if c.Verdict == "HOLDS" && c.Fidelity != "OK" {
				t.Errorf("%s/%s holds on runs with fidelity %s", r.Name, c.ID, c.Fidelity)
			}
			if c.Measured != nil {
				measured++
			}
		}
		if measured == 0 {
			t.Errorf("check %s measured nothing", r.Name)
		}
		for _, s := range r.Runs {
			if s.Runs == 0 || s.Fidelity == "" || !strings.Contains(s.Regime, "BDP") || !strings.Contains(s.Rate, "Mbit") || s.Delays == "" {
				t.Errorf("%s/%s: %+v", r.Name, s.File, s)
			}
			if _, err := os.Stat(filepath.Join(s.Dir, "run.json")); err != nil {
				t.Errorf("%s/%s: %v", r.Name, s.File, err)
			}
		}
		for _, fig := range r.Figures {
			if _, err := os.Stat(filepath.Join(rep.Dir, fig)); err != nil {
				t.Errorf("figure: %v", err)
			}
		}
	}
	md, err := os.ReadFile(filepath.Join(rep.Dir, "report.md"))
	if err != nil || !strings.Contains(string(md), "## ordered-chaos") || !strings.Contains(string(md), "| claim | paper | ftlab | ftlab/paper |") {
		t.Errorf("report.md (%v):\n%.2000s", err, md)
	}
	if _, err := os.Stat(filepath.Join(rep.Dir, "checks.json")); err != nil {
		t.Error(err)
	}
	if left := testlab.Remaining(t, f.prefix); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}
