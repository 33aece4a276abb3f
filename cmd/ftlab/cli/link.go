package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/switchd"
)

// linkSetFlags are ftlab link set's flags.
type linkSetFlags struct {
	name, drop, rate, direction string
	delay                       time.Duration
	clear                       bool
}

func (f *linkSetFlags) add(cmd *cobra.Command) {
	addNameFlag(cmd, &f.name)
	fs := cmd.Flags()
	fs.StringVar(&f.drop, "drop", "", "drop packets at random with this probability (0.05 or 5%), counted as corrupt at the receiving switch; 0 ends it")
	fs.StringVar(&f.rate, "rate", "", "serialize at this rate (50Mbit) or share of the topology's (50%); restore: the topology's rate (shaped mode)")
	fs.DurationVar(&f.delay, "delay", 0, "add this one-way delay (needs the data plane's delay support)")
	fs.StringVar(&f.direction, "direction", lab.DirectionBoth, "which directions: up (towards the core), down or both")
	fs.BoolVar(&f.clear, "clear", false, "remove the directions' impairments first (drops off, the topology's rate)")
}

// change is the lab's link change for the flags; changed says which
// flags were given.
func (f *linkSetFlags) change(changed func(string) bool) (lab.LinkChange, error) {
	c := lab.LinkChange{Direction: f.direction, Clear: f.clear}
	if _, err := lab.SidesOf(f.direction); err != nil {
		return c, fmt.Errorf("--direction: %w", err)
	}
	if changed("drop") {
		p, err := lab.ParseDrop(f.drop)
		if err != nil {
			return c, fmt.Errorf("--drop: %w", err)
		}
		c.Drop = &p
	}
	if changed("rate") {
		r, err := lab.ParseRateChange(f.rate)
		if err != nil {
			return c, fmt.Errorf("--rate: %w", err)
		}
		c.Rate = &r
	}
	if changed("delay") {
		if f.delay < 0 {
			return c, fmt.Errorf("--delay: %v is negative", f.delay)
		}
		return c, fmt.Errorf("--delay: %w", lab.ErrNoDelay)
	}
	return c, nil
}

func (a *app) linkSetCommand() *cobra.Command {
	var f linkSetFlags
	cmd := &cobra.Command{
		Use:   "set <node> <node>",
		Short: "Impair a link at runtime: drops, rate, delay",
		Long: `set changes the link between two nodes of a lab that is up, as a scenario's faults
do: --drop makes the receiving switch drop packets at random (counted as corrupt
in ftlab stats), --rate makes a direction serialize slower or faster (shaped
mode). The changes are recorded in the lab: ftlab link show and ftlab stats list
them, --clear removes them, and ftlab down takes them with the lab.`,
		Example: `  ftlab link set e0-0 a0-0 --drop 5%
  ftlab link set a0-0 c0-0 --rate 50% --direction up
  ftlab link set a0-0 c0-0 --clear`,
		Args:              cobra.ExactArgs(2),
		Annotations:       rootOnly(),
		ValidArgsFunction: a.completeLinkEnds(&f.name),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.change(cmd.Flags().Changed)
			if err != nil {
				return err
			}
			ims, err := a.store.SetImpairment(cmd.Context(), f.name, args[0], args[1], c)
			if err != nil {
				return err
			}
			l, _ := a.linkName(f.name, args[0], args[1])
			if len(ims) == 0 {
				fmt.Fprintf(a.stdout, "link %s runs as the topology says\n", l)
				return nil
			}
			for _, im := range ims {
				fmt.Fprintf(a.stdout, "link %s %s (%s -> %s): %s\n", im.Link, im.Direction, im.From, im.To, im.Describe())
			}
			return nil
		},
	}
	f.add(cmd)
	return cmd
}

// linkName is the name of the link between two nodes of a lab.
func (a *app) linkName(name, x, y string) (string, error) {
	st, err := a.store.Get(name)
	if err != nil {
		return "", err
	}
	l, err := lab.LinkBetween(st.Topology, x, y)
	if err != nil {
		return "", err
	}
	return l.Name, nil
}

func (a *app) linkShowCommand() *cobra.Command {
	var name string
	var asJSON, impairedOnly bool
	cmd := &cobra.Command{
		Use:   "show",
		Short: "List every link with its state, rate, buffer, delay and impairments",
		Long: `show lists every link of a lab: its state now (up, failed on purpose, or down),
and per direction (up = towards the core) the rate it runs at, its buffer, ECN
threshold and delay, and what ftlab link set changed.`,
		Args:        cobra.NoArgs,
		Annotations: rootOnly(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			links, err := a.store.Links(cmd.Context(), name)
			if err != nil {
				return err
			}
			if impairedOnly {
				kept := links[:0]
				for _, l := range links {
					if l.Up.Impaired || l.Down.Impaired || l.State != "up" {
						kept = append(kept, l)
					}
				}
				links = kept
			}
			if asJSON {
				if links == nil {
					links = []lab.LinkView{}
				}
				return a.printJSON(links)
			}
			w := newTable(a.stdout)
			fmt.Fprintln(w, "LINK\tSTAGE\tSTATE\tDIR\tRATE\tBUFFER\tECN\tDELAY\tIMPAIRED")
			for _, l := range links {
				for i, d := range []lab.DirectionView{l.Up, l.Down} {
					link, stage, state := l.Name, string(l.Stage), l.State
					if i == 1 {
						link, stage, state = "", "", ""
					}
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", link, stage, state, []string{"up", "down"}[i],
						units.FormatRate(d.RateBps), units.FormatSize(d.BufferBytes), ecnText(d.ECNBytes),
						time.Duration(d.DelayNs), impairedText(d))
				}
			}
			return w.Flush()
		},
	}
	addNameFlag(cmd, &name)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	cmd.Flags().BoolVar(&impairedOnly, "impaired", false, "list only links that are impaired or not up")
	return cmd
}

func ecnText(b uint64) string {
	if b == 0 {
		return "off"
	}
	return units.FormatSize(b)
}

// impairedText says what link set changed on a direction.
func impairedText(d lab.DirectionView) string {
	if !d.Impaired {
		return "-"
	}
	var parts []string
	if d.Drop > 0 {
		parts = append(parts, lab.Impairment{Drop: d.Drop}.Describe())
	}
	if d.RateBps != d.TopologyRateBps {
		parts = append(parts, "rate (topology "+units.FormatRate(d.TopologyRateBps)+")")
	}
	return strings.Join(parts, ", ")
}

// printImpairments lists a lab's impairments under ftlab stats, with the
// packets each one's drops took.
func (a *app) printImpairments(ims []lab.Impairment, ports []switchd.PortStats) error {
	if len(ims) == 0 {
		return nil
	}
	fmt.Fprintln(a.stdout, "\nIMPAIRMENTS (ftlab link set)")
	w := newTable(a.stdout)
	fmt.Fprintln(w, "LINK\tDIR\tFROM\tTO\tCHANGE\tDROPPED")
	for _, im := range ims {
		dropped := "-"
		if im.Drop > 0 {
			dropped = fmt.Sprint(im.Dropped(ports))
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", im.Link, im.Direction, im.From, im.To, im.Describe(), dropped)
	}
	return w.Flush()
}

// impairmentsOf is a lab's impairments, an empty list for none (JSON).
func impairmentsOf(st *lab.State) []lab.Impairment {
	if st.Impairments == nil {
		return []lab.Impairment{}
	}
	return st.Impairments
}
