package calibrate

import (
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ftlab/ftlab/orchestrator/scenario"
)

// Source loads the scenario a calibration is about, with the given
// options (the rate of a trial).
type Source func(scenario.Options) (*scenario.Scenario, error)

// FileSource loads the scenario file at path.
func FileSource(path string) Source {
	return func(o scenario.Options) (*scenario.Scenario, error) { return scenario.LoadWith(path, o) }
}

// Workload is the scenario calibrating a topology file measures: that
// topology with this workload, transport and policy, every other setting
// at its default.
type Workload struct {
	Kind, Size, Transport, Policy string
}

// IsTopologyFile reports whether path is a topology file rather than a
// scenario (a file that cannot be read or is neither is taken for a
// scenario, whose loader says what is wrong with it).
func IsTopologyFile(path string) bool {
	data, err := os.ReadFile(path)
	return err == nil && scenario.Sniff(data) == scenario.TopologyFile
}

// TopologySource makes the scenario "this topology, this workload" that
// calibrating a topology file measures. Its problems are reported as in
// a file named after the topology (<topology>.calibrate.yaml).
func TopologySource(path string, w Workload) (Source, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	doc, err := yaml.Marshal(map[string]any{
		"name":      name + "-" + w.Kind,
		"topology":  abs,
		"workload":  map[string]string{"kind": w.Kind, "size": w.Size},
		"transport": w.Transport,
		"policy":    w.Policy,
	})
	if err != nil {
		return nil, err
	}
	file := strings.TrimSuffix(abs, filepath.Ext(abs)) + ".calibrate.yaml"
	return func(o scenario.Options) (*scenario.Scenario, error) { return scenario.ParseWith(file, doc, o) }, nil
}
