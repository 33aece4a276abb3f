package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/orchestrator/fabric"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/switchd"
)

func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func (a *app) pingallCommand() *cobra.Command {
	var name string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "pingall",
		Short: "Send a UDP echo from every host to every other host",
		Long: `pingall sends one UDP echo request from every host to every other host through
the lab's data plane, retries missing pairs twice, and reports how many pairs
answered, the round-trip times, and every pair that did not. Exit status 3 if any
pair failed.`,
		Args:        cobra.NoArgs,
		Annotations: rootOnly(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := a.store.Get(name)
			if err != nil {
				return err
			}
			res, err := fabric.PingAll(cmd.Context(), st.Topology, a.store.Namer(name))
			if err != nil {
				return err
			}
			if asJSON {
				if err := a.printJSON(res); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(a.stdout, "pingall %s: %d/%d pairs answered (%.1f%%), rtt p50 %v p99 %v max %v\n",
					name, res.OK, res.Total, 100*float64(res.OK)/float64(max(res.Total, 1)),
					res.RTTP50.Round(time.Microsecond), res.RTTP99.Round(time.Microsecond), res.RTTMax.Round(time.Microsecond))
				for _, p := range res.Failed() {
					fmt.Fprintf(a.stdout, "  no answer: %s -> %s\n", p.From, p.To)
				}
			}
			if res.OK != res.Total {
				return exitError{code: 3}
			}
			return nil
		},
	}
	addNameFlag(cmd, &name)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print every pair as JSON")
	return cmd
}

func (a *app) linkCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "link",
		Short: "Fail, repair, impair or list links",
	}
	cmd.AddCommand(a.linkSetCommand(), a.linkShowCommand())
	for _, up := range []bool{false, true} {
		var name string
		verb := map[bool]string{false: "down", true: "up"}[up]
		sub := &cobra.Command{
			Use:   verb + " <node> <node>",
			Short: map[bool]string{false: "Fail the link between two nodes", true: "Repair the link between two nodes"}[up],
			Long: `The link changes at once in the data plane (in the eBPF switch its ports drop
everything, counted as link-down); after the lab's convergence delay every switch
reconverges to routes that avoid the link, or use it again.`,
			Args:              cobra.ExactArgs(2),
			Annotations:       rootOnly(),
			ValidArgsFunction: a.completeLinkEnds(&name),
			RunE: func(cmd *cobra.Command, args []string) error {
				start := time.Now()
				l, err := a.store.SetLink(cmd.Context(), name, args[0], args[1], up)
				if err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "link %s is %s; switches reconverged in %s\n", l, verb, seconds(time.Since(start)))
				return nil
			},
		}
		addNameFlag(sub, &name)
		cmd.AddCommand(sub)
	}
	return cmd
}

func (a *app) statsCommand() *cobra.Command {
	var name string
	var asJSON, reset, all bool
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Show the switches' per-port counters and queue statistics",
		Long: `stats reads every switch port's counters from the eBPF data plane: packets and
bytes, drops by cause, CE marks, trims, and the link model's queue statistics,
totalled per direction (E->A, A->C, C->A, A->E, ...). --ports lists every port
that carried or dropped traffic.`,
		Args:        cobra.NoArgs,
		Annotations: rootOnly(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := a.store.Get(name)
			if err != nil {
				return err
			}
			ctl := a.store.Control(st)
			if reset {
				if err := ctl.ResetStats(); err != nil {
					return err
				}
				fmt.Fprintln(a.stdout, "counters reset")
				return nil
			}
			ports, err := ctl.Stats()
			if err != nil {
				return err
			}
			totals := switchd.TotalByDirection(ports)
			if asJSON {
				return a.printJSON(struct {
					Directions  []switchd.DirectionTotals `json:"directions"`
					Ports       []switchd.PortStats       `json:"ports"`
					Impairments []lab.Impairment          `json:"impairments"`
				}{totals, ports, impairmentsOf(st)})
			}
			w := newTable(a.stdout)
			fmt.Fprintln(w, "DIRECTION\tPORTS\tTX PKTS\tTX BYTES\tDROPS\tCE\tTRIMMED\tMAX QUEUE\tMEAN QUEUE")
			for _, t := range totals {
				fmt.Fprintf(w, "%s\t%d\t%d\t%s\t%d\t%d\t%d\t%s\t%.0fB\n", t.Direction, t.Ports, t.TxPackets,
					units.FormatSize(t.TxBytes), t.Drops, t.CEMarked, t.Trimmed, units.FormatSize(t.MaxBacklog), t.MeanQueue)
			}
			if err := w.Flush(); err != nil {
				return err
			}
			if err := a.printImpairments(st.Impairments, ports); err != nil {
				return err
			}
			if !all {
				return nil
			}
			fmt.Fprintln(a.stdout)
			w = newTable(a.stdout)
			fmt.Fprintln(w, "SWITCH\tPORT\tDIR\tRX PKTS\tTX PKTS\tDROPS (cause)\tCE\tMAX QUEUE")
			for _, p := range ports {
				c := p.Counters
				if c.RxPackets == 0 && c.TxPackets == 0 && c.Drops() == 0 {
					continue
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%s\t%d\t%s\n", p.Switch, p.Ifname, p.Direction, c.RxPackets, c.TxPackets,
					dropCauses(c), c.CEMarked, units.FormatSize(p.Queue.MaxBacklog))
			}
			return w.Flush()
		},
	}
	addNameFlag(cmd, &name)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print totals and every port as JSON")
	cmd.Flags().BoolVar(&all, "ports", false, "also list every port that carried or dropped traffic")
	cmd.Flags().BoolVar(&reset, "reset", false, "zero every counter and queue statistic instead")
	return cmd
}

func dropCauses(c switchd.Counters) string {
	causes := []struct {
		n    uint64
		what string
	}{
		{c.DropCorrupt, "corrupt"}, {c.DropBuffer, "buffer"}, {c.DropLinkDown, "link-down"}, {c.DropNoRoute, "no-route"},
		{c.DropTTL, "ttl"}, {c.DropMalformed, "malformed"}, {c.DropNonIPv4, "non-ipv4"},
	}
	var parts []string
	for _, x := range causes {
		if x.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", x.n, x.what))
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, ", ")
}
