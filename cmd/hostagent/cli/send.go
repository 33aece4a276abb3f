package cli

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/hostagent/agent"
	"github.com/ftlab/ftlab/hostagent/control"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/internal/stats"
	"github.com/ftlab/ftlab/internal/units"
)

// sendFlags are what send sends, and how long it waits.
type sendFlags struct {
	to, size string
	count    int
	timeout  time.Duration
	jsonOut  bool
}

func (f *sendFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.to, "to", "", "the receiving agent's IPv4 address (required)")
	cmd.Flags().StringVar(&f.size, "size", "1MiB", "message size, e.g. 64KiB, 16MiB")
	cmd.Flags().IntVar(&f.count, "count", 1, "messages to send at once, each on its own flow")
	cmd.Flags().DurationVar(&f.timeout, "timeout", time.Minute, "give up after this long")
	cmd.Flags().BoolVar(&f.jsonOut, "json", false, "print the protocol's events instead")
	_ = cmd.MarkFlagRequired("to")
}

// messageSize checks the flags and returns the messages' size.
func (f *sendFlags) messageSize() (uint64, error) {
	peer, err := netip.ParseAddr(f.to)
	if err != nil || !peer.Is4() {
		return 0, fmt.Errorf("--to %q is not an IPv4 address", f.to)
	}
	size, err := units.ParseSize(f.size)
	if err != nil {
		return 0, fmt.Errorf("--size: %w", err)
	}
	if f.count < 1 {
		return 0, errors.New("--count must be at least 1")
	}
	return size, nil
}

func sendCommand(stdout io.Writer) *cobra.Command {
	var c common
	var tf transportFlags
	var f sendFlags
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
			opts, cfg, err := agentOptions(&c, &tf)
			if err != nil {
				return err
			}
			size, err := f.messageSize()
			if err != nil {
				return err
			}
			h, err := agent.StartConfigured(cmd.Context(), opts, cfg)
			if err != nil {
				return err
			}
			print := func(ev control.Event) { printEvent(stdout, ev) }
			if !f.jsonOut {
				print = func(ev control.Event) { printSending(stdout, h.Ready.Addr, cfg.Scheme, ev) }
			}
			return h.SendAll(cmd.Context(), f.to, size, f.count, f.timeout, print)
		},
	}
	c.add(cmd)
	tf.add(cmd)
	f.add(cmd)
	return cmd
}

// printSending tells a sender's acknowledged messages and its flows.
func printSending(w io.Writer, from, schemeName string, ev control.Event) {
	switch e := ev.(type) {
	case *control.Sent:
		printSent(w, from, schemeName, e)
	case *control.Flow:
		printFlow(w, e)
	}
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
		for _, c := range transport.Causes {
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
	if c := r.CC; c != nil {
		fmt.Fprintf(w, ", %s window %s (%s..%s)", c.Name, units.FormatSize(uint64(c.WindowBytes)),
			units.FormatSize(uint64(c.MinWindowBytes)), units.FormatSize(uint64(c.MaxWindowBytes)))
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
