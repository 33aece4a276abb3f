// Package check runs ftlab's paper checks: scenarios under
// scenarios/paper/ that reproduce a paper's setup in its regime (the same
// BDP in packets and per subflow, its congestion control, timers and
// comparison set, at a dilated time scale, docs/regime.md) and test its
// claims. Each claim is measured against the paper's own number, judged by
// a stated rule, and counts only on runs whose fidelity verdict is OK.
// A claim that does not hold is a finding, reported with its data, not an
// error.
package check

import (
	"fmt"
	"strings"

	"github.com/ftlab/ftlab/orchestrator/report/figure"
)

// Check is one group of a paper's claims and the scenarios that test
// them.
type Check struct {
	Name  string `json:"name"`
	Paper string `json:"paper"` // the paper and its sections
	Title string `json:"title"`
	// Setup says what the paper ran and how ftlab reproduces it.
	Setup string `json:"setup"`
	// Deviations are the parameters that differ from the paper's, and why.
	Deviations []string `json:"deviations,omitempty"`
	// Scenarios are file names under the paper scenarios directory.
	Scenarios []string `json:"scenarios"`
	// Quick reduces each scenario for --quick; a scenario without an
	// entry runs whole, one whose entry says Skip does not run.
	Quick map[string]Reduction `json:"-"`
	// Evaluate measures the claims on what the scenarios recorded (a
	// scenario that did not run is missing from the inputs).
	Evaluate func(in Inputs) Evaluation `json:"-"`
}

// Inputs are a check's scenarios' data, by file name.
type Inputs map[string]*Data

// Evaluation is what a check found: its claims, the figures that show
// them and the tables of the data behind them (markdown).
type Evaluation struct {
	Claims  []Claim
	Figures []figure.Figure
	Tables  string
}

// Checks are the shipped paper checks, in the order they run (the fat
// tree first, then the leaf-spine ones, so one lab of each serves all).
var Checks = []Check{ofanCheck, orderedChaosCheck, psnPathCheck, asymmetryCheck}

// Lookup returns the named checks (all when names is empty).
func Lookup(names []string) ([]Check, error) {
	if len(names) == 0 {
		return Checks, nil
	}
	var out []Check
	for _, n := range names {
		found := false
		for _, c := range Checks {
			if c.Name == n {
				out, found = append(out, c), true
			}
		}
		if !found {
			var all []string
			for _, c := range Checks {
				all = append(all, c.Name)
			}
			return nil, fmt.Errorf("unknown check %q (checks: %s)", n, strings.Join(all, ", "))
		}
	}
	return out, nil
}
