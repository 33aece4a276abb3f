package scenario

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// shippedDir is the repository's scenarios/ directory.
var shippedDir = filepath.Join("..", "..", "scenarios")

// TestShippedScenarios loads every scenario in scenarios/: a scenario that
// does not load must never be shipped. Traffic matrices next to them are
// named *.matrix.yaml and are not scenarios.
func TestShippedScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(shippedDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		if !strings.HasSuffix(f, ".matrix.yaml") {
			names = append(names, strings.TrimSuffix(filepath.Base(f), ".yaml"))
		}
	}
	for _, want := range []string{
		"demo", "ofan-vs-ecmp-permutation", "incast-corruption", "tornado-corruption", "ring-allreduce-corruption",
		"asymmetric-rss", "link-failure-midrun", "psnpath-vs-pfld", "moe-all-to-all-v",
	} {
		if !slices.Contains(names, want) {
			t.Errorf("scenarios/%s.yaml is missing", want)
		}
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			s, err := Load(filepath.Join(shippedDir, name+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if s.Name != name {
				t.Errorf("name is %q, want the file name %q", s.Name, name)
			}
			if s.Description == "" {
				t.Error("no description")
			}
			for _, c := range s.Cells {
				if r := c.Config.Topo().Links[0].Up.RateBps; r < 10_000_000 || r > 1_000_000_000 {
					t.Errorf("cell %s: host links at %d bit/s; keep shipped scenarios between 10Mbit and 1Gbit", c.Name, r)
				}
				for _, r := range c.Runs {
					if r.Bound == nil || r.Bound.CCT <= 0 || r.Bound.CCT > c.Config.Timeout {
						t.Errorf("cell %s seed %d: CCT bound %v does not fit the timeout %v", c.Name, r.Seed, r.Bound, c.Config.Timeout)
					}
				}
			}
		})
	}
}

// TestDemoIsSmall: the demo must run in under a minute on two cores, so it
// stays a k=4 fabric with four cells, one repetition and little traffic.
func TestDemoIsSmall(t *testing.T) {
	s, err := Load(filepath.Join(shippedDir, "demo.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var total time.Duration
	for _, c := range s.Cells {
		names = append(names, c.Name)
		if c.Config.Topology.Hosts != 16 || len(c.Runs) != 1 {
			t.Errorf("cell %s: %d hosts, %d runs", c.Name, c.Config.Topology.Hosts, len(c.Runs))
		}
		total += c.Runs[0].Bound.CCT
	}
	want := []string{
		"policy=ecmp,transport=rss", "policy=ecmp,transport=rss+pfld",
		"policy=ofan,transport=rss", "policy=ofan,transport=rss+pfld",
	}
	if !slices.Equal(names, want) {
		t.Errorf("cells %v, want %v", names, want)
	}
	if total > 2*time.Second {
		t.Errorf("the demo's CCT lower bounds add up to %v; keep it well under a minute", total)
	}
}
