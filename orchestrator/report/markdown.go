package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/orchestrator/results"
	"github.com/ftlab/ftlab/orchestrator/scenario"
	"github.com/ftlab/ftlab/switchd"
)

func dur(nsf float64) string {
	d := time.Duration(nsf)
	switch {
	case d == 0:
		return "-"
	case d < time.Millisecond:
		return fmt.Sprintf("%.0fµs", float64(d)/1e3)
	case d < time.Second:
		return fmt.Sprintf("%.2fms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.3fs", d.Seconds())
}

// writeReportFile writes report.md: the tables, then the plots' links.
func writeReportFile(dir string, meta *results.Meta, sum *Summary) error {
	f, err := os.Create(filepath.Join(dir, ReportFile))
	if err != nil {
		return err
	}
	defer f.Close()
	if err := writeReport(f, meta, sum); err != nil {
		return err
	}
	if err := writePlotLinks(f); err != nil {
		return err
	}
	return writePathsLink(f, pathCells(meta, sum))
}

// writeReport renders report.md's tables.
func writeReport(w io.Writer, meta *results.Meta, sum *Summary) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", sum.Scenario)
	if meta.Scenario != nil && meta.Scenario.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", meta.Scenario.Description)
	}
	status := "complete"
	if !sum.Complete {
		status = "**INCOMPLETE**"
		if meta.Interrupted != "" {
			status += ": " + meta.Interrupted
		}
	}
	fmt.Fprintf(&b, "Run %s, %s. ftlab %s (commit %s), kernel %s, %s.\n\n", meta.Started.Format(time.RFC3339), status,
		meta.Version, shortCommit(meta.Commit), meta.Kernel, meta.CPU)
	if line := rateLine(meta.Scenario); line != "" {
		b.WriteString(line + "\n\n")
	}
	for _, line := range regimeLines(meta.Scenario) {
		b.WriteString(line + "\n\n")
	}
	b.WriteString("## Messages\n\n")
	b.WriteString("| cell | runs complete | delivered | FCT p50 | FCT p99 | FCT max | CCT | CCT over bound | retx needed | retx spurious | RTOs | NACKs | probes |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range sum.Cells {
		inc := "-"
		if c.CCTIncrease != 0 {
			inc = fmt.Sprintf("%+.0f%%", 100*c.CCTIncrease)
		}
		fmt.Fprintf(&b, "| %s | %d/%d | %d/%d | %s | %s | %s | %s | %s | %d | %d | %d | %d | %d |\n",
			c.Cell, c.CompleteRuns, c.Runs, c.Delivered, c.Messages, dur(c.FCTP50), dur(c.FCTP99), dur(c.FCTMax),
			dur(c.CCTMean), inc, c.RetxNeeded, c.RetxSpurious, c.RTOs, c.NACKs, c.Probes)
	}
	b.WriteString("\n## Drops in the switches\n\n| cell | corruption | buffer | link down |\n|---|---|---|---|\n")
	for _, c := range sum.Cells {
		fmt.Fprintf(&b, "| %s | %d | %d | %d |\n", c.Cell, c.DropsCorrupt, c.DropsBuffer, c.DropsLinkDown)
	}
	b.WriteString("\n## Queues per direction\n\nMax backlog any port reached / mean of the ports' time-averaged backlog / worst port's packets over the direction's mean (1.00 = perfectly balanced).\n\n")
	var dirs []string
	for _, c := range sum.Cells {
		for _, q := range c.Queues {
			if !slices.Contains(dirs, q.Direction) {
				dirs = append(dirs, q.Direction)
			}
		}
	}
	slices.SortFunc(dirs, func(a, b string) int { return switchd.DirectionRank(a) - switchd.DirectionRank(b) })
	b.WriteString("| cell |")
	for _, d := range dirs {
		fmt.Fprintf(&b, " %s |", d)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(dirs)) + "\n")
	for _, c := range sum.Cells {
		fmt.Fprintf(&b, "| %s |", c.Cell)
		for _, d := range dirs {
			i := slices.IndexFunc(c.Queues, func(q DirectionQueue) bool { return q.Direction == d })
			if i < 0 {
				b.WriteString(" - |")
				continue
			}
			q := c.Queues[i]
			fmt.Fprintf(&b, " %s / %s / %.2f |", units.FormatSize(q.MaxBacklog), units.FormatSize(uint64(q.MeanBacklog)), q.MaxTxShare)
		}
		b.WriteString("\n")
	}
	writeFidelity(&b, sum.Fidelity)
	b.WriteString("\nRaw data: run.json (scenario as resolved, runs, faults applied), flows.csv (one row per message), links.csv (one row per switch port and run).\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// regimeLines say the cells' regimes (docs/regime.md): one line per
// distinct regime, naming the cells when they differ, with the packets
// per subflow of the RSS cells.
func regimeLines(sc *scenario.Scenario) []string {
	if sc == nil {
		return nil
	}
	type group struct {
		regime scenario.Regime
		cells  []string
		sigmas []int
	}
	var groups []*group
	byText := map[string]*group{}
	for _, c := range sc.Cells {
		text := c.Config.Regime.Describe(0)
		g := byText[text]
		if g == nil {
			g = &group{regime: c.Config.Regime}
			byText[text] = g
			groups = append(groups, g)
		}
		g.cells = append(g.cells, c.Name)
		if c.Config.RSS != nil && !slices.Contains(g.sigmas, c.Config.RSS.Sigma) {
			g.sigmas = append(g.sigmas, c.Config.RSS.Sigma)
		}
	}
	out := make([]string, len(groups))
	for i, g := range groups {
		who := ""
		if len(groups) > 1 {
			who = " (" + strings.Join(g.cells, ", ") + ")"
		}
		line := "Regime" + who + ": " + g.regime.Describe(0)
		for _, sigma := range g.sigmas {
			line += fmt.Sprintf("; with sigma %d, %.2g packets per subflow per RTT emulated (topology %.2g)",
				sigma, g.regime.EmulatedBDP/float64(sigma), g.regime.TopologyBDP/float64(sigma))
		}
		out[i] = line + "."
	}
	return out
}

// rateLine says at what rate the fabric ran when the scenario's rate
// field or --rate set it, and where that rate came from.
func rateLine(sc *scenario.Scenario) string {
	if sc == nil || len(sc.Cells) == 0 || sc.Cells[0].Config.Rate == nil {
		return ""
	}
	return "Link rates: the fastest link at " + sc.Cells[0].Config.Rate.Describe() + ", the others in proportion."
}
