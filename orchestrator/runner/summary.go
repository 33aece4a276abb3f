package runner

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/ftlab/ftlab/internal/stats"

	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/orchestrator/scenario"
	"github.com/ftlab/ftlab/switchd"
)

// CellSummary aggregates every run of one cell.
type CellSummary struct {
	Cell          string  `json:"cell"`
	Runs          int     `json:"runs"`
	CompleteRuns  int     `json:"complete_runs"`
	Messages      int     `json:"messages"`
	Delivered     int     `json:"delivered"`
	FCTP50        float64 `json:"fct_p50_ns"`
	FCTP99        float64 `json:"fct_p99_ns"`
	FCTMax        float64 `json:"fct_max_ns"`
	CCTMean       float64 `json:"cct_mean_ns"`  // over complete runs
	CCTIncrease   float64 `json:"cct_increase"` // mean CCT / lower bound - 1
	RetxNeeded    int     `json:"retx_needed"`
	RetxSpurious  int     `json:"retx_spurious"`
	RTOs          int     `json:"rtos"`
	NACKs         int     `json:"nacks"`
	Probes        int     `json:"probes"`
	DropsCorrupt  uint64  `json:"drops_corrupt"`
	DropsBuffer   uint64  `json:"drops_buffer"`
	DropsLinkDown uint64  `json:"drops_link_down"`
	// Queues per direction (E->A, A->C, ...): the largest backlog any port
	// reached and the mean over ports of their time-averaged backlog.
	Queues []DirectionQueue `json:"queues"`
}

// DirectionQueue is the queue summary of one direction of a cell.
type DirectionQueue struct {
	Direction   string  `json:"direction"`
	MaxBacklog  uint64  `json:"max_backlog_bytes"`
	MeanBacklog float64 `json:"mean_backlog_bytes"`
	MaxTxShare  float64 `json:"max_over_mean_tx"` // worst port's packets over the direction's mean (1 = balanced)
}

// Summary is summary.json.
type Summary struct {
	Scenario string        `json:"scenario"`
	Complete bool          `json:"complete"`
	Cells    []CellSummary `json:"cells"`
	// Fidelity: whether the numbers reflect the emulated network.
	Fidelity FidelitySummary `json:"fidelity"`
}

// runRows are one run's rows and outcome, from a finished run or from
// the result files.
type runRows struct {
	status string
	cct    time.Duration
	bound  time.Duration
	flows  []flowRow
	links  []linkRow
}

func rowsOf(r *RunResult) runRows {
	rr := runRows{status: r.Status, cct: r.CCT, flows: flowRowsOf(r), links: linkRowsOf(r)}
	if r.Bound != nil {
		rr.bound = r.Bound.CCT
	}
	return rr
}

// summarize aggregates the runs of one cell.
func summarize(cell string, runs []runRows) CellSummary {
	s := CellSummary{Cell: cell, Runs: len(runs)}
	var fcts []float64
	var cctSum, boundSum float64
	type dirAcc struct {
		max   uint64
		mean  float64
		ports int
		tx    []uint64
	}
	dirs := map[string]*dirAcc{}
	for _, r := range runs {
		if r.status == StatusComplete {
			s.CompleteRuns++
			cctSum += float64(r.cct)
			boundSum += float64(r.bound)
		}
		for _, m := range r.flows {
			s.Messages++
			if m.Delivered {
				s.Delivered++
				fcts = append(fcts, float64(m.FCT))
			}
			s.RetxNeeded += m.RetxNeeded
			s.RetxSpurious += m.RetxSpurious
			s.RTOs += m.RTOs
			s.NACKs += m.NACKs
			s.Probes += m.ProbesTail + m.ProbesSectionEnd + m.ProbesPeriodic + m.ProbesRTX
		}
		for _, p := range r.links {
			s.DropsCorrupt += p.DropCorrupt
			s.DropsBuffer += p.DropBuffer
			s.DropsLinkDown += p.DropLinkDown
			d, ok := dirs[p.Direction]
			if !ok {
				d = &dirAcc{}
				dirs[p.Direction] = d
			}
			d.max = max(d.max, p.MaxBacklog)
			d.mean += p.MeanBacklog
			d.ports++
			d.tx = append(d.tx, p.TxPackets)
		}
	}
	s.FCTP50, s.FCTP99 = stats.Median(fcts), stats.Quantile(fcts, 0.99)
	if len(fcts) > 0 {
		s.FCTMax = slices.Max(fcts)
	}
	if s.CompleteRuns > 0 {
		s.CCTMean = cctSum / float64(s.CompleteRuns)
		if boundSum > 0 {
			s.CCTIncrease = cctSum/boundSum - 1
		}
	}
	for name, d := range dirs {
		q := DirectionQueue{Direction: name, MaxBacklog: d.max, MeanBacklog: d.mean / float64(d.ports)}
		var sum, worst uint64
		for _, tx := range d.tx {
			sum += tx
			worst = max(worst, tx)
		}
		if sum > 0 {
			q.MaxTxShare = float64(worst) / (float64(sum) / float64(len(d.tx)))
		}
		s.Queues = append(s.Queues, q)
	}
	slices.SortFunc(s.Queues, func(a, b DirectionQueue) int {
		return switchd.DirectionRank(a.Direction) - switchd.DirectionRank(b.Direction)
	})
	return s
}

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

// writeReport renders report.md.
func writeReport(w io.Writer, meta *RunMeta, sum *Summary) error {
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

// rateLine says at what rate the fabric ran when the scenario's rate
// field or --rate set it, and where that rate came from.
func rateLine(sc *scenario.Scenario) string {
	if sc == nil || len(sc.Cells) == 0 || sc.Cells[0].Config.Rate == nil {
		return ""
	}
	return "Link rates: the fastest link at " + sc.Cells[0].Config.Rate.Describe() + ", the others in proportion."
}
