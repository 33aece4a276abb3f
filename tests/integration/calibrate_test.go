package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ftlab/ftlab/internal/testlab"
)

// TestCalibrateThenAutoRate calibrates a small rate: auto scenario with
// real trials, then runs it: the run must take the cached rate without
// calibrating again, and record where the rate came from. Whether a rate
// is found depends on how busy the machine is (CI runs other packages
// meanwhile), so a search that finds none must say so and keep its
// trials.
func TestCalibrateThenAutoRate(t *testing.T) {
	f := newFtlab(t)
	dir := t.TempDir()
	scn := filepath.Join(dir, "auto.yaml")
	topo := filepath.Join(testlab.Root(t), "topologies", "fattree-k4.yaml")
	if err := os.WriteFile(scn, []byte(`name: auto
topology: `+topo+`
rate: auto
transport: rss
workload: {kind: permutation, size: 32KiB}
timeout: 30s
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(dir, "cache")
	results := filepath.Join(dir, "results")
	env := "FTLAB_CACHE_DIR=" + cache

	stdout, stderr, code := f.runEnv([]string{env}, "bench", "calibrate", scn, "--json", "--results", results,
		"--min-rate", "1Mbit", "--start-rate", "2Mbit", "--max-rate", "4Mbit", "--precision", "1", "--confirm", "0")
	t.Logf("calibrate stderr:\n%s", stderr)
	var res struct {
		RateBps uint64 `json:"rate_bps"`
		Key     string `json:"key"`
		Trials  []struct {
			RateBps uint64 `json:"rate_bps"`
			OK      bool   `json:"ok"`
			Dir     string `json:"dir"`
		} `json:"trials"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("calibrate --json: %v\n%s", err, stdout)
	}
	if len(res.Trials) == 0 {
		t.Fatal("no trials recorded")
	}
	for _, tr := range res.Trials {
		if tr.RateBps < 1e6 || tr.RateBps > 4e6 {
			t.Errorf("trial at %d bit/s, outside --min-rate..--max-rate", tr.RateBps)
		}
		if _, err := os.Stat(filepath.Join(tr.Dir, "run.json")); err != nil {
			t.Errorf("trial results: %v", err)
		}
	}
	reports, _ := filepath.Glob(filepath.Join(results, "auto", "calibrate-*", "report.md"))
	if len(reports) != 1 {
		t.Fatalf("calibration reports: %v, want one", reports)
	}
	if code != 0 {
		if !strings.Contains(stderr, "no rate tried gets an OK verdict") {
			t.Fatalf("calibrate failed: exit %d\n%s", code, stderr)
		}
		t.Logf("this machine found no OK rate for the scenario now; the cached-rate run is not checked")
		return
	}
	if res.RateBps < 1e6 || res.RateBps > 4e6 {
		t.Fatalf("calibrated rate %d bit/s outside the search range", res.RateBps)
	}
	if _, err := os.Stat(filepath.Join(cache, "calibration.json")); err != nil {
		t.Fatalf("cache: %v", err)
	}

	stdout, stderr, code = f.runEnv([]string{env}, "run", scn, "--json", "--results", results)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	if strings.Contains(stderr, "calibrating") {
		t.Errorf("run calibrated again despite the cache:\n%s", stderr)
	}
	var out struct {
		Dir string `json:"dir"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(out.Dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Scenario struct {
			Cells []struct {
				Config struct {
					Rate struct {
						Auto    bool   `json:"auto"`
						FullBps uint64 `json:"full_bps"`
						Source  string `json:"source"`
					} `json:"rate"`
				} `json:"config"`
			} `json:"cells"`
		} `json:"scenario"`
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		t.Fatal(err)
	}
	r := meta.Scenario.Cells[0].Config.Rate
	if !r.Auto || r.FullBps != res.RateBps || !strings.Contains(r.Source, "calibration") {
		t.Errorf("run.json rate: %+v, want auto at %d bit/s from the calibration", r, res.RateBps)
	}
}

// TestCalibrateTopologyFile calibrates a topology file with a workload
// given by flags, without touching the cache.
func TestCalibrateTopologyFile(t *testing.T) {
	f := newFtlab(t)
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	stdout, stderr, code := f.runEnv([]string{"FTLAB_CACHE_DIR=" + cache}, "bench", "calibrate", "topologies/fattree-k4.yaml",
		"--workload", "permutation", "--size", "16KiB", "--transport", "rss", "--json", "--no-cache", "--results", filepath.Join(dir, "results"),
		"--min-rate", "1Mbit", "--start-rate", "2Mbit", "--max-rate", "2Mbit", "--precision", "1", "--confirm", "0")
	t.Logf("stderr:\n%s", stderr)
	var res struct {
		Scenario string `json:"scenario"`
		Trials   []struct {
			RateBps uint64 `json:"rate_bps"`
		} `json:"trials"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("--json: %v (exit %d)\n%s", err, code, stdout)
	}
	if res.Scenario != "fattree-k4-permutation" || len(res.Trials) == 0 || res.Trials[0].RateBps != 2e6 {
		t.Errorf("calibration %+v, want scenario fattree-k4-permutation starting at 2Mbit", res)
	}
	if code != 0 && !strings.Contains(stderr, "no rate tried gets an OK verdict") {
		t.Errorf("calibrate: exit %d", code)
	}
	if _, err := os.Stat(cache); !os.IsNotExist(err) {
		t.Errorf("--no-cache wrote %s (%v)", cache, err)
	}
	out, errOut, code := f.run("bench", "calibrate", "scenarios/demo.yaml", "--size", "1MiB")
	if code == 0 || !strings.Contains(errOut, "--size is for calibrating a topology file") {
		t.Errorf("--size with a scenario: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
