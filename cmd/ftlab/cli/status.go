package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/orchestrator/fabric"
	"github.com/ftlab/ftlab/orchestrator/lab"
)

func (a *app) statusCommand() *cobra.Command {
	var name string
	var asJSON, probe bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show a lab's nodes, links, addresses and live state",
		Long: `status joins the lab's record with what the kernel says now: whether each
namespace exists and each link is up at both ends. --probe also sends one UDP
datagram across every link in each direction.`,
		Args:        cobra.NoArgs,
		Annotations: rootOnly(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, err := a.store.Status(cmd.Context(), name, probe)
			if err != nil {
				return err
			}
			if asJSON {
				if err := a.printJSON(v); err != nil {
					return err
				}
			} else if err := a.printStatus(v); err != nil {
				return err
			}
			if !v.Health.OK {
				return exitError{code: 3}
			}
			return nil
		},
	}
	addNameFlag(cmd, &name)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	cmd.Flags().BoolVar(&probe, "probe", false, "send a datagram across every link in both directions")
	return cmd
}

func (a *app) printStatus(v *lab.Status) error {
	t := v.Topology
	shape := fmt.Sprintf("fat tree k=%d", t.K)
	if t.Kind == topology.LeafSpine {
		shape = fmt.Sprintf("leaf-spine %d leaves x %d spines", t.Leaves, t.Spines)
	}
	fmt.Fprintf(a.stdout, "lab       %s (%s since %s, pid %d)\n", v.Lab, v.Phase, v.Created.Local().Format(time.DateTime), v.PID)
	fmt.Fprintf(a.stdout, "topology  %s: %s, %d hosts, %d switches, %d links", t.Name, shape, t.Hosts, t.Switches, t.Links)
	if v.TopologyFile != "" {
		fmt.Fprintf(a.stdout, " (%s)", v.TopologyFile)
	}
	fmt.Fprintln(a.stdout)
	h := v.Health
	fmt.Fprintf(a.stdout, "dataplane %s\n", describeDataPlane(v.DataPlane))
	fmt.Fprintf(a.stdout, "health    %d/%d namespaces present, %d/%d links up", h.NamespacesPresent, h.Namespaces, h.LinksUp, h.Links)
	if h.LinksFailed > 0 {
		fmt.Fprintf(a.stdout, ", %d failed on purpose (%s)", h.LinksFailed, strings.Join(v.FailedLinks, ", "))
	}
	if h.ProbesOK != nil {
		fmt.Fprintf(a.stdout, ", %d/%d link probes delivered", *h.ProbesOK, len(v.Probes))
	}
	fmt.Fprintln(a.stdout)

	fmt.Fprintln(a.stdout, "\nNODES")
	w := newTable(a.stdout)
	fmt.Fprintln(w, "NAME\tROLE\tADDRESS\tNAMESPACE\tSTATE")
	for _, n := range v.Nodes {
		state := "ok"
		if !n.Present {
			state = "MISSING"
		} else if n.Error != "" {
			state = "error: " + n.Error
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", n.Name, n.Role, n.Addr, n.Namespace, state)
	}
	if err := w.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(a.stdout, "\nLINKS (rate/buffer/ecn per direction: up = towards the core)")
	w = newTable(a.stdout)
	fmt.Fprintln(w, "LINK\tSTAGE\tMTU\tUP\tDOWN\tSTATE")
	for _, l := range v.Links {
		state := l.State
		if state == "down" {
			state = fmt.Sprintf("DOWN (%s %s, %s %s)", l.A.Node, l.A.State, l.B.Node, l.B.State)
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\n", l.Name, l.Stage, l.MTU, params(l.Up), params(l.Down), state)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	var failed []fabric.ProbeResult
	for _, p := range v.Probes {
		if !p.OK {
			failed = append(failed, p)
		}
	}
	if len(failed) > 0 {
		fmt.Fprintln(a.stdout, "\nFAILED PROBES")
		for _, p := range failed {
			fmt.Fprintf(a.stdout, "  %s: %s -> %s: %s\n", p.Link, p.From, p.To, p.Error)
		}
	}
	return nil
}

func params(p topology.LinkParams) string {
	ecn := "off"
	if p.ECNBytes > 0 {
		ecn = units.FormatSize(p.ECNBytes)
	}
	return fmt.Sprintf("%s/%s/%s", units.FormatRate(p.RateBps), units.FormatSize(p.BufferBytes), ecn)
}
