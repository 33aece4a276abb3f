package report

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// WriteCompare puts two runs' summaries side by side, cell by cell: FCT
// p99, mean CCT, retransmissions needed and spurious, and RTOs of every
// cell of x, with y's where y has the cell.
func WriteCompare(w io.Writer, nameA, nameB string, x, y *Summary) {
	fmt.Fprintf(w, "A: %s (%s)\nB: %s (%s)\n\n", nameA, x.Scenario, nameB, y.Scenario)
	t := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(t, "CELL\tFCT p99 A\tFCT p99 B\tCCT A\tCCT B\tRETX A\tRETX B\tSPURIOUS A\tSPURIOUS B\tRTOs A\tRTOs B")
	byName := map[string]CellSummary{}
	for _, c := range y.Cells {
		byName[c.Cell] = c
	}
	d := func(ns float64) string {
		if ns == 0 {
			return "-"
		}
		return time.Duration(ns).Round(time.Microsecond).String()
	}
	for _, c := range x.Cells {
		o, ok := byName[c.Cell]
		if !ok {
			fmt.Fprintf(t, "%s\t%s\t(not in B)\t%s\t\t%d\t\t%d\t\t%d\t\n", c.Cell, d(c.FCTP99), d(c.CCTMean), c.RetxNeeded, c.RetxSpurious, c.RTOs)
			continue
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\n", c.Cell, d(c.FCTP99), d(o.FCTP99), d(c.CCTMean), d(o.CCTMean),
			c.RetxNeeded, o.RetxNeeded, c.RetxSpurious, o.RetxSpurious, c.RTOs, o.RTOs)
	}
	_ = t.Flush()
}
