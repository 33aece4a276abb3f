package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/hostagent/cc"
	"github.com/ftlab/ftlab/orchestrator/bench"
)

// benchFlags are ftlab bench's flags.
type benchFlags struct {
	ks            string
	ccs           string
	quick, asJSON bool
	reps          int
	out           string
}

// options are the benchmarks' options for the flags; kGiven says whether
// --k was given (its default is the fabric section's own).
func (f *benchFlags) options(kGiven bool, log io.Writer) (bench.Options, error) {
	if f.reps < 0 {
		return bench.Options{}, fmt.Errorf("--repetitions: %d is negative", f.reps)
	}
	opt := bench.Options{Quick: f.quick, Repetitions: f.reps, Log: log}
	if f.ccs != "" {
		for _, s := range strings.Split(f.ccs, ",") {
			name := strings.TrimSpace(s)
			if _, err := cc.Lookup(name); err != nil {
				return bench.Options{}, fmt.Errorf("--cc: %w", err)
			}
			opt.CC = append(opt.CC, name)
		}
	}
	if kGiven {
		for _, s := range strings.Split(f.ks, ",") {
			k, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || k < 2 || k%2 != 0 {
				return bench.Options{}, fmt.Errorf("--k: %q is not an even fat-tree size", s)
			}
			opt.K = append(opt.K, k)
		}
	}
	return opt, nil
}

func (a *app) benchCommand() *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench [fabric|setup|dataplane|agent|memory|all]",
		Short: "Measure ftlab against baselines taken in the same run",
		Long: `bench measures fabric setup and teardown, and ftlab up/down with the eBPF data
plane (setup), against bare namespaces and veths, the data plane's packets per
second per core against kernel IP forwarding, the
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
			opt, err := f.options(cmd.Flags().Changed("k"), a.stderr)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			rep, err := bench.Run(ctx, []string{section}, opt)
			if rep != nil && len(rep.Sections) > 0 || err == nil {
				if f.out != "" {
					var b bytes.Buffer
					if merr := rep.Markdown(&b); merr != nil {
						return merr
					}
					if werr := os.WriteFile(f.out, b.Bytes(), 0o644); werr != nil {
						return werr
					}
				}
				if f.asJSON {
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
	cmd.Flags().StringVar(&f.ks, "k", "4,8,16", "fat-tree sizes for the fabric section (setup: 8), comma-separated")
	cmd.Flags().StringVar(&f.ccs, "cc", "", "congestion controls the agent section measures against cc none, comma-separated (default: all of "+strings.Join(cc.Names(), ", ")+")")
	cmd.Flags().BoolVar(&f.quick, "quick", false, "short windows, k=4 only, one repetition (smoke test)")
	cmd.Flags().IntVar(&f.reps, "repetitions", 0, fmt.Sprintf("measure each memory figure this many times and report the median, min and max (0: %d, or 1 with --quick)", bench.DefaultRepetitions))
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print the report as JSON")
	cmd.Flags().StringVar(&f.out, "out", "", "also write the report as markdown to this file")
	return cmd
}
