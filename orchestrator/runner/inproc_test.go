package runner

import (
	"slices"
	"testing"
	"time"

	"github.com/ftlab/ftlab/hostagent/cc"
	"github.com/ftlab/ftlab/hostagent/scheme"
	"github.com/ftlab/ftlab/internal/params"
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

// TestConfigureOfEveryCC: the configure command of a cell of every
// congestion control names it with the blocks it takes, as the agent
// builds it (hostagent/agent calls cc.New).
func TestConfigureOfEveryCC(t *testing.T) {
	for _, name := range scenario.CCs {
		t.Run(string(name), func(t *testing.T) {
			sc := loadScenario(t, "topology: {kind: fattree, k: 4}\nworkload: {kind: permutation}\ncc: "+string(name)+"\n")
			conf, err := configureOf(sc.Cells[0].Config, 7)
			if err != nil {
				t.Fatal(err)
			}
			if conf.CC != string(name) {
				t.Errorf("cc %q, want %q", conf.CC, name)
			}
			a, _ := cc.Lookup(conf.CC)
			if got := params.Present(conf.CCParams); !slices.Equal(got, a.Blocks) {
				t.Errorf("blocks %v, want %v", got, a.Blocks)
			}
			c, err := cc.New(conf.CC, conf.CCParams)
			if err != nil {
				t.Fatalf("the agent refuses %s %+v: %v", conf.CC, conf.CCParams, err)
			}
			if (c == nil) != (name == cc.None) || (c != nil && c.Name() != string(name)) {
				t.Errorf("agent built %v, want %s", c, name)
			}
		})
	}
}

// TestConfigureOfGapNACK: a gapnack cell gets the psnpath block, the same
// typed values as a psnpath cell, and the scheme takes them.
func TestConfigureOfGapNACK(t *testing.T) {
	sc := loadScenario(t, `
topology: {kind: fattree, k: 4}
workload: {kind: permutation}
psnpath: {k: 8, beta: 5, explore_threshold: 0.9, remove_threshold: 0.5, interval: 2ms}
compare:
  transport: [psnpath, gapnack]
`)
	var schemes []string
	for _, cell := range sc.Cells {
		conf, err := configureOf(cell.Config, 1)
		if err != nil {
			t.Fatal(err)
		}
		schemes = append(schemes, conf.Scheme)
		p := conf.Params.PSNPath
		if p == nil || p.Paths != 8 || p.Beta != 5 || p.Explore != 0.9 || p.Remove != 0.5 || p.Interval != 2*time.Millisecond {
			t.Errorf("%s: psnpath block %+v", cell.Name, p)
		}
		if got := params.Present(conf.Params); !slices.Equal(got, []string{"psnpath"}) {
			t.Errorf("%s: blocks %v, want only psnpath", cell.Name, got)
		}
		if _, err := scheme.New(conf.Scheme, conf.Params); err != nil {
			t.Errorf("%s: %v", cell.Name, err)
		}
	}
	if diff := cmp.Diff([]string{"psnpath", "gapnack"}, schemes); diff != "" {
		t.Errorf("schemes (-want +got):\n%s", diff)
	}
}
