package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/orchestrator/scenario"
)

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
				summary, err := scenario.ValidateFile(path)
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
