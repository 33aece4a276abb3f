package report

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// Comparison is two runs side by side, cell by cell (ftlab compare).
type Comparison struct {
	A     Compared      `json:"a"`
	B     Compared      `json:"b"`
	Cells []CellCompare `json:"cells"`
}

// Compared names one side of a comparison.
type Compared struct {
	Dir      string `json:"dir"`
	Scenario string `json:"scenario"`
}

// CellCompare is one cell of A with B's figures; B is nil when B has no
// such cell.
type CellCompare struct {
	Cell string       `json:"cell"`
	A    CellSummary  `json:"a"`
	B    *CellSummary `json:"b,omitempty"`
}

// Compare puts two runs' summaries side by side: every cell of x, with
// y's where y has the cell.
func Compare(nameA, nameB string, x, y *Summary) Comparison {
	c := Comparison{A: Compared{nameA, x.Scenario}, B: Compared{nameB, y.Scenario}, Cells: []CellCompare{}}
	byName := map[string]CellSummary{}
	for _, cell := range y.Cells {
		byName[cell.Cell] = cell
	}
	for _, cell := range x.Cells {
		cc := CellCompare{Cell: cell.Cell, A: cell}
		if o, ok := byName[cell.Cell]; ok {
			cc.B = &o
		}
		c.Cells = append(c.Cells, cc)
	}
	return c
}

// WriteCompare puts two runs' summaries side by side, cell by cell: FCT
// p99, mean CCT, retransmissions needed and spurious, and RTOs of every
// cell of x, with y's where y has the cell.
func WriteCompare(w io.Writer, nameA, nameB string, x, y *Summary) {
	cmp := Compare(nameA, nameB, x, y)
	fmt.Fprintf(w, "A: %s (%s)\nB: %s (%s)\n\n", nameA, x.Scenario, nameB, y.Scenario)
	t := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(t, "CELL\tFCT p99 A\tFCT p99 B\tCCT A\tCCT B\tRETX A\tRETX B\tSPURIOUS A\tSPURIOUS B\tRTOs A\tRTOs B")
	d := func(ns float64) string {
		if ns == 0 {
			return "-"
		}
		return time.Duration(ns).Round(time.Microsecond).String()
	}
	for _, cc := range cmp.Cells {
		c, o := cc.A, cc.B
		if o == nil {
			fmt.Fprintf(t, "%s\t%s\t(not in B)\t%s\t\t%d\t\t%d\t\t%d\t\n", c.Cell, d(c.FCTP99), d(c.CCTMean), c.RetxNeeded, c.RetxSpurious, c.RTOs)
			continue
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\n", c.Cell, d(c.FCTP99), d(o.FCTP99), d(c.CCTMean), d(o.CCTMean),
			c.RetxNeeded, o.RetxNeeded, c.RetxSpurious, o.RetxSpurious, c.RTOs, o.RTOs)
	}
	_ = t.Flush()
}
