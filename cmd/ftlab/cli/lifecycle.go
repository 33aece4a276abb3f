package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/switchd"
)

func seconds(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

// upFlags are ftlab up's flags.
type upFlags struct {
	name, policy string
	workers      int
	dp           switchd.Config
}

// options are the lab's options for the flags, to build it from the
// topology file.
func (f *upFlags) options(file string) (lab.UpOptions, error) {
	if err := lab.ValidateName(f.name); err != nil {
		return lab.UpOptions{}, err
	}
	dp := f.dp
	if f.policy != "" {
		var err error
		if dp.EdgePolicy, dp.AggPolicy, err = switchd.ParsePolicyFlag(f.policy); err != nil {
			return lab.UpOptions{}, err
		}
	}
	return lab.UpOptions{TopologyFile: file, Workers: f.workers, DataPlane: dp}, nil
}

func (a *app) upCommand() *cobra.Command {
	var f upFlags
	cmd := &cobra.Command{
		Use:         "up <topology.yaml>",
		Short:       "Build a lab from a topology file",
		Args:        cobra.ExactArgs(1),
		Annotations: rootOnly(),
		RunE: func(cmd *cobra.Command, args []string) error {
			opt, err := f.options(args[0])
			if err != nil {
				return err
			}
			t, err := topology.Load(args[0])
			if err != nil {
				return err
			}
			name := f.name
			st, err := a.store.Up(cmd.Context(), name, t, opt)
			if err != nil {
				return err
			}
			tm := st.Timings
			fmt.Fprintf(a.stdout, "lab %s is up in %s (namespaces %s, links %s, config %s, data plane %s)\n",
				name, seconds(st.SetupTime()), seconds(tm.Namespaces), seconds(tm.Links), seconds(tm.Config), seconds(st.DataPlaneTime))
			fmt.Fprintf(a.stdout, "  %s\n", t)
			fmt.Fprintf(a.stdout, "  data plane: %s\n", describeDataPlane(st.DataPlane))
			fmt.Fprintf(a.stdout, "  try: ftlab status -n %s | ftlab exec -n %s %s -- ip addr | ftlab down -n %s\n",
				name, name, t.Hosts()[0].Name, name)
			return nil
		},
	}
	f.add(cmd)
	return cmd
}

func (f *upFlags) add(cmd *cobra.Command) {
	addNameFlag(cmd, &f.name)
	fs := cmd.Flags()
	fs.IntVar(&f.workers, "workers", 0, "parallel build workers (0: twice the CPU count)")
	fs.StringVar((*string)(&f.dp.DataPlane), "dataplane", string(switchd.DataPlaneBPF), "what forwards in the switches: bpf, kernel or none")
	fs.StringVar(&f.dp.Mode, "mode", switchd.ModeLineRate, "eBPF switch mode: linerate (XDP redirect, no queues) or shaped (HTB at link rate, link model)")
	fs.StringVar(&f.policy, "policy", "ecmp", "uplink policy: "+strings.Join(switchd.PolicyNames(), ", ")+"; or per layer: edge=ofan,agg=ecmp")
	def := switchd.DefaultPolicyParams()
	fs.IntVar(&f.dp.PipeSize, "pipe-size", def.POfan.Pipe, "pofan: ingress ports per pipe (pofan.pipe)")
	fs.IntVar(&f.dp.AckThreshold, "ack-threshold", int(def.Ofan.AckThreshold), "ofan, pofan: packets of at most this many IPv4 bytes use the ACK pointers (ofan.ack_threshold)")
	fs.BoolVar(&f.dp.Trim, "trim", false, "shaped mode: trim data packets to their headers instead of dropping them")
	fs.Float64Var(&f.dp.ProbeHeadroom, "probe-headroom", 0, "shaped mode: share of every port's buffer only the transport's probes may use, e.g. 0.01 (Ordered Chaos IV-B4)")
	fs.Uint64Var(&f.dp.Seed, "seed", 1, "seed of ECMP hash seeds and Ofan pointer starts")
	fs.DurationVar(&f.dp.ConvergenceDelay, "convergence-delay", switchd.DefaultConvergenceDelay, "how long switches keep routes through a failed link")
}

func describeDataPlane(c switchd.Config) string {
	switch c.DataPlane {
	case switchd.DataPlaneBPF:
		s := fmt.Sprintf("eBPF switch, %s, policy edge=%s agg=%s", c.Mode, c.EdgePolicy, c.AggPolicy)
		if c.Trim {
			s += ", trimming"
		}
		if c.ProbeHeadroom > 0 {
			s += fmt.Sprintf(", probe headroom %g%% of each buffer", 100*c.ProbeHeadroom)
		}
		return s
	case switchd.DataPlaneKernel:
		return "kernel IP forwarding (multipath routes)"
	}
	return "none (links only)"
}

func (a *app) downCommand() *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:         "down",
		Short:       "Remove a lab and everything it made",
		Args:        cobra.NoArgs,
		Annotations: rootOnly(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			c, err := a.store.TakeDown(name)
			if err != nil {
				return err
			}
			settled := "done"
			if !c.Done {
				settled = "still running"
			}
			fmt.Fprintf(a.stdout, "lab %s is down in %s (kernel cleanup %s, %s)\n", name, seconds(time.Since(start)), seconds(c.Wait), settled)
			return nil
		},
	}
	addNameFlag(cmd, &name)
	return cmd
}

func (a *app) cleanupCommand() *cobra.Command {
	var all, asJSON bool
	cmd := &cobra.Command{
		Use:   "cleanup",
		Short: "Remove every ftlab leftover (interrupted labs, stray namespaces)",
		Long: `cleanup removes what an interrupted or killed ftlab left behind: labs whose build
or teardown did not finish, labs of an ftlab run that is gone (killed), and
namespaces named ftlab-* that no lab records. Other labs that are up are kept
unless --all is given; labs a running ftlab is working on are never touched.
Nothing without ftlab's prefix is touched.`,
		Args:        cobra.NoArgs,
		Annotations: rootOnly(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			actions, err := a.store.Cleanup(all)
			if asJSON {
				if actions == nil {
					actions = []lab.CleanupAction{}
				}
				if jerr := a.printJSON(actions); jerr != nil {
					return jerr
				}
				return err
			}
			if len(actions) == 0 {
				fmt.Fprintln(a.stdout, "nothing to clean up")
			}
			for _, act := range actions {
				verb := "kept   "
				if act.Removed {
					verb = "removed"
				}
				fmt.Fprintf(a.stdout, "%s lab %s (%d namespaces): %s\n", verb, act.Lab, len(act.Namespaces), act.Reason)
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "also remove labs that are up")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print what was done as JSON")
	return cmd
}

func (a *app) listCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:         "list",
		Short:       "List labs",
		Args:        cobra.NoArgs,
		Annotations: rootOnly(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			labs, err := a.store.Summaries()
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(labs)
			}
			if len(labs) == 0 {
				fmt.Fprintln(a.stdout, "no labs")
				return nil
			}
			w := newTable(a.stdout)
			fmt.Fprintln(w, "LAB\tPHASE\tTOPOLOGY\tDATAPLANE\tCREATED\tFAILED\tIMPAIRED")
			for _, l := range labs {
				if l.Error != "" {
					fmt.Fprintf(w, "%s\tunreadable\t-\t-\t-\t-\t-\n", l.Name)
					continue
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%d\t%d\n", l.Name, l.Phase, l.Topology, l.DataPlane,
					l.Created.Local().Format(time.DateTime), len(l.FailedLinks), l.Impairments)
			}
			return w.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
