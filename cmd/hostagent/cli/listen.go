package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/hostagent/agent"
	"github.com/ftlab/ftlab/hostagent/control"
	"github.com/ftlab/ftlab/internal/units"
)

func listenCommand(stdout io.Writer) *cobra.Command {
	var c common
	var tf transportFlags
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "listen",
		Short: "Receive messages and print each one delivered and verified, until interrupted",
		Long: `listen receives messages from senders using the same port and scheme (the
receiver runs the receiving half of its own scheme: PFLD's NACKs need
rss+pfld on both ends) and prints each delivered, fully verified message.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, cfg, err := agentOptions(&c, &tf)
			if err != nil {
				return err
			}
			// The agent does not share the command's context: an interrupt
			// stops it through the protocol instead (Listen).
			h, err := agent.StartConfigured(context.WithoutCancel(cmd.Context()), opts, cfg)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "listening on %s port %d with %s (Ctrl-C to stop)\n", h.Ready.Addr, h.Ready.Port, cfg.Scheme)
			print := printReceived
			if jsonOut {
				print = printEvent
			}
			return h.Listen(cmd.Context(), func(ev control.Event) { print(stdout, ev) })
		},
	}
	c.add(cmd)
	tf.add(cmd)
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print the protocol's events instead")
	return cmd
}

// printEvent writes an event as the protocol's JSON line.
func printEvent(w io.Writer, ev control.Event) { _ = control.WriteEvent(w, ev) }

// printReceived tells a listener's deliveries, its final count and errors.
func printReceived(w io.Writer, ev control.Event) {
	switch e := ev.(type) {
	case *control.Received:
		r := e.Record
		fmt.Fprintf(w, "received %s from %s (flow %d msg %d): %d packets in %s, verified; retransmissions useful %d spurious %d, duplicates %d, NACKed %d\n",
			units.FormatSize(uint64(r.Bytes)), e.From, r.Flow, r.Msg, r.Packets, dur(r.EndNs-r.FirstNs), r.RetxUseful, r.RetxSpurious, r.Duplicates, r.NACKsSent)
	case *control.Stats:
		if e.Final {
			fmt.Fprintf(w, "%d messages received; %d datagrams in, %d malformed, %d failed verification\n",
				e.Received, e.Endpoint.DatagramsIn, e.Endpoint.MalformedTotal(), e.Endpoint.CorruptPayload)
		}
	case *control.Error:
		fmt.Fprintf(w, "error: %s\n", e.Error)
	}
}
