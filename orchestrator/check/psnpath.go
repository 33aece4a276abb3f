package check

import (
	"fmt"
	"math"
	"strings"

	"github.com/ftlab/ftlab/orchestrator/report/figure"
	"github.com/ftlab/ftlab/orchestrator/results"
	"github.com/ftlab/ftlab/orchestrator/scenario"
)

const (
	psnMain     = "psnpath.yaml"
	psnAblation = "psnpath-ablation.yaml"
)

// Paper numbers (PSN-PATH 7.2, 7.3).
const (
	psnRedundant = 0.8  // % of retransmissions redundant on the FPGA
	psnLimit     = 1.0  // the claim's bound, %
	psnGoodput   = 5.11 // "goodput up to 5.11x" in large lossy simulations
)

var psnPathCheck = Check{
	Name:  "psn-path",
	Paper: "PSN-PATH 7.2-7.4",
	Title: "redundant retransmissions, goodput and the ablation under cross-path reordering and loss",
	Setup: "The paper: Xilinx U50 FPGA NICs and ns-3, DCQCN and HPCC, K logical paths by PSN modulo K (4 recommended), a receiver that checks the same-path predecessor, DT-Switch path management; against multipath RDMA baselines (MP-IRN and others) that treat cross-path reordering as loss. " +
		"ftlab: a leaf-spine of 16 hosts at 100 Gbit/s whose paths differ in delay (1 us links, spine s3's 5 us), two leaf-spine links per seed dropping 1 %, an all-to-all of 256 KiB under DCTCP; psnpath against gapnack (the same sender and path manager with a receiver that NACKs any gap in the global PSN order), rss+pfld for comparison, and psnpath without fast retransmission and without path switching.",
	Deviations: []string{
		"DCTCP stands in for DCQCN and HPCC, which ftlab does not have; like DCQCN it reacts to ECN marks.",
		"The fabric's delays, buffers and loss rates are ftlab's choice: the paper states neither its testbed's nor its simulations' in the sections reproduced.",
		"Redundant retransmissions are counted at the receivers (copies of PSNs already received, before and after delivery) over the senders' retransmissions: one consistent denominator.",
		"gapnack is ftlab's miniature of the paper's multipath IRN baseline, not MP-CX5, ORNIC or Falcon.",
	},
	Scenarios: []string{psnMain, psnAblation},
	Quick: map[string]Reduction{
		psnMain:     {Patch: []Patch{seeds(1), keep("transport", 0, 1), set("32KiB", "workload", "size"), drop("rss")}},
		psnAblation: {Skip: true},
	},
	Evaluate: evalPSNPath,
}

// redundantOf is the share (%) of a cell's retransmissions that reached a
// receiver that already had the packet, and the counts.
func redundantOf(c *CellData) (pct float64, spurious, retx int) {
	spurious, retx = c.Spurious(), c.Retx()
	if retx == 0 {
		return nan, spurious, 0
	}
	return 100 * float64(spurious) / float64(retx), spurious, retx
}

// goodputOf is a run's delivered payload over its CCT (bit/s in
// emulated time); NaN for a run that did not complete.
func goodputOf(r RunData) float64 {
	if r.Meta.CCT <= 0 {
		return nan
	}
	bytes := 0.0
	for _, f := range r.Rows.Flows {
		if f.Delivered {
			bytes += float64(f.Bytes)
		}
	}
	return 8 * bytes / r.Meta.CCT.Seconds()
}

func evalPSNPath(in Inputs) Evaluation {
	var ev Evaluation
	d := in[psnMain]
	byTransport := func(t string) *CellData {
		return d.find(func(cfg *scenario.Config) bool { return string(cfg.Transport) == t })
	}
	psn, gap, pfld := byTransport("psnpath"), byTransport("gapnack"), byTransport("rss+pfld")

	red := Claim{ID: "redundant", Text: "PSN-PATH's redundant retransmissions at or below 1 %", Paper: "0.8 % (7.2, FPGA)", PaperValue: psnRedundant, Unit: "%",
		Rule: fmt.Sprintf("spurious copies at the receivers / the senders' retransmissions <= %.0f %%, with losses recovered", psnLimit)}
	below := Claim{ID: "below-gapnack", Text: "PSN-PATH's redundant share below the global-gap NACK baseline's", Paper: "multipath IRN-style receivers resend on reordering (7.2; no number for MP-IRN)", PaperValue: nan, Unit: "%",
		Rule: "redundant share of psnpath < that of gapnack (shown: gapnack's)"}
	good := Claim{ID: "goodput", Text: "PSN-PATH's goodput above the baseline's", Paper: "up to 5.11x (7.3, large lossy simulations)", PaperValue: psnGoodput, Unit: "ratio",
		Rule: "goodput (delivered payload over CCT) of psnpath / gapnack > 1 in every seed (shown: the mean ratio)"}
	for _, c := range []*Claim{&red, &below, &good} {
		c.Measured = nan
	}
	if m := missingCells(map[string]*CellData{"psnpath": psn, "gapnack": gap}); m != "" {
		red.judge(false, "", "", m)
		below.judge(false, "", "", m)
		good.judge(false, "", "", m)
	} else {
		// The redundancy claim rests on psnpath's runs alone, the others
		// on psnpath and gapnack paired by seed.
		alone, pfid, pnote := pairOK(psn)
		cells, fid, note := pairOK(psn, gap)
		psn, gap = cells[0], cells[1]
		thin := joinNonEmpty(psn.Incomplete(), gap.Incomplete())
		pp, ps, pr := redundantOf(psn)
		gp, gs, gr := redundantOf(gap)
		below.Measured = gp
		detail := fmt.Sprintf("psnpath %d redundant of %d retransmissions (%s), gapnack %d of %d (%s)", ps, pr, num(pp, "%"), gs, gr, num(gp, "%"))
		if pfld != nil && len(pfld.Runs) > 0 {
			fp, fs, fr := redundantOf(pfld)
			detail += fmt.Sprintf(", rss+pfld %d of %d (%s)", fs, fr, num(fp, "%"))
		}
		below.Detail = withNote(detail, note)
		red.Detail = withNote(detail, note)
		ap, as, ar := redundantOf(alone[0])
		red.Measured = ap
		if pnote != note {
			red.Detail = withNote(fmt.Sprintf("psnpath %d redundant of %d retransmissions (%s)", as, ar, num(ap, "%")), pnote)
		}
		noLoss := ""
		if ar == 0 {
			noLoss = "psnpath retransmitted nothing: no loss to judge"
		}
		red.judge(ap <= psnLimit, pfid, alone[0].Incomplete(), noLoss)
		gapNone := ""
		switch {
		case pr == 0:
			gapNone = "psnpath retransmitted nothing: no loss to judge"
		case gr == 0:
			gapNone = "gapnack retransmitted nothing"
		}
		below.judge(pp < gp, fid, thin, gapNone)
		ratios, ok := pairedRatios(psn.PerSeed(goodputOf), gap.PerSeed(goodputOf))
		good.Measured = meanOf(ratios)
		good.Detail = withNote(fmt.Sprintf("goodput psnpath %s, gapnack %s; ratio by seed %s", Spread(psn.PerSeed(goodputOf), mbit), Spread(gap.PerSeed(goodputOf), mbit), listOf(ratios)), note)
		good.judge(ok && allAbove(ratios, 1), fid, thin, "")
	}
	ev.Claims = append(ev.Claims, red, below, good)

	a := in[psnAblation]
	arm := func(match func(*scenario.Config) bool) *CellData {
		return a.find(func(cfg *scenario.Config) bool { return cfg.PSNPath != nil && match(cfg) })
	}
	full := arm(func(c *scenario.Config) bool { return !c.PSNPath.NoFastRetx && !c.PSNPath.NoPathManager })
	for _, ab := range []struct {
		id, text string
		cell     *CellData
	}{
		{"ablation-fast-retx", "without fast retransmission PSN-PATH's goodput drops", arm(func(c *scenario.Config) bool { return c.PSNPath.NoFastRetx })},
		{"ablation-path-switching", "without path switching PSN-PATH's goodput drops", arm(func(c *scenario.Config) bool { return c.PSNPath.NoPathManager })},
	} {
		cl := Claim{ID: ab.id, Text: ab.text, Paper: "both mechanisms matter (7.4; no number here)", PaperValue: nan, Unit: "ratio",
			Rule: "goodput of full psnpath / the ablated arm > 1 in every seed (shown: the mean ratio)"}
		cl.Measured = nan
		if m := missingCells(map[string]*CellData{"psnpath": full, ab.id: ab.cell}); m != "" {
			cl.judge(false, "", "", m)
			ev.Claims = append(ev.Claims, cl)
			continue
		}
		cells, fid, note := pairOK(full, ab.cell)
		f, x := cells[0], cells[1]
		ratios, ok := pairedRatios(f.PerSeed(goodputOf), x.PerSeed(goodputOf))
		cl.Measured = meanOf(ratios)
		cl.Detail = withNote(fmt.Sprintf("goodput full %s, ablated %s; ratio by seed %s; RTOs full %d, ablated %d", Spread(f.PerSeed(goodputOf), mbit),
			Spread(x.PerSeed(goodputOf), mbit), listOf(ratios), f.RTOs(), x.RTOs()), note)
		cl.judge(ok && allAbove(ratios, 1), fid, joinNonEmpty(f.Incomplete(), x.Incomplete()), "")
		ev.Claims = append(ev.Claims, cl)
	}
	ev.Figures, ev.Tables = psnFigures(d, a)
	return ev
}

// psnFigures: redundant share and goodput per transport and arm.
func psnFigures(d, a *Data) ([]figure.Figure, string) {
	type row struct {
		name string
		c    *CellData
	}
	var rows []row
	for _, t := range []string{"psnpath", "gapnack", "rss+pfld"} {
		t := t
		rows = append(rows, row{t, d.find(func(cfg *scenario.Config) bool { return string(cfg.Transport) == t })})
	}
	for _, arm := range []struct {
		name  string
		match func(*scenario.Config) bool
	}{
		{"psnpath (ablation baseline)", func(c *scenario.Config) bool { return !c.PSNPath.NoFastRetx && !c.PSNPath.NoPathManager }},
		{"no fast retransmission", func(c *scenario.Config) bool { return c.PSNPath.NoFastRetx }},
		{"no path switching", func(c *scenario.Config) bool { return c.PSNPath.NoPathManager }},
	} {
		rows = append(rows, row{arm.name, a.find(func(cfg *scenario.Config) bool { return cfg.PSNPath != nil && arm.match(cfg) })})
	}
	red := figure.Panel{Title: "redundant retransmissions", Y: "% of retransmissions", Kind: figure.Bars, Categories: []string{""},
		Refs: []figure.Ref{{Label: "paper: PSN-PATH 0.8 %", Y: psnRedundant}}}
	good := figure.Panel{Title: "goodput (mean, range over seeds)", Y: "Mbit/s emulated", Kind: figure.Bars, Categories: []string{""}}
	var b strings.Builder
	b.WriteString("| scheme | flows | retransmissions | redundant | RTOs | NACKs | goodput per seed | CCT per seed | fidelity |\n|---|---|---|---|---|---|---|---|---|\n")
	any := false
	for _, r := range rows {
		if r.c == nil || len(r.c.Runs) == 0 {
			continue
		}
		any = true
		pct, s, x := redundantOf(r.c)
		g := r.c.PerSeed(goodputOf)
		mean, lo, hi := meanRange(g)
		red.Series = append(red.Series, figure.Series{Name: r.name, Values: []float64{zeroNaN(pct)}})
		good.Series = append(good.Series, figure.Series{Name: r.name, Values: []float64{mean / 1e6}, Low: []float64{lo / 1e6}, High: []float64{hi / 1e6}})
		m, del := r.c.Flows()
		fmt.Fprintf(&b, "| %s | %d/%d | %d | %d (%s) | %d | %d | %s | %s | %s |\n", r.name, del, m, x, s, num(pct, "%"), r.c.RTOs(),
			r.c.Sum(nacksOf), Spread(g, mbit), Spread(r.c.PerSeed(cctOf), ms), r.c.Fidelity())
	}
	if !any {
		return nil, ""
	}
	return []figure.Figure{{Name: "retransmissions", Title: "PSN-PATH 7.2-7.4: redundant retransmissions and goodput", Panels: []figure.Panel{red, good}}}, b.String()
}

func nacksOf(f results.FlowRow) int { return f.NACKs }

func cctOf(r RunData) float64 {
	if r.Meta.CCT <= 0 {
		return nan
	}
	return r.Meta.CCT.Seconds()
}

func zeroNaN(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}

func mbit(v float64) string { return fmt.Sprintf("%.2f Mbit/s", v/1e6) }

// pairedRatios divides a by b seed by seed; ok is false when a seed lacks
// either (a run that did not complete).
func pairedRatios(a, b []float64) (ratios []float64, ok bool) {
	ok = len(a) > 0 && len(a) == len(b)
	for i := range min(len(a), len(b)) {
		if math.IsNaN(a[i]) || math.IsNaN(b[i]) || b[i] == 0 {
			ok = false
			continue
		}
		ratios = append(ratios, a[i]/b[i])
	}
	return ratios, ok && len(ratios) > 0
}

func allAbove(vs []float64, x float64) bool {
	for _, v := range vs {
		if !(v > x) {
			return false
		}
	}
	return len(vs) > 0
}

func meanOf(vs []float64) float64 {
	m, _, _ := meanRange(vs)
	return m
}

func listOf(vs []float64) string {
	if len(vs) == 0 {
		return "-"
	}
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprintf("%.2f", v)
	}
	return strings.Join(parts, ", ")
}

func joinNonEmpty(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "; ")
}
