package check

import (
	"fmt"
	"math"
	"strings"

	"github.com/ftlab/ftlab/orchestrator/fidelity"
	"github.com/ftlab/ftlab/orchestrator/report/figure"
	"github.com/ftlab/ftlab/orchestrator/results"
	"github.com/ftlab/ftlab/orchestrator/scenario"
)

// The Ordered Chaos microbenchmarks' scenarios and schemes.
const (
	ocIncast  = "oc-incast.yaml"
	ocTornado = "oc-tornado.yaml"
)

// ocSchemes are Ordered Chaos V-A2's comparison set, in its order
// (flowlet switching is not in ftlab).
var ocSchemes = []string{"ecmp", "plb", "rps", "reps", "rss", "rss+rack", "rss+pfld"}

// Paper numbers (Ordered Chaos V-B).
const (
	ocIncastP99  = 0.5  // "the 99th-percentile FCT with RSS+PFLD roughly half that of ECMP"
	ocTornadoP99 = 0.4  // "up to 2.5x at the 99th" (trimming off, with drops)
	ocRTOs       = 0.01 // "timeouts are reduced by 99% compared to ECMP"
	// ocRTOLimit is the task's bound: at least 90 % fewer RTOs than ECMP.
	ocRTOLimit = 0.1
)

var orderedChaosCheck = Check{
	Name:  "ordered-chaos",
	Paper: "Ordered Chaos (RSS+PFLD) V-B, Fig. 7",
	Title: "incast and tornado microbenchmarks with corruption and trimming",
	Setup: "The paper: htsim, a 2-tier fat tree of 1,024 hosts, 400 Gbit/s links of 1.5 us (12 us minimum RTT, about 146 packets of 4 KiB per flow and 9 per RSS subflow in flight), MPRDMA congestion control with one window per flow, RTO fixed at the maximum unloaded RTT plus an allowance, sigma 16, tau 15 us, corruption 5e-5; an 8:1 incast of 1 MiB per sender and a tornado, each with and without trimming and corruption, 100 seeds. " +
		"ftlab: the same fabric at 16 hosts (4 leaves of 4 hosts, 4 spines: the same host-leaf-spine-leaf-host paths), written in the paper's units and run time-dilated so that the BDP in packets, per subflow, in buffers and in messages is the paper's; the same congestion control, RTO rule, sigma, tau and schemes; enough seeds for at least 100 flows per cell.",
	Deviations: []string{
		"16 hosts instead of 1,024: the incast is the paper's 8:1; the tornado has 16 flows per run instead of 1,024.",
		"Corruption 1e-3 per packet on every leaf-spine link (two per path) instead of 5e-5 on every link: a 1 MiB flow loses about 0.5 packets instead of 0.05, so a cell of about 100 flows sees about 50 losses instead of 5 (the paper: results hold from 1e-6 to 1e-4, higher rates amplify PFLD's lead).",
		"Buffers (1 MiB, 1.7 BDP) and ECN threshold (256 KiB) are ftlab's choice: the paper does not state them.",
		"RTO allowance 4 base RTTs (an RTO of about 5 RTTs): the paper gives no number; Fig. 1B's RTO-based recovery takes 60-80 us at a 12 us RTT.",
		"16 seeds for the incast, 9 for the tornado (the paper: 100): at least 100 flows per cell, so a p99 is the second largest FCT, also once the seeds with a run that is not OK are left out (up to 3 and 2).",
		"No flowlet switching (not in ftlab). RACK-TLP runs RFC 8985's tail loss probe at 2 SRTT; PFLD's periodic probes every 8 packets of a subflow.",
	},
	Scenarios: []string{ocIncast, ocTornado},
	Quick: map[string]Reduction{
		ocIncast: {Patch: []Patch{seeds(1), keep("trimming", 0), keep("faults", 1), keep("transport", 0, 5, 6),
			set("256KiB", "workload", "size"), drop("plb")}},
		ocTornado: {Patch: []Patch{seeds(1), keep("trimming", 0), keep("faults", 1), keep("transport", 0, 6),
			set("256KiB", "workload", "size"), drop("plb")}},
	},
	Evaluate: evalOrderedChaos,
}

// ocCond is one of the four conditions of Fig. 7.
type ocCond struct{ trim, corrupt bool }

func (c ocCond) String() string {
	t, k := "no trimming", "no corruption"
	if c.trim {
		t = "trimming"
	}
	if c.corrupt {
		k = "corruption"
	}
	return t + ", " + k
}

var ocConds = []ocCond{{false, false}, {false, true}, {true, false}, {true, true}}

// find returns the cell whose configuration satisfies match (nil when
// none does).
func (d *Data) find(match func(*scenario.Config) bool) *CellData {
	if d == nil || d.Scenario == nil {
		return nil
	}
	for _, c := range d.Scenario.Cells {
		if match(c.Config) {
			cd := &CellData{Cell: c}
			for _, r := range d.Runs {
				if r.Meta.Cell == c.Name {
					cd.Runs = append(cd.Runs, r)
				}
			}
			return cd
		}
	}
	return nil
}

// corruption is the drop rate of a cell's corrupt faults (0 without).
func corruption(cfg *scenario.Config) float64 {
	p := 0.0
	for _, f := range cfg.Faults {
		if f.Kind == scenario.Corrupt {
			p = max(p, f.Drop)
		}
	}
	return p
}

func (d *Data) ocCell(c ocCond, transport string) *CellData {
	return d.find(func(cfg *scenario.Config) bool {
		return cfg.Trimming == c.trim && (corruption(cfg) > 0) == c.corrupt && string(cfg.Transport) == transport
	})
}

func evalOrderedChaos(in Inputs) Evaluation {
	var ev Evaluation
	var tables strings.Builder
	for _, w := range []struct {
		file, name string
		p99        float64
		p99Conds   []ocCond
	}{
		{ocIncast, "incast", ocIncastP99, []ocCond{{false, true}, {true, true}}},
		{ocTornado, "tornado", ocTornadoP99, []ocCond{{false, true}}},
	} {
		d := in[w.file]
		for _, c := range w.p99Conds {
			ev.Claims = append(ev.Claims, ocP99Claim(d, w.name, c, w.p99))
		}
		ev.Claims = append(ev.Claims, ocRTOClaim(d, w.name), ocExactClaim(d, w.name), ocRACKClaim(d, w.name))
		if d != nil {
			ocTable(&tables, d, w.name)
		}
	}
	ev.Figures = ocFigures(in)
	ev.Tables = tables.String()
	return ev
}

// ocP99Claim: RSS+PFLD's p99 FCT against ECMP's under condition c.
func ocP99Claim(d *Data, workload string, c ocCond, paper float64) Claim {
	limit := (1 + paper) / 2
	cl := Claim{
		ID:         fmt.Sprintf("%s-p99-%s", workload, map[bool]string{false: "notrim", true: "trim"}[c.trim]),
		Text:       fmt.Sprintf("%s, %s: RSS+PFLD's p99 FCT well below ECMP's", workload, c),
		Paper:      map[bool]string{true: "about half (0.5)", false: "up to 2.5x better (0.4)"}[paper == ocIncastP99],
		PaperValue: paper, Unit: "ratio",
		Rule: fmt.Sprintf("p99(RSS+PFLD) / p99(ECMP) <= %.2f: at least half the paper's improvement ((1 + %.2g) / 2)", limit, paper),
	}
	ecmp, pfld := d.ocCell(c, "ecmp"), d.ocCell(c, "rss+pfld")
	cl.Measured = nan
	if missing := missingCells(map[string]*CellData{"ecmp": ecmp, "rss+pfld": pfld}); missing != "" {
		cl.judge(false, "", "", missing)
		return cl
	}
	cells, fid, note := pairOK(ecmp, pfld)
	ecmp, pfld = cells[0], cells[1]
	pe, pp := ecmp.P99(), pfld.P99()
	cl.Measured = pp / pe
	cl.Detail = withNote(fmt.Sprintf("p99 FCT ECMP %s, RSS+PFLD %s (emulated time); per-seed largest FCT ECMP %s, RSS+PFLD %s",
		ms(pe), ms(pp), Spread(ecmp.PerSeed(maxFCT), ms), Spread(pfld.PerSeed(maxFCT), ms)), note)
	cl.judge(cl.Measured <= limit, fid, thinFCT(ecmp, pfld), "")
	return cl
}

func maxFCT(r RunData) float64 {
	v := fcts(r)
	if len(v) == 0 {
		return nan
	}
	m := v[0]
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

func rtosOf(r RunData) float64 {
	n := 0
	for _, f := range r.Rows.Flows {
		n += f.RTOs
	}
	return float64(n)
}

// ocRTOClaim: RSS+PFLD's RTOs against ECMP's with corruption, with and
// without trimming; the claim takes the worse of the two.
func ocRTOClaim(d *Data, workload string) Claim {
	cl := Claim{ID: workload + "-rtos", Text: workload + ", corruption, trimming off and on: RSS+PFLD's RTOs at least 90 % fewer than ECMP's",
		Paper: "99 % fewer (0.01)", PaperValue: ocRTOs, Unit: "ratio",
		Rule: fmt.Sprintf("RTOs(RSS+PFLD) / RTOs(ECMP) <= %.2g with trimming off and with it on (the worse of the two is shown)", ocRTOLimit)}
	cl.Measured = nan
	var details []string
	holds := true
	fid, missing, thin := corruptPairs(d, "ecmp", "rss+pfld", func(c ocCond, ecmp, pfld *CellData, note string) (skip string) {
		re, rp := ecmp.RTOs(), pfld.RTOs()
		details = append(details, withNote(fmt.Sprintf("%s: ECMP %d RTOs (%s per seed), RSS+PFLD %d (%s)", c, re,
			Spread(ecmp.PerSeed(rtosOf), f1), rp, Spread(pfld.PerSeed(rtosOf), f1)), note))
		if re == 0 {
			return c.String() + ": ECMP had no RTO, nothing to reduce"
		}
		r := float64(rp) / float64(re)
		if math.IsNaN(cl.Measured) || r > cl.Measured {
			cl.Measured = r
		}
		holds = holds && r <= ocRTOLimit
		return ""
	})
	if len(missing) > 0 {
		details = append(details, strings.Join(missing, "; "))
	}
	cl.Detail = strings.Join(details, "; ")
	none := ""
	if math.IsNaN(cl.Measured) {
		none = strings.Join(missing, "; ")
	}
	cl.judge(holds, fid, strings.Join(thin, "; "), none)
	return cl
}

// ocExactClaim: PFLD's retransmissions equal the DATA copies lost, none
// spurious, over every RSS+PFLD cell of the workload.
func ocExactClaim(d *Data, workload string) Claim {
	cl := Claim{ID: workload + "-pfld-exact", Text: workload + ": PFLD's retransmissions equal the data packets lost (dropped or trimmed), none spurious",
		Paper: "exactly equal (1.0), no spurious ones (VI)", PaperValue: 1, Unit: "ratio",
		Rule: "over every RSS+PFLD cell: retransmissions = DATA copies lost (the hosts' DATA sent less received, plus trimmed headers) and no retransmission reached a receiver that had the packet"}
	cl.Measured = nan
	var retx, spurious int
	var lost uint64
	fid := fidelity.OK
	var thin, parts []string
	n := 0
	for _, c := range ocConds {
		x := d.ocCell(c, "rss+pfld")
		if x == nil || len(x.Runs) == 0 {
			continue
		}
		cells, f, note := pairOK(x)
		x = cells[0]
		pc, ok := x.Packets()
		if !ok {
			cl.judge(false, f, "", x.Name()+": the runs have no packet counts")
			return cl
		}
		n++
		fid = worst(fid, f)
		r, s := x.Retx(), x.Spurious()
		retx, spurious, lost = retx+r, spurious+s, lost+pc.DataLost()
		corrupt, buffer := x.SwitchDrops()
		parts = append(parts, withNote(fmt.Sprintf("%s: %d retransmissions, %d spurious, %d DATA lost (%d trimmed; switches dropped %d to corruption, %d to buffers, all kinds)",
			c, r, s, pc.DataLost(), pc.Trimmed, corrupt, buffer), note))
		if inc := x.Incomplete(); inc != "" {
			thin = append(thin, x.Name()+": "+inc)
		}
	}
	if n == 0 {
		cl.judge(false, "", "", "not run: rss+pfld")
		return cl
	}
	cl.Detail = fmt.Sprintf("%d retransmissions for %d DATA copies lost, %d spurious; %s", retx, lost, spurious, strings.Join(parts, "; "))
	if lost == 0 {
		cl.judge(false, fid, "", "no DATA copy was lost: nothing to retransmit")
		return cl
	}
	cl.Measured = float64(retx) / float64(lost)
	cl.judge(uint64(retx) == lost && spurious == 0, fid, strings.Join(thin, "; "), "")
	return cl
}

// ocRACKClaim: RSS+RACK-TLP makes more spurious retransmissions than
// RSS+PFLD with corruption (both trimming settings pooled).
func ocRACKClaim(d *Data, workload string) Claim {
	cl := Claim{ID: workload + "-rack-spurious", Text: workload + ", corruption: RACK-TLP makes more spurious retransmissions than PFLD",
		Paper: "RACK-TLP's sender-side heuristics react late and resend (no number)", PaperValue: nan, Unit: "retx",
		Rule: "spurious retransmissions of RSS+RACK-TLP > those of RSS+PFLD, corruption cells, trimming off and on together"}
	cl.Measured = nan
	var rack, pfld int
	var rackRetx, pfldRetx int
	var notes []string
	fid, missing, thin := corruptPairs(d, "rss+rack", "rss+pfld", func(c ocCond, r, p *CellData, note string) string {
		if note != "" {
			notes = append(notes, c.String()+": "+note)
		}
		rack, pfld = rack+r.Spurious(), pfld+p.Spurious()
		rackRetx, pfldRetx = rackRetx+r.Retx(), pfldRetx+p.Retx()
		return ""
	})
	if len(missing) == 2 {
		cl.judge(false, "", "", strings.Join(missing, "; "))
		return cl
	}
	cl.Measured = float64(rack)
	cl.Detail = fmt.Sprintf("spurious retransmissions: RSS+RACK-TLP %d of %d, RSS+PFLD %d of %d", rack, rackRetx, pfld, pfldRetx)
	if len(missing) > 0 {
		cl.Detail += "; " + strings.Join(missing, "; ")
	}
	cl.Detail = withNote(cl.Detail, strings.Join(notes, "; "))
	cl.judge(rack > pfld, fid, strings.Join(thin, "; "), "")
	return cl
}

func f1(v float64) string { return fmt.Sprintf("%.1f", v) }

// ocTable writes the data of one workload: every condition and scheme.
func ocTable(b *strings.Builder, d *Data, workload string) {
	fmt.Fprintf(b, "### %s (%s)\n\nFCTs in emulated time; per seed: mean (smallest-largest) over the seeds.\n\n", workload, d.File)
	b.WriteString("| condition | scheme | flows | p50 | p99 | largest per seed | RTOs per seed | retx | spurious | DATA lost | switch drops (corruption/buffer) | fidelity |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range ocConds {
		for _, s := range ocSchemes {
			x := d.ocCell(c, s)
			if x == nil || len(x.Runs) == 0 {
				continue
			}
			m, del := x.Flows()
			lost := "-"
			if pc, ok := x.Packets(); ok {
				lost = fmt.Sprint(pc.DataLost())
			}
			corrupt, buffer := x.SwitchDrops()
			f := x.FCTs()
			fmt.Fprintf(b, "| %s | %s | %d/%d | %s | %s | %s | %s | %d | %d | %s | %d/%d | %s |\n", c, s, del, m, ms(quantile(f, 0.5)), ms(quantile(f, 0.99)),
				Spread(x.PerSeed(maxFCT), ms), Spread(x.PerSeed(rtosOf), f1), x.Retx(), x.Spurious(), lost, corrupt, buffer, x.Fidelity())
		}
	}
	b.WriteString("\n")
}

// ocFigures: Fig. 7's FCT distributions per scheme (in the paper's time)
// for each workload and corruption setting, trimming off and on side by
// side; and the RTOs per scheme.
func ocFigures(in Inputs) []figure.Figure {
	fct := figure.Figure{Name: "fct", Title: "Ordered Chaos Fig. 7: FCT per scheme (box: quartiles, line: median, whisker: range, dot: p99)", Columns: 2}
	rtos := figure.Figure{Name: "rtos", Title: "Retransmission timeouts per run (mean, range over seeds)", Columns: 2}
	for _, w := range []struct{ file, name string }{{ocIncast, "incast"}, {ocTornado, "tornado"}} {
		d := in[w.file]
		if d == nil {
			continue
		}
		for _, corrupt := range []bool{false, true} {
			title := w.name + ", no corruption"
			if corrupt {
				title = fmt.Sprintf("%s, corruption", w.name)
			}
			p := figure.Panel{Title: title, X: "", Y: "FCT in the paper's time (us)", Kind: figure.Distributions, LogY: true,
				Categories: []string{"no trimming", "trimming"}}
			ideal := math.NaN()
			for _, s := range ocSchemes {
				ser := figure.Series{Name: s}
				for _, trim := range []bool{false, true} {
					x := d.ocCell(ocCond{trim, corrupt}, s)
					var us []float64
					if x != nil {
						dil := x.Cell.Config.Regime.Dilation
						for _, v := range x.FCTs() {
							us = append(us, v/dil*1e6)
						}
						if b := boundOf(x); !math.IsNaN(b) {
							ideal = b / dil * 1e6
						}
					}
					ser.Samples = append(ser.Samples, us)
				}
				p.Series = append(p.Series, ser)
			}
			if !math.IsNaN(ideal) {
				p.Refs = []figure.Ref{{Label: "ideal (CCT lower bound)", Y: ideal}}
			}
			fct.Panels = append(fct.Panels, p)
		}
		bars := figure.Panel{Title: w.name, Y: "RTOs per run", Kind: figure.Bars}
		for _, c := range ocConds {
			bars.Categories = append(bars.Categories, strings.NewReplacer("no trimming", "no trim", "no corruption", "no corr", "corruption", "corr", "trimming", "trim").Replace(c.String()))
		}
		for _, s := range ocSchemes {
			ser := figure.Series{Name: s}
			for _, c := range ocConds {
				per := d.ocCell(c, s).PerSeed(rtosOf)
				mean, lo, hi := meanRange(per)
				ser.Values, ser.Low, ser.High = append(ser.Values, mean), append(ser.Low, lo), append(ser.High, hi)
			}
			bars.Series = append(bars.Series, ser)
		}
		rtos.Panels = append(rtos.Panels, bars)
	}
	var out []figure.Figure
	if len(fct.Panels) > 0 {
		out = append(out, fct, rtos)
	}
	return out
}

// boundOf is the mean CCT lower bound of a cell's runs, in seconds (NaN
// without one).
func boundOf(c *CellData) float64 {
	sum, n := 0.0, 0
	for _, r := range c.Runs {
		if r.Meta.Bound != nil {
			sum += r.Meta.Bound.CCT.Seconds()
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// meanRange is the mean, smallest and largest of vs (NaN for none).
func meanRange(vs []float64) (mean, lo, hi float64) {
	if len(vs) == 0 {
		return nan, nan, nan
	}
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		mean += v
		lo, hi = min(lo, v), max(hi, v)
	}
	return mean / float64(len(vs)), lo, hi
}

// flowRows lists a cell's flow rows over its runs.
func flowRows(c *CellData) []results.FlowRow {
	var out []results.FlowRow
	if c == nil {
		return nil
	}
	for _, r := range c.Runs {
		out = append(out, r.Rows.Flows...)
	}
	return out
}

// corruptPairs runs each for the cells of schemes a and b under
// corruption, trimming off and then on, restricted to their paired OK
// seeds (pairOK, whose note it passes on). A condition whose cells did
// not run, or that each names as having nothing to judge (its return),
// is in missing; runs that did not complete are in thin; fid is the worst
// fidelity of what each was given.
func corruptPairs(d *Data, a, b string, each func(c ocCond, x, y *CellData, note string) (skip string)) (fid fidelity.Verdict, missing, thin []string) {
	fid = fidelity.OK
	for _, trim := range []bool{false, true} {
		c := ocCond{trim, true}
		x, y := d.ocCell(c, a), d.ocCell(c, b)
		if m := missingCells(map[string]*CellData{a + " " + c.String(): x, b + " " + c.String(): y}); m != "" {
			missing = append(missing, m)
			continue
		}
		cells, f, note := pairOK(x, y)
		x, y = cells[0], cells[1]
		fid = worst(fid, f)
		for _, z := range []*CellData{x, y} {
			if inc := z.Incomplete(); inc != "" {
				thin = append(thin, z.Name()+": "+inc)
			}
		}
		if skip := each(c, x, y, note); skip != "" {
			missing = append(missing, skip)
		}
	}
	return fid, missing, thin
}
