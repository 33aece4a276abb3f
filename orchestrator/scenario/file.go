package scenario

import (
	"fmt"
	"os"

	"gopkg.in/yaml.v3"

	"github.com/ftlab/ftlab/internal/topology"
)

// FileKind is what a YAML file is, as far as its top-level keys tell.
type FileKind int

const (
	UnknownFile  FileKind = iota // not a YAML mapping, or neither
	ScenarioFile                 // names a workload, or a topology without a kind of its own
	TopologyFile                 // a kind at the top and no workload
)

// Sniff tells a scenario file from a topology file without decoding
// either: scenarios name a workload, topologies a kind.
func Sniff(data []byte) FileKind {
	var top map[string]yaml.Node
	if yaml.Unmarshal(data, &top) != nil || top == nil {
		return UnknownFile
	}
	_, workload := top["workload"]
	_, kind := top["kind"]
	_, topo := top["topology"]
	switch {
	case workload || !kind && topo:
		return ScenarioFile
	case kind:
		return TopologyFile
	}
	return UnknownFile
}

// ValidateFile decodes a scenario or topology file strictly, building
// nothing, and returns a one-line account of it: "scenario demo: 4 cells,
// 8 runs" or the topology's description. A file that is not a scenario is
// decoded as a topology, whose decoder reports a file that is not YAML at
// all with its line.
func ValidateFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("validate: %w", err)
	}
	if Sniff(data) == ScenarioFile {
		s, err := Parse(path, data)
		if err != nil {
			return "", err
		}
		runs := 0
		for _, c := range s.Cells {
			runs += len(c.Runs)
		}
		return fmt.Sprintf("scenario %s: %d cells, %d runs", s.Name, len(s.Cells), runs), nil
	}
	t, err := topology.Parse(path, data)
	if err != nil {
		return "", err
	}
	return t.String(), nil
}
