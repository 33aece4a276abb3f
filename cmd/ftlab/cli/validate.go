package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/orchestrator/scenario"
)

// isScenario tells a scenario file from a topology file: scenarios name a
// workload, topologies a kind. A file that is not YAML at all is left to
// the topology decoder, which reports the syntax error with its line.
func isScenario(data []byte) bool {
	var top map[string]yaml.Node
	if yaml.Unmarshal(data, &top) != nil {
		return false
	}
	_, workload := top["workload"]
	_, kind := top["kind"]
	return workload || !kind && top["topology"].Kind != 0
}

func (a *app) validateCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "validate <file>...",
		Short: "Check topology and scenario files without building anything",
		Long: `validate decodes each topology or scenario file strictly and reports every
problem at once, each with its file, line, column and field. It needs no
privileges and changes nothing.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			bad := 0
			for _, path := range args {
				summary, err := validateFile(path)
				if err != nil {
					fmt.Fprintln(a.stderr, err)
					bad++
					continue
				}
				fmt.Fprintf(a.stdout, "%s: ok: %s\n", path, summary)
			}
			if bad > 0 {
				return exitError{code: 1}
			}
			return nil
		},
	}
}

func validateFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("validate: %w", err)
	}
	if isScenario(data) {
		s, err := scenario.Parse(path, data)
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
