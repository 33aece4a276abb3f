package integration

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ftlab/ftlab/internal/testlab"
)

// TestRunScenario runs a small scenario end to end with real agents on a
// shaped fabric: two cells (ecmp and ofan switches) of a permutation with
// rss+pfld hosts, and checks that every message was delivered and
// verified, the CCT is not below its lower bound, the result files are
// there, and report rebuilds the same summary.
func TestRunScenario(t *testing.T) {
	f := newFtlab(t)
	dir := t.TempDir()
	scn := filepath.Join(dir, "small.yaml")
	topo := filepath.Join(testlab.Root(t), "topologies", "fattree-k4.yaml")
	if err := os.WriteFile(scn, []byte(`name: small
topology: `+topo+`
dataplane: shaped
transport: rss+pfld
workload: {kind: permutation, size: 128KiB}
timeout: 30s
compare:
  policy: [ecmp, ofan]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "results")
	var out struct {
		Dir     string `json:"dir"`
		Summary struct {
			Complete bool `json:"complete"`
			Cells    []struct {
				Cell        string  `json:"cell"`
				Messages    int     `json:"messages"`
				Delivered   int     `json:"delivered"`
				CCTMean     float64 `json:"cct_mean_ns"`
				CCTIncrease float64 `json:"cct_increase"`
			} `json:"cells"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(f.mustRun("run", scn, "--json", "--results", results)), &out); err != nil {
		t.Fatal(err)
	}
	if !out.Summary.Complete || len(out.Summary.Cells) != 2 {
		t.Fatalf("summary: %+v", out.Summary)
	}
	for _, c := range out.Summary.Cells {
		if c.Messages != 16 || c.Delivered != 16 {
			t.Errorf("cell %s delivered %d of %d messages, want 16 of 16", c.Cell, c.Delivered, c.Messages)
		}
		// Shaped links serialize at their rate: no collective can beat
		// the lower bound computed from those rates.
		if c.CCTMean <= 0 || c.CCTIncrease < 0 {
			t.Errorf("cell %s: CCT %.0f ns is %.1f%% over the lower bound; want at or above it", c.Cell, c.CCTMean, 100*c.CCTIncrease)
		}
	}
	file, err := os.Open(filepath.Join(out.Dir, "flows.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	rows, err := csv.NewReader(file).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	verified := 0
	for _, r := range rows[1:] {
		if r[12] == "true" {
			verified++
		}
	}
	if len(rows) != 33 || verified != 32 {
		t.Errorf("flows.csv: %d rows, %d verified; want 32 messages, all verified", len(rows)-1, verified)
	}
	before, _ := os.ReadFile(filepath.Join(out.Dir, "summary.json"))
	f.mustRun("report", out.Dir)
	after, _ := os.ReadFile(filepath.Join(out.Dir, "summary.json"))
	if string(before) != string(after) {
		t.Errorf("ftlab report rebuilt a different summary.json")
	}
	if left := f.remaining(); len(left) != 0 {
		t.Errorf("run left %d namespaces", len(left))
	}
}
