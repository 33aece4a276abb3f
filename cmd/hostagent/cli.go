package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/ftlab/ftlab/internal/stats"

	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/hostagent/agent"
	"github.com/ftlab/ftlab/hostagent/control"
	"github.com/ftlab/ftlab/hostagent/scheme"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/internal/params"
	"github.com/ftlab/ftlab/internal/units"
)

// run executes the command line and returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := rootCommand(stdin, stdout)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintf(stderr, "hostagent: %v\n", err)
		return 1
	}
	return 0
}

// common are the flags every subcommand has.
type common struct {
	port  uint16
	addr  string
	mtu   int
	netns string
}

func (c *common) add(cmd *cobra.Command) {
	cmd.Flags().Uint16Var(&c.port, "port", agent.DefaultPort, "UDP port of every agent")
	cmd.Flags().StringVar(&c.addr, "addr", "", "this host's IPv4 address (default: the namespace's only one)")
	cmd.Flags().IntVar(&c.mtu, "socket-mtu", agent.DefaultSocketMTU, "largest link MTU the socket buffers allow")
	cmd.Flags().StringVar(&c.netns, "netns", "", "open the sockets in this named network namespace (default: the current one, as with ftlab exec)")
}

func (c *common) options() (agent.Options, error) {
	o := agent.Options{Port: c.port, MTU: c.mtu, Namespace: c.netns}
	if c.addr != "" {
		a, err := netip.ParseAddr(c.addr)
		if err != nil || !a.Is4() {
			return o, fmt.Errorf("--addr %q is not an IPv4 address", c.addr)
		}
		o.Addr = a
	}
	return o, nil
}

// transportFlags configure the scheme and transport of listen and send.
type transportFlags struct {
	scheme  string
	params  []string
	pacing  string
	window  string
	minRTO  time.Duration
	baseRTT time.Duration
	mtu     int
	spin    time.Duration
}

func (f *transportFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.scheme, "scheme", "rss+pfld", "transport scheme: "+strings.Join(scheme.Names(), ", "))
	cmd.Flags().StringArrayVar(&f.params, "param", nil, "scheme parameter as [block.]key=value (repeatable), e.g. sigma=8, rss.tau=2rtt; see docs/scenarios.md")
	cmd.Flags().StringVar(&f.pacing, "pacing", "0", "pacing rate per flow, e.g. 100Mbit (0: unpaced, the window limits)")
	cmd.Flags().StringVar(&f.window, "window", "256KiB", "payload in flight per flow")
	cmd.Flags().DurationVar(&f.baseRTT, "base-rtt", transport.NominalBaseRTT, "the fabric's idle round trip: the unit of parameters written as 2rtt, and of the RTT-relative defaults")
	cmd.Flags().DurationVar(&f.minRTO, "min-rto", 0, "smallest retransmission timeout (default 4 base RTTs)")
	cmd.Flags().IntVar(&f.mtu, "mtu", 1500, "IP MTU of the host's link")
	cmd.Flags().DurationVar(&f.spin, "spin", 0, "spin instead of sleeping through waits up to this long (precise pacing, costs a CPU)")
}

func (f *transportFlags) configure() (*control.Configure, error) {
	p, err := f.schemeParams()
	if err != nil {
		return nil, err
	}
	var pacing uint64
	if f.pacing != "0" {
		var err error
		if pacing, err = units.ParseRate(f.pacing); err != nil {
			return nil, fmt.Errorf("--pacing: %w", err)
		}
	}
	window, err := units.ParseSize(f.window)
	if err != nil {
		return nil, fmt.Errorf("--window: %w", err)
	}
	c := &control.Configure{Scheme: f.scheme, Params: p, Transport: control.Transport{
		HostParams: transport.HostParams{Pacing: pacing, Window: window, MinRTO: f.minRTO},
		BaseRTTNs:  int64(f.baseRTT), MTU: f.mtu, SpinNs: int64(f.spin),
	}}
	return c, c.Transport.Validate()
}

// schemeParams are the scheme's parameter blocks: its defaults at the base
// RTT with the --param settings applied.
func (f *transportFlags) schemeParams() (*scheme.Params, error) {
	env := params.Env{RTT: f.baseRTT}
	p, err := scheme.Defaults(f.scheme, env)
	if err != nil {
		return nil, fmt.Errorf("--scheme: %w", err)
	}
	for _, kv := range f.params {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--param %q: want key=value", kv)
		}
		if err := scheme.SetParam(p, f.scheme, k, v, env); err != nil {
			return nil, fmt.Errorf("--param %q: %w", kv, err)
		}
	}
	return p, nil
}

func rootCommand(stdin io.Reader, stdout io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "hostagent",
		Short: "ftlab's host agent: message transport over real sockets in a host namespace",
		Long: `hostagent moves messages between the hosts of an ftlab fabric with a
transport scheme (ecmp, rps, rss, rss+pfld, ...). It runs inside a host's
network namespace (ftlab exec <host> -- hostagent ...) and needs root (raw
sockets). serve speaks the JSON-lines control protocol on stdin and stdout for
the orchestrator; listen and send are for people.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(serveCommand(stdin, stdout), listenCommand(stdout), sendCommand(stdout))
	return root
}

func serveCommand(stdin io.Reader, stdout io.Writer) *cobra.Command {
	var c common
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the control protocol on stdin (commands) and stdout (events)",
		Long: `serve opens the agent's sockets, writes {"event":"ready",...} and then
executes JSON-lines commands from stdin (configure, send, stats, stop), writing
events to stdout. The protocol is documented in hostagent/control. It exits 0
after stop or at the end of stdin.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := c.options()
			if err != nil {
				return err
			}
			return agent.Serve(cmd.Context(), stdin, stdout, opts)
		},
	}
	c.add(cmd)
	return cmd
}

func listenCommand(stdout io.Writer) *cobra.Command {
	var c common
	var tf transportFlags
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "listen",
		Short: "Receive messages and print each one delivered and verified, until interrupted",
		Long: `listen receives messages from senders using the same port and scheme (the
receiver runs the receiving half of its own scheme: PFLD's NACKs need
rss+pfld on both ends) and prints each delivered, fully verified message.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := c.options()
			if err != nil {
				return err
			}
			cfg, err := tf.configure()
			if err != nil {
				return err
			}
			// The agent does not share the command's context: an interrupt
			// stops it through the protocol instead, so it ends cleanly and
			// still reports its final counts rather than ending with
			// "context canceled" when the cancellation reaches it first.
			h, err := start(context.WithoutCancel(cmd.Context()), opts, cfg)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "listening on %s port %d with %s (Ctrl-C to stop)\n", h.Ready.Addr, h.Ready.Port, cfg.Scheme)
			stopped := false
			for {
				var ev control.Event
				var ok bool
				select {
				case ev, ok = <-h.Events():
				case <-cmd.Context().Done():
					if !stopped {
						stopped = true
						_ = h.Stop()
					}
					ev, ok = <-h.Events()
				}
				if !ok {
					return h.Wait()
				}
				if jsonOut {
					_ = control.WriteEvent(stdout, ev)
					continue
				}
				switch e := ev.(type) {
				case *control.Received:
					r := e.Record
					fmt.Fprintf(stdout, "received %s from %s (flow %d msg %d): %d packets in %s, verified; retransmissions useful %d spurious %d, duplicates %d, NACKed %d\n",
						units.FormatSize(uint64(r.Bytes)), e.From, r.Flow, r.Msg, r.Packets, dur(r.EndNs-r.FirstNs), r.RetxUseful, r.RetxSpurious, r.Duplicates, r.NACKsSent)
				case *control.Stats:
					if e.Final {
						fmt.Fprintf(stdout, "%d messages received; %d datagrams in, %d malformed, %d failed verification\n",
							e.Received, e.Endpoint.DatagramsIn, e.Endpoint.MalformedTotal(), e.Endpoint.CorruptPayload)
					}
				case *control.Error:
					fmt.Fprintf(stdout, "error: %s\n", e.Error)
				}
			}
		},
	}
	c.add(cmd)
	tf.add(cmd)
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print the protocol's events instead")
	return cmd
}

func sendCommand(stdout io.Writer) *cobra.Command {
	var c common
	var tf transportFlags
	var to, size string
	var count int
	var timeout time.Duration
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "send --to <IPv4> [--size 1MiB]",
		Short: "Send messages to a listening agent and print what happened",
		Long: `send sends --count messages of --size bytes to the agent at --to (which runs
hostagent listen, or serve, with the same port and scheme), all at once, each
on its own flow, and prints for each: flow completion time, throughput,
retransmissions (needed and spurious), NACKs, probes, RTOs, reroutes and the
losses detected. A message counts as sent when every packet was acknowledged,
and the receiver acknowledges a packet only after verifying its bytes.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := c.options()
			if err != nil {
				return err
			}
			cfg, err := tf.configure()
			if err != nil {
				return err
			}
			peer, err := netip.ParseAddr(to)
			if err != nil || !peer.Is4() {
				return fmt.Errorf("--to %q is not an IPv4 address", to)
			}
			bytes, err := units.ParseSize(size)
			if err != nil {
				return fmt.Errorf("--size: %w", err)
			}
			if count < 1 {
				return errors.New("--count must be at least 1")
			}
			h, err := start(cmd.Context(), opts, cfg)
			if err != nil {
				return err
			}
			defer h.Wait()
			for i := range count {
				if err := h.Do(&control.Send{Msg: int64(i), To: to, Bytes: bytes}); err != nil {
					return err
				}
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			sent := map[int64]*control.Sent{}
			var failure error
			for len(sent) < count && failure == nil {
				select {
				case <-ctx.Done():
					failure = fmt.Errorf("%d of %d messages acknowledged after %v", len(sent), count, timeout)
					continue
				case ev := <-h.Events():
					if jsonOut {
						_ = control.WriteEvent(stdout, ev)
					}
					switch e := ev.(type) {
					case *control.Sent:
						sent[e.Msg] = e
						if !jsonOut {
							printSent(stdout, h.Ready.Addr, cfg.Scheme, e)
						}
					case *control.Flow:
						if !jsonOut {
							printFlow(stdout, e)
						}
					case *control.Error:
						failure = errors.New(e.Error)
					}
				}
			}
			_ = h.Stop()
			for ev := range h.Events() {
				if jsonOut {
					_ = control.WriteEvent(stdout, ev)
					continue
				}
				if f, ok := ev.(*control.Flow); ok {
					printFlow(stdout, f)
				}
			}
			return errors.Join(failure, h.Wait())
		},
	}
	c.add(cmd)
	tf.add(cmd)
	cmd.Flags().StringVar(&to, "to", "", "the receiving agent's IPv4 address (required)")
	cmd.Flags().StringVar(&size, "size", "1MiB", "message size, e.g. 64KiB, 16MiB")
	cmd.Flags().IntVar(&count, "count", 1, "messages to send at once, each on its own flow")
	cmd.Flags().DurationVar(&timeout, "timeout", time.Minute, "give up after this long")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print the protocol's events instead")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}

// start starts an in-process agent and configures it.
func start(ctx context.Context, opts agent.Options, cfg *control.Configure) (*agent.Handle, error) {
	h, err := agent.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	if err := h.Do(cfg); err != nil {
		_ = h.Stop()
		return nil, errors.Join(err, h.Wait())
	}
	ev := <-h.Events()
	if e, ok := ev.(*control.Error); ok {
		_ = h.Stop()
		return nil, errors.Join(errors.New(e.Error), h.Wait())
	}
	return h, nil
}

func printSent(w io.Writer, from, schemeName string, e *control.Sent) {
	r := e.Record
	fmt.Fprintf(w, "message %d: %s -> %s, %s, flow %d: %s in %s (%s), %d packets\n",
		e.Msg, from, r.Peer, schemeName, r.Flow, units.FormatSize(uint64(r.Bytes)), dur(r.FCTNs), rate(r.Bytes, r.FCTNs), r.Packets)
	fmt.Fprintf(w, "  retransmissions %d: needed %d, spurious %d (as the sender saw; the receiver's count is authoritative)\n",
		r.Retransmissions, r.RetxNeeded, r.RetxSpurious)
	p := r.Probes
	fmt.Fprintf(w, "  NACKs %d (accepted %d); probes %d (tail %d, section-end %d, periodic %d, rtx %d); RTOs %d; reroutes %d\n",
		r.NACKs, r.NACKsAccepted, p.Total(), p.Tail, p.SectionEnd, p.Periodic, p.RTX, r.RTOs, r.Reroutes)
	if len(r.Losses) > 0 {
		byCause := map[transport.Cause]int{}
		delays := make([]int64, 0, len(r.Losses))
		for _, l := range r.Losses {
			byCause[l.Cause]++
			delays = append(delays, l.DelayNs)
		}
		var causes []string
		for c := transport.CauseNew; c <= transport.CauseScheme; c++ {
			if byCause[c] > 0 {
				causes = append(causes, fmt.Sprintf("%s %d", c, byCause[c]))
			}
		}
		fmt.Fprintf(w, "  losses %d (%s): detected after median %s, max %s\n",
			len(r.Losses), strings.Join(causes, ", "), dur(stats.Median(delays)), dur(slices.Max(delays)))
	}
}

func printFlow(w io.Writer, e *control.Flow) {
	r := e.Record
	state := ""
	if !e.Done {
		state = " (NOT acknowledged: abandoned)"
	}
	fmt.Fprintf(w, "  flow %d%s: srtt %s, min RTT %s, RTO %s", r.Flow, state, dur(r.SRTTNs), dur(r.MinRTTNs), dur(r.RTONs))
	if r.Pacing.TargetBps > 0 {
		fmt.Fprintf(w, ", pacing accuracy %.2f of %s", r.Pacing.Accuracy, rate(int(r.Pacing.TargetBps/8), 1e9))
	}
	fmt.Fprintf(w, ", %d subflows\n", len(r.Subflows))
}

func dur(ns int64) string {
	d := time.Duration(ns)
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(time.Microsecond).String()
	}
	return d.Round(100 * time.Nanosecond).String()
}

// rate formats bytes over ns as bits per second.
func rate(bytes int, ns int64) string {
	if ns <= 0 {
		return "-"
	}
	bps := float64(bytes) * 8e9 / float64(ns)
	switch {
	case bps >= 1e9:
		return fmt.Sprintf("%.2f Gbit/s", bps/1e9)
	case bps >= 1e6:
		return fmt.Sprintf("%.1f Mbit/s", bps/1e6)
	}
	return fmt.Sprintf("%.0f kbit/s", bps/1e3)
}
