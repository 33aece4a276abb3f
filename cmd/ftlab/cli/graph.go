package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/orchestrator/graph"
)

func (a *app) graphCommand() *cobra.Command {
	var name, format, out string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "graph [TOPOLOGY | -n LAB]",
		Short: "Draw a fabric by tier: SVG, HTML, dot or Mermaid",
		Long: `graph draws a fabric with its tiers as rows (cores or spines on top, hosts at the
bottom) and pods grouped. Given a topology file it draws that; given a lab
(-n) it draws the lab's links in their live state (failed links red and
dashed, a link with an interface down orange and dotted) and, with the eBPF
data plane, every link's counters per direction (packets, bytes, drops):
line width follows the bytes, a red dot marks drops, tooltips and the HTML
table give the numbers. SVG and HTML are drawn by ftlab itself.`,
		Example: `  ftlab graph topologies/fattree-k4.yaml -o k4.svg
  ftlab graph -n demo --format html -o demo.html
  ftlab graph -n demo --format dot | dot -Tpng > demo.png`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON {
				format = "json"
			}
			var g *graph.Graph
			switch {
			case len(args) == 1 && cmd.Flags().Changed("name"):
				return errors.New("give a topology file or a lab (-n), not both")
			case len(args) == 1:
				t, err := topology.Load(args[0])
				if err != nil {
					return err
				}
				g = graph.FromTopology(t)
			default:
				if os.Geteuid() != 0 {
					return errors.New("ftlab graph -n must run as root: it reads the lab's namespaces and counters")
				}
				st, err := a.store.Get(name)
				if err != nil {
					return err
				}
				if g, err = graph.FromLab(cmd.Context(), a.store, st); err != nil {
					return err
				}
			}
			w := a.stdout
			if out != "" && out != "-" {
				f, err := os.Create(out)
				if err != nil {
					return err
				}
				defer f.Close()
				w = f
			}
			if err := graph.Render(w, g, format); err != nil {
				return err
			}
			if w != a.stdout {
				c := g.Count()
				fmt.Fprintf(a.stdout, "%s: %s, %d nodes, %d links (%d failed)\n", out, format, len(g.Nodes), c.Links, c.Failed)
			}
			return nil
		},
	}
	addNameFlag(cmd, &name)
	cmd.Flags().StringVarP(&format, "format", "f", "svg", "output format: "+strings.Join(graph.Formats, ", "))
	cmd.Flags().StringVarP(&out, "output", "o", "", "write to this file (default stdout)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "the graph model as JSON (same as --format json)")
	return cmd
}
