package cli

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/orchestrator/serve"
)

func (a *app) serveCommand() *cobra.Command {
	var name, addr string
	var allowControl, allowRemote bool
	var interval time.Duration
	cmd := &cobra.Command{
		Use:   "serve [-n LAB | RESULTS_DIR]",
		Short: "Serve a local web page: a lab live, or a results directory's report",
		Long: `serve shows a lab that is up in the browser, live: the fabric drawn by tier with
every link coloured by its load and state (failed links red and dashed), and a
table of the links' load, queue depth and drops by cause, updated about once a
second. Given a results directory it serves its report.md rendered, with the
plots, and its files.

It listens on loopback (127.0.0.1) and answers only to loopback names; another
--addr needs --allow-remote. The page changes nothing unless --allow-control is
given: then it can fail and repair links, and only the page itself can (same
origin and a token new on every run).`,
		Example: `  ftlab serve -n demo
  ftlab serve -n demo --allow-control --addr 127.0.0.1:9000
  ftlab serve results/demo/20261201-093952`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opt := serve.Options{Store: a.store, Lab: name, AllowControl: allowControl, AllowRemote: allowRemote, Interval: interval}
			what := "lab " + name
			switch {
			case len(args) == 1 && cmd.Flags().Changed("name"):
				return errors.New("give a results directory or a lab (-n), not both")
			case len(args) == 1:
				opt.ResultsDir, what = args[0], args[0]
			case os.Geteuid() != 0:
				return errors.New("ftlab serve -n must run as root: it reads the lab's namespaces and counters")
			}
			srv, err := serve.New(opt)
			if err != nil {
				return err
			}
			ln, warning, err := serve.Listen(addr, allowRemote)
			if err != nil {
				return err
			}
			if warning != "" {
				fmt.Fprintln(a.stderr, warning)
			}
			mode := "read-only"
			if allowControl {
				mode = "control on: the page can fail and repair links"
			}
			fmt.Fprintf(a.stdout, "serving %s on http://%s/ (%s); Ctrl-C stops\n", what, ln.Addr(), mode)
			return srv.Serve(cmd.Context(), ln)
		},
	}
	addNameFlag(cmd, &name)
	fs := cmd.Flags()
	fs.StringVar(&addr, "addr", serve.DefaultAddr, "address to listen on (host:port; port 0 picks one)")
	fs.BoolVar(&allowRemote, "allow-remote", false, "allow an --addr that is not loopback, and requests to other host names")
	fs.BoolVar(&allowControl, "allow-control", false, "let the page fail and repair links")
	fs.DurationVar(&interval, "interval", serve.DefaultInterval, "how often the lab's counters are read")
	return cmd
}
