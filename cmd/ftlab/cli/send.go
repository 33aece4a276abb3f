package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/hostagent/cc"
	"github.com/ftlab/ftlab/hostagent/scheme"
	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/orchestrator/fidelity"
	"github.com/ftlab/ftlab/orchestrator/runner"
	"github.com/ftlab/ftlab/orchestrator/scenario"
)

// sendFlags are ftlab send's flags.
type sendFlags struct {
	name, size, transport, cc string
	params                    []string
	count                     int
	parallel                  bool
	timeout                   time.Duration
	seed                      uint64
	asJSON, quiet             bool
}

func (f *sendFlags) add(cmd *cobra.Command) {
	addNameFlag(cmd, &f.name)
	fs := cmd.Flags()
	fs.StringVar(&f.size, "size", scenario.DefaultSize, "bytes per message (64KiB, 10MB)")
	fs.StringVar(&f.transport, "transport", string(scenario.DefaultTransport), "transport: "+strings.Join(scheme.Names(), ", "))
	fs.StringVar(&f.cc, "cc", string(scenario.DefaultCC), "congestion control: "+strings.Join(cc.Names(), ", "))
	fs.StringArrayVar(&f.params, "param", nil, "transport, congestion-control or host parameter as [block.]key=value (repeatable), e.g. sigma=8, rss.tau=2rtt, swift.ai=2, host.window=64KiB; see docs/scenarios.md")
	fs.IntVar(&f.count, "count", 1, "messages to send, one after the other")
	fs.BoolVar(&f.parallel, "parallel", false, "send the --count messages all at once instead")
	fs.DurationVar(&f.timeout, "timeout", scenario.DefaultTimeout, "give up on messages not delivered by then")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the transport's random choices")
	fs.BoolVar(&f.asJSON, "json", false, "print the result as JSON")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no live rate line")
	_ = cmd.RegisterFlagCompletionFunc("transport", completeWords(scheme.Names()...))
	_ = cmd.RegisterFlagCompletionFunc("cc", completeWords(cc.Names()...))
}

// options are the runner's options for the flags and arguments.
func (f *sendFlags) options(args []string) (runner.SendOptions, error) {
	bytes, err := units.ParseSize(f.size)
	if err != nil {
		return runner.SendOptions{}, fmt.Errorf("--size: %w", err)
	}
	if f.count < 1 {
		return runner.SendOptions{}, fmt.Errorf("--count: %d; send at least 1 message", f.count)
	}
	if f.timeout <= 0 {
		return runner.SendOptions{}, fmt.Errorf("--timeout: must be longer than 0s")
	}
	if _, err := scheme.Lookup(f.transport); err != nil {
		return runner.SendOptions{}, fmt.Errorf("--transport: %w", err)
	}
	if _, err := cc.Lookup(f.cc); err != nil {
		return runner.SendOptions{}, fmt.Errorf("--cc: %w", err)
	}
	return runner.SendOptions{Lab: f.name, Src: args[0], Dst: args[1], Bytes: bytes, Count: f.count, Parallel: f.parallel,
		Transport: f.transport, CC: f.cc, Params: f.params, Timeout: f.timeout, Seed: f.seed}, nil
}

func (a *app) sendCommand() *cobra.Command {
	var f sendFlags
	cmd := &cobra.Command{
		Use:   "send <src-host> <dst-host>",
		Short: "Send messages between two hosts of a lab with a shipped transport",
		Long: `send runs host agents on a lab that is up, as it is (failed links and ftlab link
set impairments included), and sends --count messages of --size from one host to
another with a transport of the registry (--transport) and a congestion control
(--cc). While it runs it prints the rate the destination's edge switch passes to
it; at the end, every message's flow completion time, retransmissions and RTOs,
and the fidelity verdict every run gets. Every message is verified byte for byte
on delivery. Like a run, it zeroes the switches' counters as it starts, so ftlab
stats afterwards shows the transfer. Exit status 1 if a message was not
delivered, 4 if the verdict is FAIL.`,
		Example: `  ftlab send -n demo h0-0-0 h3-1-1 --size 4MiB
  ftlab send -n demo h0-0-0 h3-1-1 --size 1MiB --count 10 --transport rss+pfld --param sigma=8
  ftlab send -n demo h0-0-0 h3-1-1 --size 4MiB --cc swift --param swift.base_target=2rtt`,
		Args:              cobra.ExactArgs(2),
		Annotations:       rootOnly(),
		ValidArgsFunction: a.completeNodes(&f.name, true, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opt, err := f.options(args)
			if err != nil {
				return err
			}
			if agentStarter == nil {
				return fmt.Errorf("this ftlab has no host agents built in")
			}
			opt.Store, opt.Agents = a.store, agentStarter
			var line *rateLine
			if !f.quiet && !f.asJSON {
				line = newRateLine(a.stderr)
				opt.Progress = line.show
			}
			res, err := runner.Send(cmd.Context(), opt)
			if line != nil {
				line.end()
			}
			if res == nil {
				return err
			}
			if f.asJSON {
				if jerr := a.printJSON(res); jerr != nil {
					return jerr
				}
			} else {
				a.printSend(res)
			}
			if err != nil {
				return err
			}
			if res.Fidelity != nil && res.Fidelity.Verdict == fidelity.FAIL {
				return exitError{code: 4}
			}
			return nil
		},
	}
	f.add(cmd)
	return cmd
}

// rateLine is send's live rate: rewritten in place on a terminal, one
// line a second elsewhere.
type rateLine struct {
	w        io.Writer
	terminal bool
	last     time.Duration
	shown    bool
}

func newRateLine(w io.Writer) *rateLine {
	l := &rateLine{w: w}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			l.terminal = true
		}
	}
	return l
}

func (l *rateLine) show(p runner.SendProgress) {
	text := fmt.Sprintf("%6.1f s  %10s/s into the destination  %s so far", p.Elapsed.Seconds(), units.ApproxRate(p.RateBps), units.ApproxSize(p.Bytes))
	if l.terminal {
		fmt.Fprintf(l.w, "\r%s\x1b[K", text)
		l.shown = true
		return
	}
	if p.Elapsed-l.last >= time.Second || l.last == 0 {
		fmt.Fprintln(l.w, text)
		l.last = p.Elapsed
	}
}

func (l *rateLine) end() {
	if l.terminal && l.shown {
		fmt.Fprintln(l.w)
	}
}

func (a *app) printSend(res *runner.SendResult) {
	s := res.Summary
	fmt.Fprintf(a.stdout, "send %s -> %s on lab %s, %s, cc %s: %d/%d messages delivered and verified (%s) in %s\n",
		res.Src, res.Dst, res.Lab, res.Transport, res.CC, s.Delivered, s.Messages, res.Status, seconds(res.Duration))
	if s.Delivered > 0 {
		fmt.Fprintf(a.stdout, "  FCT min %v p50 %v max %v; goodput %s/s\n", s.FCTMin.Round(time.Microsecond), s.FCTP50.Round(time.Microsecond),
			s.FCTMax.Round(time.Microsecond), units.ApproxRate(s.GoodputBps))
	}
	fmt.Fprintf(a.stdout, "  retransmissions %d, RTOs %d, NACKs %d\n", s.Retransmissions, s.RTOs, s.NACKs)
	if len(res.Messages) > 1 {
		w := newTable(a.stdout)
		fmt.Fprintln(w, "  MSG\tBYTES\tFCT\tGOODPUT\tPACKETS\tRETX\tRTOS\tDELIVERED")
		for i, m := range res.Messages {
			fmt.Fprintf(w, "  %d\t%s\t%v\t%s/s\t%d\t%d\t%d\t%v\n", i, units.FormatSize(m.Bytes), m.FCT.Round(time.Microsecond),
				units.ApproxRate(m.GoodputBps), m.Packets, m.Retransmissions, m.RTOs, m.Delivered)
		}
		_ = w.Flush()
	}
	for _, im := range res.Impairments {
		fmt.Fprintf(a.stdout, "  impaired: %s %s: %s\n", im.Link, im.Direction, im.Describe())
	}
	if f := res.Fidelity; f != nil {
		fmt.Fprintf(a.stdout, "  fidelity: %s\n", f.Verdict)
		for _, why := range f.Reasons {
			fmt.Fprintf(a.stdout, "    %s\n", why)
		}
	}
}
