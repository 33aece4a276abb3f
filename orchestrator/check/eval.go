package check

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/orchestrator/report"
)

// Outcome is a claim evaluated on measurements.
type Outcome struct {
	Measurement string `json:"measurement"`
	Holds       bool   `json:"holds"`
}

// cellLabels splits a cell name ("policy=ofan,workload.size=4MiB") into
// its labels.
func cellLabels(name string) map[string]string {
	m := map[string]string{}
	for _, part := range strings.Split(name, ",") {
		if k, v, ok := strings.Cut(part, "="); ok {
			m[k] = v
		}
	}
	return m
}

// findCell returns the cell whose labels include every given label.
func findCell(sum *report.Summary, labels map[string]string) (*report.CellSummary, bool) {
	for i := range sum.Cells {
		l := cellLabels(sum.Cells[i].Cell)
		ok := true
		for k, v := range labels {
			if l[k] != v {
				ok = false
				break
			}
		}
		if ok {
			return &sum.Cells[i], true
		}
	}
	return nil, false
}

// FabricStages are the switch-to-switch directions of a fat tree, the
// stages Ofan's Fig. 3 and 4 show; DownStages the downlink ones.
var (
	FabricStages = []string{"E->A", "A->C", "C->A", "A->E"}
	DownStages   = []string{"C->A", "A->E"}
)

func queueOf(c *report.CellSummary, dir string) (report.DirectionQueue, bool) {
	i := slices.IndexFunc(c.Queues, func(q report.DirectionQueue) bool { return q.Direction == dir })
	if i < 0 {
		return report.DirectionQueue{}, false
	}
	return c.Queues[i], true
}

// worstQueue is the largest max backlog and the largest mean backlog over
// the given stages.
func worstQueue(c *report.CellSummary, stages []string) (maxB uint64, meanB float64) {
	for _, d := range stages {
		if q, ok := queueOf(c, d); ok {
			maxB = max(maxB, q.MaxBacklog)
			meanB = max(meanB, q.MeanBacklog)
		}
	}
	return maxB, meanB
}

// Ofan thresholds: a policy's queue "stays flat" when its worst max
// backlog over the fabric stages at the largest message grows by at most
// FlatFactor over the smallest (or stays within FlatSlack bytes, a few
// packets); it "grows" when it grows by at least GrowFactor. A downlink
// stage is balanced when its busiest port sends at most BalancedShare
// times the stage's mean.
const (
	FlatFactor    = 2.0
	FlatSlack     = 6 * 1500
	GrowFactor    = 2.0
	BalancedShare = 1.10
)

// EvalOfan evaluates check 1 on a summary whose cells are labelled
// policy=<p>,workload.size=<s>, comparing size small with size large.
func EvalOfan(sum *report.Summary, small, large string, flat, grow []string) (Outcome, error) {
	var b strings.Builder
	holds := true
	growth := func(p string) (float64, uint64, uint64, *report.CellSummary, error) {
		cs, ok1 := findCell(sum, map[string]string{"policy": p, "workload.size": small})
		cl, ok2 := findCell(sum, map[string]string{"policy": p, "workload.size": large})
		if !ok1 || !ok2 {
			return 0, 0, 0, nil, fmt.Errorf("no cells policy=%s at sizes %s and %s", p, small, large)
		}
		s, sMean := worstQueue(cs, FabricStages)
		l, lMean := worstQueue(cl, FabricStages)
		fmt.Fprintf(&b, "%s max %s->%s mean %s->%s; ", p, units.FormatSize(s), units.FormatSize(l),
			units.FormatSize(uint64(sMean)), units.FormatSize(uint64(lMean)))
		if s == 0 {
			return math.Inf(1), s, l, cl, nil
		}
		return float64(l) / float64(s), s, l, cl, nil
	}
	for _, p := range flat {
		g, s, l, cl, err := growth(p)
		if err != nil {
			return Outcome{}, err
		}
		if g > FlatFactor && l > s+FlatSlack {
			holds = false
			fmt.Fprintf(&b, "(%s grew x%.1f: not flat) ", p, g)
		}
		if p == "ofan" {
			for _, d := range DownStages {
				if q, ok := queueOf(cl, d); ok {
					fmt.Fprintf(&b, "ofan %s tx share %.2f; ", d, q.MaxTxShare)
					if q.MaxTxShare > BalancedShare {
						holds = false
					}
				}
			}
		}
	}
	for _, p := range grow {
		g, _, _, _, err := growth(p)
		if err != nil {
			return Outcome{}, err
		}
		if g < GrowFactor {
			holds = false
			fmt.Fprintf(&b, "(%s grew only x%.1f) ", p, g)
		}
	}
	return Outcome{Measurement: strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(b.String()), ";")), Holds: holds}, nil
}

// EvalOrderedChaos evaluates check 2 on one summary (a workload) with
// cells transport=ecmp, transport=rss and transport=rss+pfld.
func EvalOrderedChaos(sum *report.Summary) (Outcome, error) {
	get := func(t string) (*report.CellSummary, error) {
		c, ok := findCell(sum, map[string]string{"transport": t})
		if !ok {
			return nil, fmt.Errorf("%s: no cell transport=%s", sum.Scenario, t)
		}
		return c, nil
	}
	ecmp, err := get("ecmp")
	if err != nil {
		return Outcome{}, err
	}
	rss, err := get("rss")
	if err != nil {
		return Outcome{}, err
	}
	pfld, err := get("rss+pfld")
	if err != nil {
		return Outcome{}, err
	}
	var fails []string
	if !(pfld.FCTP99 < rss.FCTP99 && pfld.FCTP99 < ecmp.FCTP99) {
		fails = append(fails, "p99 not lowest")
	}
	if float64(pfld.RTOs) > 0.1*float64(ecmp.RTOs) {
		fails = append(fails, "RTOs not >=90% fewer")
	}
	drops := pfld.DropsCorrupt + pfld.DropsBuffer + pfld.DropsLinkDown
	if pfld.RetxSpurious > 0 || uint64(pfld.RetxNeeded) > drops {
		fails = append(fails, "retx != drops")
	}
	for _, c := range []*report.CellSummary{ecmp, rss, pfld} {
		if c.Delivered < c.Messages {
			fails = append(fails, fmt.Sprintf("%s delivered %d/%d", c.Cell, c.Delivered, c.Messages))
		}
	}
	m := fmt.Sprintf("p99 FCT ecmp %s, rss %s, rss+pfld %s; RTOs ecmp %d, rss %d, rss+pfld %d; rss+pfld retx %d needed + %d spurious vs %d drops",
		ms(ecmp.FCTP99), ms(rss.FCTP99), ms(pfld.FCTP99), ecmp.RTOs, rss.RTOs, pfld.RTOs, pfld.RetxNeeded, pfld.RetxSpurious, drops)
	if len(fails) > 0 {
		m += " [" + strings.Join(fails, "; ") + "]"
	}
	return Outcome{Measurement: m, Holds: len(fails) == 0}, nil
}

func ms(ns float64) string { return fmt.Sprintf("%.1fms", ns/1e6) }

// RedundantLimit is PSN-PATH's claim: at most 1% of retransmissions are
// redundant (the paper reports 0.8%).
const RedundantLimit = 0.01

// redundant is the share of retransmissions that carried no new data.
func redundant(c *report.CellSummary) float64 {
	if n := c.RetxNeeded + c.RetxSpurious; n > 0 {
		return float64(c.RetxSpurious) / float64(n)
	}
	return 0
}

// EvalPSNPath evaluates check 3: the transport=psnpath cell's redundant
// retransmission ratio must be at most RedundantLimit and below the
// transport=gapnack cell's (the global-gap NACK baseline); other cells
// are reported for comparison.
func EvalPSNPath(sum *report.Summary) (Outcome, error) {
	p, ok := findCell(sum, map[string]string{"transport": "psnpath"})
	if !ok {
		return Outcome{}, fmt.Errorf("%s: no cell transport=psnpath", sum.Scenario)
	}
	g, ok := findCell(sum, map[string]string{"transport": "gapnack"})
	if !ok {
		return Outcome{}, fmt.Errorf("%s: no cell transport=gapnack (the global-gap NACK baseline)", sum.Scenario)
	}
	var parts []string
	for i := range sum.Cells {
		c := &sum.Cells[i]
		parts = append(parts, fmt.Sprintf("%s %.2f%% redundant (%d spurious of %d retx, %d drops)",
			cellLabels(c.Cell)["transport"], 100*redundant(c), c.RetxSpurious, c.RetxNeeded+c.RetxSpurious,
			c.DropsCorrupt+c.DropsBuffer+c.DropsLinkDown))
	}
	below := redundant(p) < redundant(g)
	holds := redundant(p) <= RedundantLimit && below && p.RetxNeeded > 0 && p.Delivered == p.Messages
	m := strings.Join(parts, "; ")
	if p.RetxNeeded == 0 {
		m += " [no losses recovered: nothing to judge]"
	}
	if !below {
		m += " [psnpath not below gapnack]"
	}
	if p.Delivered < p.Messages {
		m += fmt.Sprintf(" [psnpath delivered %d/%d]", p.Delivered, p.Messages)
	}
	if g.Delivered < g.Messages {
		m += fmt.Sprintf(" [gapnack delivered %d/%d]", g.Delivered, g.Messages)
	}
	return Outcome{Measurement: m, Holds: holds}, nil
}

// SubflowSample is one EV of one subflow: when it was taken and whether it
// sends over the degraded path.
type SubflowSample struct {
	Subflow  string // run, flow and subflow
	AtNs     int64
	Degraded bool
}

// ShareTolerance is how close (absolute) the degraded path's final share
// of subflows must come to its capacity share.
const ShareTolerance = 0.10

// EvalAsymmetry evaluates check 4: the share of subflows on the degraded
// path at the start (first EV) and at the end (last EV), against its
// capacity share.
func EvalAsymmetry(samples []SubflowSample, capShare float64) (Outcome, error) {
	type fl struct {
		first, last SubflowSample
	}
	by := map[string]*fl{}
	for _, s := range samples {
		f, ok := by[s.Subflow]
		if !ok {
			by[s.Subflow] = &fl{s, s}
			continue
		}
		if s.AtNs < f.first.AtNs {
			f.first = s
		}
		if s.AtNs >= f.last.AtNs {
			f.last = s
		}
	}
	if len(by) == 0 {
		return Outcome{}, fmt.Errorf("no subflows crossed the degraded switch's pod")
	}
	var first, last int
	for _, f := range by {
		if f.first.Degraded {
			first++
		}
		if f.last.Degraded {
			last++
		}
	}
	n := float64(len(by))
	fs, ls := float64(first)/n, float64(last)/n
	holds := math.Abs(ls-capShare) <= ShareTolerance
	return Outcome{
		Measurement: fmt.Sprintf("degraded path's share of %d subflows: %.0f%% at start, %.0f%% at end; capacity share %.0f%% (tolerance +-%.0f points)",
			len(by), 100*fs, 100*ls, 100*capShare, 100*ShareTolerance),
		Holds: holds,
	}, nil
}
