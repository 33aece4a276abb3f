package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/orchestrator/doctor"
)

func (a *app) doctorCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check that this machine's kernel has what ftlab needs",
		Long: `doctor tries, for real and in a namespace of its own that it removes again,
everything ftlab needs from the kernel: root, network namespaces and veths,
native XDP on veth, TCX, BTF, the HTB qdisc, a private bpffs, BPF ring
buffers. A failed check says what is missing and how to get it. The exit
status is 1 when a check failed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r := doctor.Run()
			if asJSON {
				if err := a.printJSON(r); err != nil {
					return err
				}
			} else {
				tw := newTable(a.stdout)
				fmt.Fprintln(tw, "CHECK\tSTATUS\tDETAIL")
				for _, c := range r.Results {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Name, c.Status, c.Detail)
				}
				tw.Flush()
				for _, c := range r.Results {
					if c.Fix != "" && c.Status != doctor.OK {
						fmt.Fprintf(a.stdout, "%s: %s\n", c.Name, c.Fix)
					}
				}
			}
			if !r.OK() {
				return exitError{1}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}
