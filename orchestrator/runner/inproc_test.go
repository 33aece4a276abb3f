package runner

import (
	"testing"

	"github.com/ftlab/ftlab/hostagent/scheme"
	"github.com/ftlab/ftlab/orchestrator/scenario"
	"github.com/google/go-cmp/cmp"
)

// TestConfigureOfEveryTransport: the configure command of a cell of every
// transport names a scheme the agents know, with parameters it takes, as
// the agent builds it (hostagent/agent calls scheme.New).
func TestConfigureOfEveryTransport(t *testing.T) {
	for _, tr := range scenario.Transports {
		t.Run(string(tr), func(t *testing.T) {
			sc := loadScenario(t, "topology: {kind: fattree, k: 4}\nworkload: {kind: permutation}\ntransport: "+string(tr)+"\n")
			conf, err := configureOf(sc.Cells[0].Config, 7)
			if err != nil {
				t.Fatal(err)
			}
			if conf.Scheme != string(tr) {
				t.Errorf("scheme %q, want %q", conf.Scheme, tr)
			}
			s, err := scheme.New(conf.Scheme, conf.Params)
			if err != nil {
				t.Fatalf("the agent refuses %s %v: %v", conf.Scheme, conf.Params, err)
			}
			if s.Name() != string(tr) {
				t.Errorf("agent built %q, want %q", s.Name(), tr)
			}
		})
	}
}

// TestConfigureOfGapNACK: a gapnack cell gets the psnpath block's
// parameters under the keys the gapnack scheme takes (which are psnpath's
// without max_walk and no_fpsn).
func TestConfigureOfGapNACK(t *testing.T) {
	sc := loadScenario(t, `
topology: {kind: fattree, k: 4}
workload: {kind: permutation}
psnpath: {k: 8, beta: 5, explore_threshold: 0.9, remove_threshold: 0.5, interval: 2ms}
compare:
  transport: [psnpath, gapnack]
`)
	want := map[string]string{"paths": "8", "beta": "5", "explore": "0.9", "remove": "0.5", "interval": "2ms"}
	var schemes []string
	for _, cell := range sc.Cells {
		conf, err := configureOf(cell.Config, 1)
		if err != nil {
			t.Fatal(err)
		}
		schemes = append(schemes, conf.Scheme)
		if diff := cmp.Diff(want, conf.Params); diff != "" {
			t.Errorf("%s: params (-want +got):\n%s", cell.Name, diff)
		}
		if _, err := scheme.New(conf.Scheme, conf.Params); err != nil {
			t.Errorf("%s: %v", cell.Name, err)
		}
	}
	if diff := cmp.Diff([]string{"psnpath", "gapnack"}, schemes); diff != "" {
		t.Errorf("schemes (-want +got):\n%s", diff)
	}
	for _, k := range []string{"max_walk", "no_fpsn"} {
		p := map[string]string{k: "1"}
		if _, err := scheme.New("gapnack", p); err == nil {
			t.Errorf("gapnack takes %s; the psnpath block could pass it on", k)
		}
	}
}
