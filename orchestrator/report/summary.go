package report

import (
	"slices"

	"github.com/ftlab/ftlab/internal/stats"
	"github.com/ftlab/ftlab/orchestrator/results"
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

// summaryOf summarizes every cell of meta's scenario that has runs, in the
// scenario's order.
func summaryOf(meta *results.Meta, byCell map[string][]results.Rows) *Summary {
	sum := &Summary{Scenario: meta.Scenario.Name, Complete: meta.Complete, Fidelity: fidelityOf(meta)}
	for _, c := range meta.Scenario.Cells {
		if runs := byCell[c.Name]; len(runs) > 0 {
			sum.Cells = append(sum.Cells, summarize(c.Name, runs))
		}
	}
	return sum
}

// summarize aggregates the runs of one cell.
func summarize(cell string, runs []results.Rows) CellSummary {
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
		if r.Status == results.StatusComplete {
			s.CompleteRuns++
			cctSum += float64(r.CCT)
			boundSum += float64(r.Bound)
		}
		for _, m := range r.Flows {
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
		for _, p := range r.Links {
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
