package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/orchestrator/topology"
)

func (a *app) validateCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "validate <file>...",
		Short: "Check topology files without building anything",
		Long: `validate decodes each file strictly and reports every problem at once, each with
its file, line, column and field. It needs no privileges and changes nothing.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			bad := 0
			for _, path := range args {
				t, err := topology.Load(path)
				if err != nil {
					fmt.Fprintln(a.stderr, err)
					bad++
					continue
				}
				fmt.Fprintf(a.stdout, "%s: ok: %s\n", path, t)
			}
			if bad > 0 {
				return exitError{code: 1}
			}
			return nil
		},
	}
}
