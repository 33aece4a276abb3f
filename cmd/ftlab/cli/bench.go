package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/orchestrator/bench"
)

func (a *app) benchCommand() *cobra.Command {
	var ks string
	var quick, asJSON bool
	var reps int
	var out string
	cmd := &cobra.Command{
		Use:   "bench [fabric|dataplane|agent|memory|all]",
		Short: "Measure ftlab against baselines taken in the same run",
		Long: `bench measures fabric setup and teardown against bare namespaces and veths,
the data plane's packets per second per core against kernel IP forwarding, the
host agent's packet rate per core against a bare UDP loop, and memory per lab
and per flow. Every figure is reported with its baseline and their ratio, as a
table (markdown with --out) or JSON. Memory figures are measured --repetitions
times and reported as the median with the min, max and relative spread. Everything it creates lives under a fresh
"ftbench<hex>-" namespace prefix and is removed, also on error or Ctrl-C.`,
		Args:        cobra.MaximumNArgs(1),
		ValidArgs:   append(append([]string{}, bench.Sections...), "all"),
		Annotations: rootOnly(),
		RunE: func(cmd *cobra.Command, args []string) error {
			section := "all"
			if len(args) == 1 {
				section = args[0]
			}
			if reps < 0 {
				return fmt.Errorf("--repetitions: %d is negative", reps)
			}
			opt := bench.Options{Quick: quick, Repetitions: reps, Log: a.stderr}
			if cmd.Flags().Changed("k") {
				for _, f := range strings.Split(ks, ",") {
					k, err := strconv.Atoi(strings.TrimSpace(f))
					if err != nil || k < 2 || k%2 != 0 {
						return fmt.Errorf("--k: %q is not an even fat-tree size", f)
					}
					opt.K = append(opt.K, k)
				}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			rep, err := bench.Run(ctx, []string{section}, opt)
			if rep != nil && len(rep.Sections) > 0 || err == nil {
				if out != "" {
					var b bytes.Buffer
					if merr := rep.Markdown(&b); merr != nil {
						return merr
					}
					if werr := os.WriteFile(out, b.Bytes(), 0o644); werr != nil {
						return werr
					}
				}
				if asJSON {
					if jerr := a.printJSON(rep); jerr != nil {
						return jerr
					}
				} else if perr := rep.Markdown(a.stdout); perr != nil {
					return perr
				}
			}
			return err
		},
	}
	cmd.Flags().StringVar(&ks, "k", "4,8,16", "fat-tree sizes for the fabric section, comma-separated")
	cmd.Flags().BoolVar(&quick, "quick", false, "short windows, k=4 only, one repetition (smoke test)")
	cmd.Flags().IntVar(&reps, "repetitions", 0, fmt.Sprintf("measure each memory figure this many times and report the median, min and max (0: %d, or 1 with --quick)", bench.DefaultRepetitions))
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().StringVar(&out, "out", "", "also write the report as markdown to this file")
	return cmd
}
