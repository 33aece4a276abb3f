package topology

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestShippedTopologies loads every file in topologies/: a file that does
// not load must never be shipped.
func TestShippedTopologies(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "topologies", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var bases []string
	for _, f := range files {
		bases = append(bases, filepath.Base(f))
	}
	for _, want := range []string{"fattree-k4.yaml", "fattree-k6.yaml", "fattree-k8.yaml", "fattree-k16.yaml", "leafspine-4x2.yaml", "asymmetric-k4.yaml"} {
		if !slices.Contains(bases, want) {
			t.Errorf("topologies/%s is missing", want)
		}
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			top, err := Load(f)
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.TrimSuffix(filepath.Base(f), ".yaml"); top.Name != want {
				t.Errorf("name is %q, want the file name %q", top.Name, want)
			}
			if top.Source != f {
				t.Errorf("Source is %q, want %q", top.Source, f)
			}
			checkInvariants(t, top)
		})
	}
}

// TestAsymmetricK4: every link of a0-1 runs at a quarter of the rate of
// every other link, in both directions.
func TestAsymmetricK4(t *testing.T) {
	top, err := Load(filepath.Join("..", "..", "topologies", "asymmetric-k4.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rates := map[string][]string{}
	for _, l := range top.Links {
		key := "other"
		if l.A.Node == "a0-1" || l.B.Node == "a0-1" {
			key = "a0-1"
		}
		rates[key] = append(rates[key], fmtRate(l.Up.RateBps), fmtRate(l.Down.RateBps))
	}
	slices.Sort(rates["a0-1"])
	rates["a0-1"] = slices.Compact(rates["a0-1"])
	slices.Sort(rates["other"])
	rates["other"] = slices.Compact(rates["other"])
	want := map[string][]string{"a0-1": {"25Mbit"}, "other": {"100Mbit"}}
	if diff := cmp.Diff(want, rates); diff != "" {
		t.Errorf("rates mismatch (-want +got):\n%s", diff)
	}
	n, _ := top.Node("a0-1")
	if len(n.Ports) != 4 {
		t.Errorf("a0-1 has %d ports, want 4", len(n.Ports))
	}
}
