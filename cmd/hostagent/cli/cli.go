// Package cli is the hostagent command line: serve for the orchestrator,
// listen and send for people, each a thin layer over hostagent/agent.
package cli

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/hostagent/agent"
	"github.com/ftlab/ftlab/hostagent/cc"
	"github.com/ftlab/ftlab/hostagent/control"
	"github.com/ftlab/ftlab/hostagent/scheme"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/internal/params"
	"github.com/ftlab/ftlab/internal/units"
)

// Run executes the hostagent command line and returns the process exit
// code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
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

// options are the agent's options for the flags.
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

// agentOptions are the options and configuration of an agent that
// listens or sends, for the flags.
func agentOptions(c *common, tf *transportFlags) (agent.Options, *control.Configure, error) {
	opts, err := c.options()
	if err != nil {
		return opts, nil, err
	}
	cfg, err := tf.configure()
	return opts, cfg, err
}

// transportFlags configure the scheme and transport of listen and send.
type transportFlags struct {
	scheme  string
	cc      string
	params  []string
	pacing  string
	window  string
	minRTO  time.Duration
	rto     string
	allow   time.Duration
	baseRTT time.Duration
	maxRTT  time.Duration
	mtu     int
	spin    time.Duration
}

func (f *transportFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.scheme, "scheme", "rss+pfld", "transport scheme: "+strings.Join(scheme.Names(), ", "))
	cmd.Flags().StringVar(&f.cc, "cc", cc.None, "congestion control: "+strings.Join(cc.Names(), ", "))
	cmd.Flags().StringArrayVar(&f.params, "param", nil, "scheme or cc parameter as [block.]key=value (repeatable), e.g. sigma=8, rss.tau=2rtt, swift.ai=2; see docs/scenarios.md")
	cmd.Flags().StringVar(&f.pacing, "pacing", "0", "pacing rate per flow, e.g. 100Mbit (0: unpaced, the window limits)")
	cmd.Flags().StringVar(&f.window, "window", "256KiB", "payload in flight per flow")
	cmd.Flags().DurationVar(&f.baseRTT, "base-rtt", transport.NominalBaseRTT, "the fabric's idle round trip: the unit of parameters written as 2rtt, and of the RTT-relative defaults")
	cmd.Flags().DurationVar(&f.maxRTT, "max-rtt", 0, "the fabric's maximum unloaded round trip, from which --rto paper sets the timeout (default: --base-rtt)")
	cmd.Flags().StringVar(&f.rto, "rto", "", "how the retransmission timeout is set: rfc6298 (estimated from RTT samples; the default) or paper (--max-rtt plus --rto-allowance)")
	cmd.Flags().DurationVar(&f.allow, "rto-allowance", 0, "--rto paper: the queueing allowance added to --max-rtt (default 4 base RTTs)")
	cmd.Flags().DurationVar(&f.minRTO, "min-rto", 0, "--rto rfc6298: smallest retransmission timeout (default 4 base RTTs)")
	cmd.Flags().IntVar(&f.mtu, "mtu", 1500, "IP MTU of the host's link")
	cmd.Flags().DurationVar(&f.spin, "spin", 0, "spin instead of sleeping through waits up to this long (precise pacing, costs a CPU)")
}

func (f *transportFlags) configure() (*control.Configure, error) {
	p, cp, err := f.blocks()
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
	c := &control.Configure{Scheme: f.scheme, Params: p, CC: f.cc, CCParams: cp, Transport: control.Transport{
		HostParams: transport.HostParams{Pacing: pacing, Window: window, RTO: f.rto, RTOAllowance: f.allow, MinRTO: f.minRTO},
		BaseRTTNs:  int64(f.baseRTT), MaxRTTNs: int64(f.maxRTT), MTU: f.mtu, SpinNs: int64(f.spin),
	}}
	return c, c.Transport.Validate()
}

// blocks are the scheme's and the congestion control's parameter blocks:
// their defaults at the base RTT with the --param settings applied, each
// to the one of the two whose blocks have the key.
func (f *transportFlags) blocks() (*scheme.Params, *cc.Params, error) {
	env := params.Env{RTT: f.baseRTT}
	p, err := scheme.Defaults(f.scheme, env)
	if err != nil {
		return nil, nil, fmt.Errorf("--scheme: %w", err)
	}
	cp, err := cc.Defaults(f.cc, env)
	if err != nil {
		return nil, nil, fmt.Errorf("--cc: %w", err)
	}
	algo, _ := cc.Lookup(f.cc)
	tr, _ := scheme.Lookup(f.scheme)
	for _, kv := range f.params {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, nil, fmt.Errorf("--param %q: want key=value", kv)
		}
		toCC := takes(cc.Blocks, algo.Blocks, k)
		if toCC && takes(scheme.Blocks, tr.Blocks, k) {
			return nil, nil, fmt.Errorf("--param %q: both %s and %s take %q; write it as block.%s", kv, f.scheme, f.cc, k, k)
		}
		if toCC {
			err = cc.SetParam(cp, f.cc, k, v, env)
		} else {
			err = scheme.SetParam(p, f.scheme, k, v, env)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("--param %q: %w", kv, err)
		}
	}
	return p, cp, nil
}

// takes reports whether key, "block.field" or a bare field, names a
// parameter of one of the blocks take, or a block of blocks.
func takes(blocks []params.Block, take []string, key string) bool {
	if block, _, qualified := strings.Cut(key, "."); qualified {
		_, ok := params.Find(blocks, block)
		return ok
	}
	for _, k := range take {
		if b, ok := params.Find(blocks, k); ok && slices.Contains(b.Names(), key) {
			return true
		}
	}
	return false
}
