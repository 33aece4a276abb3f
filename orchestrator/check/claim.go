package check

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ftlab/ftlab/orchestrator/fidelity"
)

// Verdict is what a claim's measurements say.
type Verdict string

// Verdicts. Only HOLDS establishes a claim: a claim whose numbers agree
// with it on runs whose fidelity verdict is not OK is INCONCLUSIVE (a
// WARN run cannot make a claim hold), and so is one whose numbers
// disagree on such runs (they cannot refute it either), or whose data is
// too thin to judge (too few flows for a 99th percentile, runs that timed
// out). NO DATA: what the claim needs was not run (a --quick check leaves
// cells out) or nothing happened that it speaks of (no losses to
// recover).
const (
	Holds        Verdict = "HOLDS"
	DoesNotHold  Verdict = "DOES NOT HOLD"
	Inconclusive Verdict = "INCONCLUSIVE"
	NoData       Verdict = "NO DATA"
)

// Claim is one claim of a paper, measured.
type Claim struct {
	ID   string `json:"id"`
	Text string `json:"claim"`
	// Paper is the paper's number as it says it ("about half");
	// PaperValue the same on Measured's scale, NaN when the paper gives
	// none.
	Paper      string  `json:"paper"`
	PaperValue float64 `json:"paper_value"`
	// Measured is ftlab's number (NaN when there is none); Ratio is
	// Measured / PaperValue.
	Measured float64 `json:"measured"`
	Ratio    float64 `json:"ratio"`
	// Unit says what Measured is ("ratio", "%", "tau").
	Unit string `json:"unit,omitempty"`
	// Rule is how the claim is judged, with its threshold and where the
	// threshold comes from.
	Rule string `json:"rule"`
	// NumbersHold: the measurements satisfy the rule.
	NumbersHold bool `json:"numbers_hold"`
	// Fidelity is the worst fidelity verdict of the runs the claim uses.
	Fidelity fidelity.Verdict `json:"fidelity"`
	Verdict  Verdict          `json:"verdict"`
	// Why says what decided the verdict when it is not the numbers alone.
	Why string `json:"why,omitempty"`
	// Detail is the data behind the number: per scheme, per seed.
	Detail string `json:"detail"`
}

// judge sets the claim's verdict from its numbers, the fidelity of the
// runs it used and any reason it cannot be judged (thin: too little data;
// missing: nothing to judge).
func (c *Claim) judge(numbersHold bool, fid fidelity.Verdict, thin, missing string) {
	c.NumbersHold, c.Fidelity = numbersHold, fid
	if c.PaperValue != 0 && !math.IsNaN(c.PaperValue) && !math.IsNaN(c.Measured) {
		c.Ratio = c.Measured / c.PaperValue
	} else {
		c.Ratio = math.NaN()
	}
	switch {
	case missing != "":
		c.Verdict, c.Why = NoData, missing
	case fid == "":
		c.Verdict, c.Why = NoData, "no run finished"
	case thin != "":
		c.Verdict, c.Why = Inconclusive, thin
	case fid != fidelity.OK:
		c.Verdict = Inconclusive
		c.Why = fmt.Sprintf("fidelity %s: the numbers %s, but runs the machine may have distorted can neither establish nor refute the claim", fid, holdsWord(numbersHold))
	case numbersHold:
		c.Verdict = Holds
	default:
		c.Verdict = DoesNotHold
	}
}

func holdsWord(h bool) string {
	if h {
		return "satisfy the rule"
	}
	return "do not satisfy the rule"
}

// Combine is a check's verdict from its claims: DOES NOT HOLD if one
// does not hold, else INCONCLUSIVE if one is, else HOLDS if one holds,
// else NO DATA.
func Combine(claims []Claim) Verdict {
	seen := map[Verdict]bool{}
	for _, c := range claims {
		seen[c.Verdict] = true
	}
	for _, v := range []Verdict{DoesNotHold, Inconclusive, Holds} {
		if seen[v] {
			return v
		}
	}
	return NoData
}

// nan is NaN, for claims without a number.
var nan = math.NaN()

// num formats a claim's number ("-" for NaN).
func num(v float64, unit string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		if math.IsInf(v, 1) {
			return "inf"
		}
		return "-"
	}
	s := fmt.Sprintf("%.3g", v)
	switch unit {
	case "%":
		return s + "%"
	case "", "ratio":
		return s
	default:
		return s + " " + unit
	}
}

// ratioText formats Ratio.
func (c *Claim) ratioText() string {
	if math.IsNaN(c.Ratio) || math.IsInf(c.Ratio, 0) {
		return "-"
	}
	return fmt.Sprintf("%.2fx", c.Ratio)
}

// MeasuredText and PaperText format the claim's two numbers.
func (c *Claim) MeasuredText() string { return num(c.Measured, c.Unit) }

// RatioText is the ftlab/paper ratio, "-" when the paper gives no number.
func (c *Claim) RatioText() string { return c.ratioText() }

// thinFCT says why a 99th percentile over n delivered flows of m cannot
// be judged: fewer than MinFlows flows (it would be one of the largest
// few values), or flows not delivered (their FCT is unknown, beyond the
// timeout).
func thinFCT(cells ...*CellData) string {
	var why []string
	for _, c := range cells {
		if c == nil {
			continue
		}
		m, d := c.Flows()
		if d < MinFlows {
			why = append(why, fmt.Sprintf("%s has %d delivered flows, fewer than %d: its p99 is one of its %d largest", c.Name(), d, MinFlows, d-int(math.Ceil(0.99*float64(d)))+1))
		}
		if d < m {
			why = append(why, fmt.Sprintf("%s delivered %d of %d flows (%s)", c.Name(), d, m, c.Incomplete()))
		}
	}
	return strings.Join(why, "; ")
}

// MinFlows is the fewest delivered flows per cell a 99th percentile is
// judged on: with 100 the nearest rank is the second largest, not the
// maximum.
const MinFlows = 100

// missingCells names the cells a claim needs that did not run.
func missingCells(want map[string]*CellData) string {
	var out []string
	for name, c := range want {
		if c == nil || len(c.Runs) == 0 {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return ""
	}
	slices.Sort(out)
	return "not run: " + strings.Join(out, ", ")
}
