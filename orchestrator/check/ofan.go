package check

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/orchestrator/report/figure"
	"github.com/ftlab/ftlab/orchestrator/scenario"
)

const (
	ofanQueues = "ofan-queues.yaml"
	ofanCC     = "ofan-cc.yaml"
	ofanREPS   = "ofan-cc-reps.yaml"
)

// FabricStages are the switch-to-switch directions of a fat tree, the
// stages of Ofan's Fig. 3 and 4; DownStages the downlink ones.
var (
	FabricStages = []string{"E->A", "A->C", "C->A", "A->E"}
	DownStages   = []string{"C->A", "A->E"}
)

// Ofan thresholds. A policy's queue "stays flat" when its worst max
// backlog over the fabric stages grows by at most FlatFactor from the
// smallest message to the largest (or by less than FlatPackets full
// frames of the scenario's MTU); it "grows" by at least GrowFactor. A
// downlink stage is balanced when its busiest port sends at most
// BalancedShare times the stage's mean. With congestion control, Ofan's
// CCT increase is "small" up to SmallIncrease and REPS's and AR's
// "severalfold" from SeveralFold times Ofan's CCT.
const (
	FlatFactor    = 2.0
	FlatPackets   = 6
	GrowFactor    = 2.0
	BalancedShare = 1.10
	SmallIncrease = 0.10
	SeveralFold   = 2.0
)

var ofanFlat = []string{"ofan", "pofan"}
var ofanGrow = []string{"ecmp", "random", "ar"}

var ofanCheck = Check{
	Name:  "ofan",
	Paper: "Ofan Fig. 3, Fig. 4 and 6.5",
	Title: "queues flat as messages grow; CCT under congestion control",
	Setup: "The paper: htsim, a 3-tier fat tree (k = 12 by default), 800 Gbit/s links of 0.5 us (a propagation RTT of about 150 packets of 4 KiB), 800 KB buffers, ECN at 80 KB; permutations with every host at line rate and no congestion control (Fig. 3, 4), and 4 MB permutations (6.8 RTTs) with DCTCP, NSCC and MSwift (6.5). " +
		"ftlab: a k = 4 fat tree with the same links, written in the paper's units and time-dilated, inter-pod permutations of 64 KiB, 1 MiB and 4 MiB with hosts at line rate (deep buffers), and 4 MB permutations with DCTCP, NSCC and Swift under Ofan, pOfan, AR and REPS.",
	Deviations: []string{
		"k = 4 (16 hosts) instead of k = 12 (432): fewer pointers per switch and fewer flows per port, so both the imbalance of random spraying and the residual of Ofan's rotation are smaller in absolute terms.",
		"Fig. 3 and 4 run with 8 MiB buffers instead of 800 KB: without congestion control a full buffer drops and the queue cannot grow past it.",
		"pOfan with 2 ports per pipe (a k = 4 switch has 4 ports); AR compares queues in steps of 80 KB (10 % of the paper's buffer).",
		"Swift instead of MSwift (no median feedback); DCTCP starts at one BDP (150 packets) rather than 10 packets. ftlab's schemes declare a loss only on evidence or by the timer: unlike htsim's DCTCP, which the paper says reacts to reordering through its duplicate-ACK threshold, none reacts to reordering as loss.",
		"4 seeds of 16 flows for 6.5 (the claims are about each run's CCT), 1 seed for Fig. 3 and 4 as the paper plots one run per size.",
	},
	Scenarios: []string{ofanQueues, ofanCC, ofanREPS},
	Quick: map[string]Reduction{
		ofanQueues: {Patch: []Patch{seeds(1), keep("policy", 0, 4), keep("workload.size", 0, 1), drop("pofan"), drop("ar")}},
		ofanCC:     {Patch: []Patch{seeds(1), keep("policy", 0, 2), keep("cc", 0), set("1MB", "workload", "size"), drop("pofan")}},
		ofanREPS:   {Skip: true},
	},
	Evaluate: evalOfan,
}

// stageQueues is one cell's queues per stage: the largest backlog any
// port reached in any of its runs (seeds), and the busiest port's packets
// over the stage's mean, the runs' packets summed.
type stageQueues struct {
	max   map[string]uint64
	share map[string]float64
}

func queuesOf(c *CellData) stageQueues {
	q := stageQueues{max: map[string]uint64{}, share: map[string]float64{}}
	tx := map[string][]uint64{}
	for _, r := range c.Runs {
		for _, l := range r.Rows.Links {
			q.max[l.Direction] = max(q.max[l.Direction], l.MaxBacklog)
			tx[l.Direction] = append(tx[l.Direction], l.TxPackets)
		}
	}
	for d, v := range tx {
		var sum uint64
		for _, x := range v {
			sum += x
		}
		if sum > 0 {
			q.share[d] = float64(slices.Max(v)) / (float64(sum) / float64(len(v)))
		}
	}
	return q
}

// worstStage is the largest backlog over the fabric stages.
func (q stageQueues) worstStage() uint64 {
	var m uint64
	for _, s := range FabricStages {
		m = max(m, q.max[s])
	}
	return m
}

func evalOfan(in Inputs) Evaluation {
	var ev Evaluation
	var tables strings.Builder
	qd := in[ofanQueues]
	ev.Claims = append(ev.Claims, ofanQueueClaims(qd, &tables)...)
	ev.Claims = append(ev.Claims, ofanCCClaims(in[ofanCC], in[ofanREPS], &tables)...)
	ev.Figures = ofanFigures(in)
	ev.Tables = tables.String()
	return ev
}

// sizesOf lists the message sizes a scenario compares, smallest first.
func sizesOf(d *Data) []uint64 {
	var out []uint64
	if d == nil || d.Scenario == nil {
		return nil
	}
	for _, c := range d.Scenario.Cells {
		if s := c.Config.Workload.Size.Max; !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

func (d *Data) policySize(policy string, size uint64) *CellData {
	return d.find(func(cfg *scenario.Config) bool {
		return string(cfg.Policy.Edge()) == policy && cfg.Workload.Size.Max == size
	})
}

func ofanQueueClaims(d *Data, tables *strings.Builder) []Claim {
	flat := Claim{ID: "queues-flat", Text: "Ofan's and pOfan's largest queue stays flat as the message grows", Paper: "O(1): flat (Fig. 4)", PaperValue: 1, Unit: "x"}
	grow := Claim{ID: "queues-grow", Text: "ECMP's, random spraying's and AR's largest queue grows with the message", Unit: "x"}
	bal := Claim{ID: "downlinks-balanced", Text: "Ofan balances the downlink stages (C->A, A->E)", Paper: "near-ideal at every stage (Fig. 3)", PaperValue: 1, Unit: "x",
		Rule: fmt.Sprintf("at the largest message, the busiest port of each downlink stage sends at most %.2f x the stage's mean", BalancedShare)}
	for _, c := range []*Claim{&flat, &grow, &bal} {
		c.Measured = nan
	}
	sizes := sizesOf(d)
	if len(sizes) < 2 {
		for _, c := range []*Claim{&flat, &grow, &bal} {
			c.Rule = orDash(c.Rule)
			c.judge(false, "", "", "not run: "+ofanQueues)
		}
		grow.Paper, grow.PaperValue = "Omega(sqrt(m)) (Fig. 4)", nan
		return []Claim{flat, grow, bal}
	}
	small, large := sizes[0], sizes[len(sizes)-1]
	mtu := d.Scenario.Cells[0].Config.Fabric().MTU
	slack := uint64(FlatPackets * (mtu + 14))
	flat.Rule = fmt.Sprintf("worst max backlog over E->A..A->E grows at most x%.0f from %s to %s messages, or by less than %d full frames (%s)",
		FlatFactor, units.FormatSize(small), units.FormatSize(large), FlatPackets, units.FormatSize(slack))
	sq := math.Sqrt(float64(large) / float64(small))
	grow.Paper, grow.PaperValue = fmt.Sprintf("Omega(sqrt(m)): x%.0f from %s to %s (Fig. 4)", sq, units.FormatSize(small), units.FormatSize(large)), sq
	grow.Rule = fmt.Sprintf("each grows at least x%.0f (the smallest growth is shown)", GrowFactor)
	// The claims compare every policy at both sizes: a seed in which one
	// of those runs was not OK is left out of all of them (pairOK).
	type policySize struct {
		policy string
		size   uint64
	}
	policies := append(slices.Clone(ofanGrow), ofanFlat...)
	var keys []policySize
	var cells []*CellData
	for _, p := range policies {
		for _, s := range []uint64{small, large} {
			keys = append(keys, policySize{p, s})
			cells = append(cells, d.policySize(p, s))
		}
	}
	paired, fid, note := pairOK(cells...)
	compared := map[policySize]*CellData{}
	for i, k := range keys {
		compared[k] = paired[i]
	}
	var missing, details []string
	growth := map[string]float64{}
	fmt.Fprintf(tables, "### Queues per stage (%s)\n\nLargest backlog any port reached, per stage, and the busiest port's packets over the stage's mean.\n\n| policy | size | E->A | A->C | C->A | A->E | worst | busiest/mean C->A, A->E | fidelity |\n|---|---|---|---|---|---|---|---|---|\n", ofanQueues)
	for _, p := range policies {
		var qs []stageQueues
		for _, s := range []uint64{small, large} {
			c := compared[policySize{p, s}]
			if c == nil || len(c.Runs) == 0 {
				missing = append(missing, fmt.Sprintf("%s at %s", p, units.FormatSize(s)))
				continue
			}
			qs = append(qs, queuesOf(c))
		}
		for _, s := range sizes {
			if c := d.policySize(p, s); c != nil && len(c.Runs) > 0 {
				q := queuesOf(c)
				fmt.Fprintf(tables, "| %s | %s | %s | %s | %s | %s | %s | %.2f, %.2f | %s |\n", p, units.FormatSize(s), units.FormatSize(q.max["E->A"]),
					units.FormatSize(q.max["A->C"]), units.FormatSize(q.max["C->A"]), units.FormatSize(q.max["A->E"]), units.FormatSize(q.worstStage()),
					q.share["C->A"], q.share["A->E"], c.Fidelity())
			}
		}
		if len(qs) != 2 {
			continue
		}
		a, b := qs[0].worstStage(), qs[1].worstStage()
		g := math.Inf(1)
		if a > 0 {
			g = float64(b) / float64(a)
		}
		growth[p] = g
		details = append(details, fmt.Sprintf("%s %s -> %s (x%.1f)", p, units.FormatSize(a), units.FormatSize(b), g))
		if p == "ofan" {
			worstShare := 0.0
			for _, s := range DownStages {
				worstShare = max(worstShare, qs[1].share[s])
			}
			bal.Measured = worstShare
			bal.Detail = withNote(fmt.Sprintf("busiest port over the mean at %s: C->A %.2f, A->E %.2f (E->A %.2f, A->C %.2f)", units.FormatSize(large),
				qs[1].share["C->A"], qs[1].share["A->E"], qs[1].share["E->A"], qs[1].share["A->C"]), note)
			bal.judge(worstShare <= BalancedShare, fid, "", "")
		}
	}
	tables.WriteString("\n")
	m := strings.Join(missing, ", ")
	if m != "" {
		m = "not run: " + m
	}
	flatOK, growOK := true, true
	flat.Measured, grow.Measured = 0, math.Inf(1)
	for _, p := range ofanFlat {
		g, ok := growth[p]
		if !ok {
			continue
		}
		flat.Measured = max(flat.Measured, g)
		q := compared[policySize{p, large}]
		qs := compared[policySize{p, small}]
		if g > FlatFactor && queuesOf(q).worstStage() > queuesOf(qs).worstStage()+slack {
			flatOK = false
		}
	}
	for _, p := range ofanGrow {
		if g, ok := growth[p]; ok {
			grow.Measured = min(grow.Measured, g)
			growOK = growOK && g >= GrowFactor
		}
	}
	flat.Detail = withNote(strings.Join(details, "; "), note)
	grow.Detail = flat.Detail
	flat.judge(flatOK, fid, "", m)
	grow.judge(growOK, fid, "", m)
	if bal.Verdict == "" {
		bal.judge(false, fid, "", orDash(m))
	}
	return []Claim{flat, grow, bal}
}

// ofanScheme is one of 6.5's load balancers: a cell of ofan-cc.yaml (by
// policy) or of ofan-cc-reps.yaml.
func ofanScheme(cc, reps *Data, scheme, algo string) *CellData {
	if scheme == "reps" {
		return reps.find(func(cfg *scenario.Config) bool { return string(cfg.CC) == algo })
	}
	return cc.find(func(cfg *scenario.Config) bool { return string(cfg.CC) == algo && string(cfg.Policy.Edge()) == scheme })
}

// cctIncrease is a run's CCT over its lower bound, less 1 (NaN for a run
// that did not complete or has no bound).
func cctIncrease(r RunData) float64 {
	if r.Meta.CCT <= 0 || r.Meta.Bound == nil || r.Meta.Bound.CCT <= 0 {
		return nan
	}
	return r.Meta.CCT.Seconds()/r.Meta.Bound.CCT.Seconds() - 1
}

func ofanCCClaims(cc, reps *Data, tables *strings.Builder) []Claim {
	small := Claim{ID: "dctcp-ofan-small", Text: "DCTCP: Ofan's and pOfan's CCT increase stays small", Paper: "under 1 %", PaperValue: 1, Unit: "%",
		Rule: fmt.Sprintf("mean CCT over its lower bound, less 1, at most %.0f %% for both (the larger is shown)", 100*SmallIncrease)}
	several := Claim{ID: "dctcp-spray-severalfold", Text: "DCTCP: REPS's and AR's CCT grow severalfold", Paper: "3-4x (the lower end shown)", PaperValue: 3, Unit: "x",
		Rule: fmt.Sprintf("mean CCT of REPS and of AR at least %.0fx Ofan's (the smaller is shown)", SeveralFold)}
	claims := []*Claim{&small, &several}
	favour := map[string]*Claim{}
	for _, f := range []struct {
		algo  string
		paper float64
	}{{"nscc", 1.08}, {"swift", 1.14}} {
		c := &Claim{ID: f.algo + "-ofan-favoured", Text: strings.ToUpper(f.algo) + ": the gap is smaller but in Ofan's favour",
			Paper: fmt.Sprintf("REPS and AR at least %.0f %% slower", 100*(f.paper-1)), PaperValue: f.paper, Unit: "x",
			Rule: "CCT of REPS and of AR over Ofan's > 1 in every seed (paired: the same workload; shown: the smaller mean ratio)"}
		favour[f.algo] = c
		claims = append(claims, c)
	}
	for _, c := range claims {
		c.Measured = nan
	}
	get := func(s, a string) *CellData { return ofanScheme(cc, reps, s, a) }
	// The data table.
	tables.WriteString("### CCT with congestion control (" + ofanCC + ", " + ofanREPS + ")\n\n| cc | scheme | CCT per seed | CCT over the bound per seed | RTOs | retx | fidelity |\n|---|---|---|---|---|---|---|\n")
	for _, a := range []string{"dctcp", "nscc", "swift"} {
		for _, s := range []string{"ofan", "pofan", "ar", "reps"} {
			if c := get(s, a); c != nil && len(c.Runs) > 0 {
				fmt.Fprintf(tables, "| %s | %s | %s | %s | %d | %d | %s |\n", a, s, Spread(c.PerSeed(cctOf), ms), Spread(c.PerSeed(cctIncrease), pctOf),
					c.RTOs(), c.Retx(), c.Fidelity())
			}
		}
	}
	tables.WriteString("\n")

	// DCTCP: Ofan and pOfan small.
	of, pof, ar, rp := get("ofan", "dctcp"), get("pofan", "dctcp"), get("ar", "dctcp"), get("reps", "dctcp")
	if m := missingCells(map[string]*CellData{"ofan/dctcp": of, "pofan/dctcp": pof}); m != "" {
		small.judge(false, "", "", m)
	} else {
		cells, fid, note := pairOK(of, pof)
		of, pof := cells[0], cells[1]
		io, ip := meanOf(of.PerSeed(cctIncrease)), meanOf(pof.PerSeed(cctIncrease))
		small.Measured = 100 * max(io, ip)
		small.Detail = withNote(fmt.Sprintf("CCT increase Ofan %s, pOfan %s", Spread(of.PerSeed(cctIncrease), pctOf), Spread(pof.PerSeed(cctIncrease), pctOf)), note)
		small.judge(max(io, ip) <= SmallIncrease, fid, joinNonEmpty(of.Incomplete(), pof.Incomplete()), "")
	}
	if m := missingCells(map[string]*CellData{"ofan/dctcp": of, "ar/dctcp": ar, "reps/dctcp": rp}); m != "" {
		several.judge(false, "", "", m)
	} else {
		cells, fid, note := pairOK(of, ar, rp)
		of, ar, rp := cells[0], cells[1], cells[2]
		base := meanOf(of.PerSeed(cctOf))
		ra, rr := meanOf(ar.PerSeed(cctOf))/base, meanOf(rp.PerSeed(cctOf))/base
		several.Measured = min(ra, rr)
		several.Detail = withNote(fmt.Sprintf("mean CCT over Ofan's: AR %.2fx, REPS %.2fx (Ofan %s)", ra, rr, ms(base)), note)
		several.judge(min(ra, rr) >= SeveralFold, fid, joinNonEmpty(of.Incomplete(), ar.Incomplete(), rp.Incomplete()), "")
	}
	for algo, c := range favour {
		o, a, r := get("ofan", algo), get("ar", algo), get("reps", algo)
		if m := missingCells(map[string]*CellData{"ofan/" + algo: o, "ar/" + algo: a, "reps/" + algo: r}); m != "" {
			c.judge(false, "", "", m)
			continue
		}
		cells, fid, note := pairOK(o, a, r)
		o, a, r = cells[0], cells[1], cells[2]
		ra, ok1 := pairedRatios(a.PerSeed(cctOf), o.PerSeed(cctOf))
		rr, ok2 := pairedRatios(r.PerSeed(cctOf), o.PerSeed(cctOf))
		c.Measured = min(meanOf(ra), meanOf(rr))
		c.Detail = withNote(fmt.Sprintf("CCT over Ofan's by seed: AR %s, REPS %s", listOf(ra), listOf(rr)), note)
		c.judge(ok1 && ok2 && allAbove(ra, 1) && allAbove(rr, 1), fid, joinNonEmpty(o.Incomplete(), a.Incomplete(), r.Incomplete()), "")
	}
	out := []Claim{small, several, *favour["nscc"], *favour["swift"]}
	return out
}

func pctOf(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%+.1f %%", 100*v)
}

// ofanFigures: Fig. 3 (link overload per stage at the largest message),
// Fig. 4 (largest queue against message size) and Fig. 12 (CCT increase
// per congestion control).
func ofanFigures(in Inputs) []figure.Figure {
	var out []figure.Figure
	d := in[ofanQueues]
	sizes := sizesOf(d)
	policies := append(slices.Clone(ofanGrow), ofanFlat...)
	if len(sizes) > 0 {
		large := sizes[len(sizes)-1]
		f3 := figure.Panel{Title: "Fig. 3: link overload per stage at " + units.FormatSize(large), Y: "busiest port's packets / stage mean", Kind: figure.Bars,
			Categories: FabricStages, Refs: []figure.Ref{{Label: "balanced", Y: 1}}}
		f4 := figure.Panel{Title: "Fig. 4: largest queue over the fabric stages", X: "message size (KiB)", Y: "max backlog (KiB)", Kind: figure.Lines, LogX: true, LogY: true}
		for _, p := range policies {
			bars := figure.Series{Name: p}
			line := figure.Series{Name: p}
			if c := d.policySize(p, large); c != nil && len(c.Runs) > 0 {
				q := queuesOf(c)
				for _, s := range FabricStages {
					bars.Values = append(bars.Values, q.share[s])
				}
			}
			for _, s := range sizes {
				if c := d.policySize(p, s); c != nil && len(c.Runs) > 0 {
					line.Points = append(line.Points, figure.Point{X: float64(s) / 1024, Y: math.Max(float64(queuesOf(c).worstStage())/1024, 0.1)})
				}
			}
			f3.Series = append(f3.Series, bars)
			f4.Series = append(f4.Series, line)
		}
		out = append(out, figure.Figure{Name: "queues", Title: "Ofan Fig. 3 and 4: switch policies alone, no congestion control", Panels: []figure.Panel{f3, f4}})
	}
	cc, reps := in[ofanCC], in[ofanREPS]
	if cc != nil || reps != nil {
		p := figure.Panel{Title: "Fig. 12: CCT over the lower bound (mean, range over seeds)", Y: "CCT increase (%)", Kind: figure.Bars,
			Categories: []string{"dctcp", "nscc", "swift"}}
		for _, s := range []string{"ofan", "pofan", "ar", "reps"} {
			ser := figure.Series{Name: s}
			for _, a := range p.Categories {
				m, lo, hi := meanRange(ofanScheme(cc, reps, s, a).PerSeed(cctIncrease))
				ser.Values, ser.Low, ser.High = append(ser.Values, 100*m), append(ser.Low, 100*lo), append(ser.High, 100*hi)
			}
			p.Series = append(p.Series, ser)
		}
		out = append(out, figure.Figure{Name: "cct", Title: "Ofan 6.5: a 4 MB permutation with congestion control", Panels: []figure.Panel{p}})
	}
	return out
}
