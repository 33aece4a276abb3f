package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/hostagent/agent"
)

func serveCommand(stdin io.Reader, stdout io.Writer) *cobra.Command {
	var c common
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the control protocol on stdin (commands) and stdout (events)",
		Long: `serve opens the agent's sockets, writes {"event":"ready",...} and then
executes JSON-lines commands from stdin (configure, send, stats, stop), writing
events to stdout. The protocol is documented in hostagent/control. It exits 0
after stop or at the end of stdin.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := c.options()
			if err != nil {
				return err
			}
			return agent.Serve(cmd.Context(), stdin, stdout, opts)
		},
	}
	c.add(cmd)
	return cmd
}
