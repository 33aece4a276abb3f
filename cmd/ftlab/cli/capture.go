package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/orchestrator/capture"
)

func (a *app) captureCommand() *cobra.Command {
	var name, out, filter string
	var count, snaplen int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "capture NODE[:PORT]...",
		Short: "Capture the frames crossing lab ports (pcapng, text or JSON)",
		Long: `capture records what crosses the given ports until interrupted or --count
frames were written. NODE alone is every port of the node; PORT is a port
number or the interface name (the peer node's name). Switch ports are read
through the eBPF data plane's tap, so capture sees what the switch sees in
both modes, with its verdict; host ports through an AF_PACKET socket.

-w FILE writes pcapng (-w - to stdout: ftlab capture ... -w - | wireshark -k -i -),
each packet commented with its port, direction and the switch's verdict.
Without -w every frame is a line on stdout (--json: a JSON object).
Decode ftlab's header with tools/wireshark/ftlab.lua (docs/capture.md).

Filter ` + capture.FilterSyntax,
		Example: `  ftlab capture -n demo e0-0:a0-0 -w e0-0.pcapng
  ftlab capture -n demo a0-0 --filter 'type nack or dropped' --count 100
  ftlab capture -n demo h0-0-0 -w - | wireshark -X lua_script:tools/wireshark/ftlab.lua -o udp.try_heuristic_first:TRUE -k -i -`,
		Args:        cobra.MinimumNArgs(1),
		Annotations: rootOnly(),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := a.store.Get(name)
			if err != nil {
				return err
			}
			l, err := capture.LabOf(a.store, st)
			if err != nil {
				return err
			}
			opt := capture.Options{Targets: args, Filter: filter, Count: count, SnapLen: snaplen, Format: capture.FormatText, Out: a.stdout}
			if asJSON {
				opt.Format = capture.FormatJSON
			}
			summary := a.stderr
			if out != "" {
				opt.Format = capture.FormatPcapng
				if out != "-" {
					f, err := os.Create(out)
					if err != nil {
						return err
					}
					defer f.Close()
					opt.Out, summary = f, a.stdout
				}
			}
			opt.Ready = func(ports []capture.Port) {
				names := make([]string, len(ports))
				for i, p := range ports {
					names[i] = p.String()
				}
				fmt.Fprintf(a.stderr, "capturing on %s; interrupt to stop\n", strings.Join(names, ", "))
			}
			res, err := capture.Run(cmd.Context(), l, opt)
			if res != nil {
				if asJSON && summary == a.stdout {
					if jerr := json.NewEncoder(summary).Encode(res); jerr != nil {
						err = errors.Join(err, jerr)
					}
				} else {
					printCaptureSummary(summary, res)
				}
			}
			return err
		},
	}
	addNameFlag(cmd, &name)
	f := cmd.Flags()
	f.StringVarP(&out, "write", "w", "", "write pcapng to this file (- for stdout)")
	f.IntVarP(&count, "count", "c", 0, "stop after writing this many frames (0: until interrupted)")
	f.StringVarP(&filter, "filter", "f", "", "keep only frames matching this expression (see above)")
	f.IntVarP(&snaplen, "snaplen", "s", 0, fmt.Sprintf("bytes kept of each frame (default %d, at most %d)", capture.DefaultSnapLen, capture.MaxSnapLen))
	f.BoolVar(&asJSON, "json", false, "frames (without -w) or the summary (with -w FILE) as JSON")
	return cmd
}

func printCaptureSummary(w io.Writer, res *capture.Result) {
	fmt.Fprintf(w, "%d frames written", res.Written)
	if res.Lost > 0 {
		fmt.Fprintf(w, ", %d lost (a switch's ring was full: capture fewer ports or use a filter and a smaller --snaplen)", res.Lost)
	}
	fmt.Fprintln(w)
	tw := newTable(w)
	fmt.Fprintln(tw, "PORT\tIN\tOUT\tWRITTEN\tLOST\tVERDICTS")
	for _, p := range res.Ports {
		keys := make([]string, 0, len(p.Verdicts))
		for k := range p.Verdicts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		vs := make([]string, len(keys))
		for i, k := range keys {
			vs[i] = fmt.Sprintf("%s %d", k, p.Verdicts[k])
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\n", p.Port, p.In, p.Out, p.Written, p.Lost, strings.Join(vs, ", "))
	}
	tw.Flush()
}
