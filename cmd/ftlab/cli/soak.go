package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/orchestrator/bench"
)

func (a *app) soakCommand() *cobra.Command {
	var runs int
	var rate, out string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "soak [scenario.yaml]",
		Short: "Run a scenario many times back to back and report what leaked",
		Long: `soak runs a scenario (default scenarios/demo.yaml) --runs times back to back in
this process, at a fixed --rate so that it needs no calibration, and samples after
every run the namespaces, mounts and run-directory files its labs could leave,
the process's file descriptors, goroutines, threads and children, and the Go heap.
It prints the samples as a table and fails if anything grew.`,
		Args:        cobra.MaximumNArgs(1),
		Annotations: rootOnly(),
		RunE: func(cmd *cobra.Command, args []string) error {
			if agentStarter == nil {
				return fmt.Errorf("this ftlab has no host agents built in")
			}
			opt := bench.SoakOptions{Scenario: "scenarios/demo.yaml", Runs: runs, Agents: agentStarter, Log: a.stderr}
			if len(args) == 1 {
				opt.Scenario = args[0]
			}
			var err error
			if opt.Rate, err = rateFlag("rate", rate); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			rep, err := bench.Soak(ctx, opt)
			if rep != nil {
				var b bytes.Buffer
				if merr := rep.Markdown(&b); merr != nil {
					return merr
				}
				if out != "" {
					if werr := os.WriteFile(out, b.Bytes(), 0o644); werr != nil {
						return werr
					}
				}
				if asJSON {
					if jerr := a.printJSON(rep); jerr != nil {
						return jerr
					}
				} else {
					a.stdout.Write(b.Bytes())
				}
				if err == nil && len(rep.Leaks) > 0 {
					err = fmt.Errorf("soak: %d leak(s)", len(rep.Leaks))
				}
			}
			return err
		},
	}
	cmd.Flags().IntVar(&runs, "runs", bench.DefaultSoakRuns, "back-to-back runs")
	cmd.Flags().StringVar(&rate, "rate", "4Mbit", "full link rate of the scenario (fixed: no calibration); empty keeps the file's")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().StringVar(&out, "out", "", "also write the table as markdown to this file")
	return cmd
}
