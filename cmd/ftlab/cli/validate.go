package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/internal/yamldoc"
	"github.com/ftlab/ftlab/orchestrator/scenario"
)

func (a *app) validateCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "validate <file>...",
		Short: "Check topology and scenario files without building anything",
		Long: `validate decodes each topology or scenario file strictly and reports every
problem at once, each with its file, line, column and field. It needs no
privileges and changes nothing.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			bad := 0
			var all []scenario.Validation
			for _, path := range args {
				v := scenario.Validate(path)
				all = append(all, v)
				if !v.OK {
					bad++
				}
			}
			if asJSON {
				if err := a.printJSON(all); err != nil {
					return err
				}
			} else {
				for _, v := range all {
					if v.OK {
						fmt.Fprintf(a.stdout, "%s: ok: %s\n", v.File, v.Summary)
						continue
					}
					for _, p := range v.Problems {
						fmt.Fprintln(a.stderr, problemText(p))
					}
				}
			}
			if bad > 0 {
				return exitError{code: 1}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print every file's result and problems as JSON")
	return cmd
}

// problemText is a problem as file:line:col: field: message.
func problemText(p scenario.Problem) string {
	return (&yamldoc.FieldError{File: p.File, Line: p.Line, Column: p.Column, Field: p.Field, Msg: p.Message}).Error()
}
