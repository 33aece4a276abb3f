package check

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/ftlab/ftlab/internal/stats"
	"github.com/ftlab/ftlab/orchestrator/fidelity"
	"github.com/ftlab/ftlab/orchestrator/results"
	"github.com/ftlab/ftlab/orchestrator/scenario"
)

// Data is what one scenario of a check measured: the scenario as loaded
// (its cells' configurations, topologies resolved) and every run's record
// and rows. The verdicts are computed from Data only, so they can be
// tested on recorded inputs and recomputed from a results directory.
type Data struct {
	File     string // the scenario file's name under the paper directory
	Scenario *scenario.Scenario
	Dir      string // results directory ("" for recorded inputs)
	Runs     []RunData
}

// RunData is one run: its record in run.json and its rows.
type RunData struct {
	Meta *results.Run
	Rows results.Rows
}

// DataOf reads a results directory written for sc.
func DataOf(file string, sc *scenario.Scenario, dir string) (*Data, error) {
	set, err := results.Read(dir)
	if err != nil {
		return nil, err
	}
	d := &Data{File: file, Scenario: sc, Dir: dir}
	for i, r := range set.Meta.Runs {
		d.Runs = append(d.Runs, RunData{Meta: r, Rows: set.Runs[i]})
	}
	return d, nil
}

// CellData is one cell's runs.
type CellData struct {
	Cell *scenario.Cell
	Runs []RunData
}

// Cell returns the cell whose choices include every given key=value
// (nil when the scenario has none: a cell --quick left out, or a
// scenario that did not run).
func (d *Data) Cell(choices map[string]string) *CellData {
	if d == nil || d.Scenario == nil {
		return nil
	}
	for _, c := range d.Scenario.Cells {
		ok := true
		for k, v := range choices {
			if choiceOf(c, k) != v {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		cd := &CellData{Cell: c}
		for _, r := range d.Runs {
			if r.Meta.Cell == c.Name {
				cd.Runs = append(cd.Runs, r)
			}
		}
		return cd
	}
	return nil
}

// choiceOf is a cell's value on a compared key ("" when not compared).
func choiceOf(c *scenario.Cell, key string) string {
	for _, ch := range c.Choices {
		if ch.Key == key {
			return ch.Value
		}
	}
	return ""
}

// Name is the cell's name, "-" for none.
func (c *CellData) Name() string {
	if c == nil {
		return "-"
	}
	return c.Cell.Name
}

// Flows counts the cell's messages and those delivered.
func (c *CellData) Flows() (messages, delivered int) {
	if c == nil {
		return 0, 0
	}
	for _, r := range c.Runs {
		for _, f := range r.Rows.Flows {
			messages++
			if f.Delivered {
				delivered++
			}
		}
	}
	return messages, delivered
}

// FCTs are the delivered messages' completion times in seconds, over
// every run.
func (c *CellData) FCTs() []float64 {
	var out []float64
	if c == nil {
		return nil
	}
	for _, r := range c.Runs {
		out = append(out, fcts(r)...)
	}
	return out
}

func fcts(r RunData) []float64 {
	var out []float64
	for _, f := range r.Rows.Flows {
		if f.Delivered {
			out = append(out, f.FCT.Seconds())
		}
	}
	return out
}

// P99 is the nearest-rank 99th percentile of the FCTs over every run
// (NaN with none).
func (c *CellData) P99() float64 { return quantile(c.FCTs(), 0.99) }

// quantile is stats.Quantile, NaN for no values.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return stats.Quantile(xs, q)
}

// PerSeed applies f to each run, in repetition order.
func (c *CellData) PerSeed(f func(RunData) float64) []float64 {
	if c == nil {
		return nil
	}
	out := make([]float64, len(c.Runs))
	for i, r := range c.Runs {
		out[i] = f(r)
	}
	return out
}

// Sum adds f over the cell's flow rows.
func (c *CellData) Sum(f func(results.FlowRow) int) int {
	n := 0
	if c == nil {
		return 0
	}
	for _, r := range c.Runs {
		for _, fl := range r.Rows.Flows {
			n += f(fl)
		}
	}
	return n
}

// RTOs of the cell's messages.
func (c *CellData) RTOs() int { return c.Sum(func(f results.FlowRow) int { return f.RTOs }) }

// Retx is the senders' retransmitted copies.
func (c *CellData) Retx() int { return c.Sum(func(f results.FlowRow) int { return f.Retx }) }

// Spurious is the retransmitted copies that arrived at a receiver that
// already had them: before delivery (flow rows) and after (the runs'
// packet counts).
func (c *CellData) Spurious() int {
	n := c.Sum(func(f results.FlowRow) int { return f.RetxSpurious })
	if c != nil {
		for _, r := range c.Runs {
			if p := r.Meta.Packets; p != nil {
				n += int(p.SpuriousLate)
			}
		}
	}
	return n
}

// Packets sums the runs' packet counts; ok is false when a run has none.
func (c *CellData) Packets() (sum results.PacketCounts, ok bool) {
	if c == nil || len(c.Runs) == 0 {
		return sum, false
	}
	for _, r := range c.Runs {
		if r.Meta.Packets == nil {
			return sum, false
		}
		sum.Add(*r.Meta.Packets)
	}
	return sum, true
}

// SwitchDrops sums the switches' drop counters: corruption and buffer.
func (c *CellData) SwitchDrops() (corrupt, buffer uint64) {
	if c == nil {
		return 0, 0
	}
	for _, r := range c.Runs {
		for _, l := range r.Rows.Links {
			corrupt += l.DropCorrupt
			buffer += l.DropBuffer
		}
	}
	return corrupt, buffer
}

// Fidelity is the worst verdict of the cell's runs; a run without one
// (it failed before it could be judged) counts as FAIL.
func (c *CellData) Fidelity() fidelity.Verdict {
	v := fidelity.OK
	if c == nil || len(c.Runs) == 0 {
		return ""
	}
	for _, r := range c.Runs {
		if r.Meta.Fidelity == nil {
			v = fidelity.FAIL
			continue
		}
		v = fidelity.Worst(v, r.Meta.Fidelity.Verdict)
	}
	return v
}

// Incomplete says which runs of the cell did not complete ("" when all
// did).
func (c *CellData) Incomplete() string {
	if c == nil {
		return ""
	}
	var bad []string
	for _, r := range c.Runs {
		if r.Meta.Status != results.StatusComplete {
			bad = append(bad, fmt.Sprintf("repetition %d %s", r.Meta.Repetition, r.Meta.Status))
		}
	}
	return strings.Join(bad, ", ")
}

// Spread describes per-seed values: "1.2 (1.0-1.5 over 3 seeds)".
func Spread(vs []float64, format func(float64) string) string {
	var ok []float64
	for _, v := range vs {
		if !math.IsNaN(v) {
			ok = append(ok, v)
		}
	}
	if len(ok) == 0 {
		return "-"
	}
	mean := 0.0
	for _, v := range ok {
		mean += v
	}
	mean /= float64(len(ok))
	if len(ok) == 1 {
		return format(mean) + " (1 seed)"
	}
	return fmt.Sprintf("%s (%s-%s over %d seeds)", format(mean), format(slices.Min(ok)), format(slices.Max(ok)), len(ok))
}

// worst is the worst of fidelity verdicts, "" (nothing ran) counting as
// the worst.
func worst(vs ...fidelity.Verdict) fidelity.Verdict {
	out := fidelity.OK
	for _, v := range vs {
		if v == "" {
			return ""
		}
		out = fidelity.Worst(out, v)
	}
	return out
}

// ms formats seconds as milliseconds.
func ms(s float64) string {
	if math.IsNaN(s) {
		return "-"
	}
	return fmt.Sprintf("%.1f ms", 1e3*s)
}

// MinOKShare is the least share of a claim's seeds that must remain, and
// MinOKSeeds the fewest (or all, when there are fewer), once the seeds
// with a run not judged OK are left out (pairOK).
const (
	MinOKShare = 0.75
	MinOKSeeds = 2
)

// pairOK restricts the cells a claim compares to the repetitions (seeds)
// in which every one of them has a run judged OK. A run the machine may
// have distorted is left out together with the other cells' runs of the
// same seed, so the comparison stays paired: the same workload, faults
// and hash seeds on every side. When enough seeds remain (MinOKShare,
// MinOKSeeds) it returns the restricted cells, fidelity OK and a note of
// what was left out ("" when nothing was); otherwise the cells as they
// were, their worst fidelity and why the claim cannot be judged on OK
// runs. Nil cells stay nil (missingCells reports them).
func pairOK(cells ...*CellData) (out []*CellData, fid fidelity.Verdict, note string) {
	seeds := map[int]bool{}
	bad := map[int][]string{}
	for _, c := range cells {
		if c == nil {
			continue
		}
		for _, r := range c.Runs {
			seeds[r.Meta.Repetition] = true
			switch {
			case r.Meta.Fidelity == nil:
				bad[r.Meta.Repetition] = append(bad[r.Meta.Repetition], c.Name()+" not judged")
			case r.Meta.Fidelity.Verdict != fidelity.OK:
				bad[r.Meta.Repetition] = append(bad[r.Meta.Repetition], c.Name()+" "+string(r.Meta.Fidelity.Verdict))
			}
		}
	}
	all := worst(fidelities(cells)...)
	if len(bad) == 0 || len(seeds) == 0 {
		return cells, all, ""
	}
	kept := len(seeds) - len(bad)
	need := max(min(MinOKSeeds, len(seeds)), int(math.Ceil(MinOKShare*float64(len(seeds)))))
	left := slices.Sorted(maps.Keys(bad))
	var why []string
	for _, rep := range left {
		why = append(why, fmt.Sprintf("%d (%s)", rep, strings.Join(bad[rep], ", ")))
	}
	if kept < need {
		return cells, all, fmt.Sprintf("%d of %d seeds have every run OK, fewer than %d; not OK: repetition %s", kept, len(seeds), need, strings.Join(why, "; "))
	}
	out = make([]*CellData, len(cells))
	for i, c := range cells {
		if c == nil {
			continue
		}
		k := &CellData{Cell: c.Cell}
		for _, r := range c.Runs {
			if _, drop := bad[r.Meta.Repetition]; !drop {
				k.Runs = append(k.Runs, r)
			}
		}
		out[i] = k
	}
	return out, worst(fidelities(out)...), fmt.Sprintf("judged on the %d of %d seeds with every run OK; left out: repetition %s", kept, len(seeds), strings.Join(why, "; "))
}

// fidelities are the cells' verdicts, nil cells left out.
func fidelities(cells []*CellData) []fidelity.Verdict {
	var vs []fidelity.Verdict
	for _, c := range cells {
		if c != nil {
			vs = append(vs, c.Fidelity())
		}
	}
	return vs
}

// withNote appends pairOK's note to a claim's detail.
func withNote(detail, note string) string {
	if note == "" {
		return detail
	}
	return detail + " [" + note + "]"
}
