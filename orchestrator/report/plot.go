package report

// Plots of a results directory, drawn with gonum.org/v1/plot, the plotting
// library of the Gonum project: well kept, pure Go (no cgo, no external
// tools), and writes both PNG and SVG.

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/ftlab/ftlab/orchestrator/results"
	"github.com/ftlab/ftlab/switchd"
)

// The plots of a results directory: file name without extension and the
// caption report.md gives it.
var plotFiles = []struct{ name, caption string }{
	{"fct_cdf", "FCT CDF"},
	{"link_overload", "Link overload per direction"},
	{"queues", "Max backlog per direction"},
	{"retx", "RTOs and retransmissions"},
}

// plotFormats are the formats every plot is written in.
var plotFormats = []string{"png", "svg"}

const (
	plotWidth  = 8 * vg.Inch
	plotHeight = 4.5 * vg.Inch
)

// plotCells lists the summarized cells in the summary's order.
func plotCells(sum *Summary) []string {
	cells := make([]string, 0, len(sum.Cells))
	for _, c := range sum.Cells {
		cells = append(cells, c.Cell)
	}
	return cells
}

// writePlots draws the plots of plotFiles from the rows of the given cells
// (in that order) into dir, each as PNG and SVG. Like summary.json, the
// plots are computed from the rows only, so a fresh run and a later
// Report give the same plots. Missing data (no delivered message, no
// queue ever built up) gives an empty or flat plot, never an error.
func writePlots(dir string, cells []string, byCell map[string][]results.Rows) error {
	sums := make([]CellSummary, len(cells))
	for i, c := range cells {
		sums[i] = summarize(c, byCell[c])
	}
	plots := map[string]func() (*plot.Plot, error){
		"fct_cdf": func() (*plot.Plot, error) { return fctCDFPlot(cells, byCell) },
		"link_overload": func() (*plot.Plot, error) {
			return directionBarsPlot(sums, "Worst port's tx packets over the direction's mean (1.0 = balanced)",
				"max / mean tx packets", func(q DirectionQueue) float64 { return q.MaxTxShare }, true)
		},
		"queues": func() (*plot.Plot, error) {
			return directionBarsPlot(sums, "Max backlog per direction", "max backlog (KiB)",
				func(q DirectionQueue) float64 { return float64(q.MaxBacklog) / 1024 }, false)
		},
		"retx": func() (*plot.Plot, error) { return retxPlot(sums) },
	}
	var errs []error
	for _, f := range plotFiles {
		p, err := plots[f.name]()
		if err != nil {
			errs = append(errs, fmt.Errorf("plot %s: %w", f.name, err))
			continue
		}
		for _, ext := range plotFormats {
			file := filepath.Join(dir, f.name+"."+ext)
			if err := p.Save(plotWidth, plotHeight, file); err != nil {
				errs = append(errs, fmt.Errorf("plot %s: %w", file, err))
			}
		}
	}
	return errors.Join(errs...)
}

// writePlotLinks appends the plots section of report.md.
func writePlotLinks(w io.Writer) error {
	s := "\n## Plots\n\n"
	for _, f := range plotFiles {
		s += fmt.Sprintf("![%s](%s.png)\n\n", f.caption, f.name)
	}
	s += "Each plot is also written as SVG (same name, .svg).\n"
	_, err := io.WriteString(w, s)
	return err
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p
}

// fctCDFPlot draws the empirical CDF of the delivered messages' FCT, one
// line per cell.
func fctCDFPlot(cells []string, byCell map[string][]results.Rows) (*plot.Plot, error) {
	p := newPlot("FCT CDF", "FCT (ms)", "fraction of delivered messages")
	p.Y.Min, p.Y.Max = 0, 1
	drawn := false
	for i, c := range cells {
		var fcts []float64
		for _, r := range byCell[c] {
			for _, m := range r.Flows {
				if m.Delivered {
					fcts = append(fcts, float64(m.FCT)/1e6)
				}
			}
		}
		if len(fcts) == 0 {
			// Keep the cell in the legend, drawing nothing.
			l, err := plotter.NewLine(plotter.XYs{})
			if err != nil {
				return nil, err
			}
			l.Color, l.Dashes = plotutil.Color(i), plotutil.Dashes(i)
			p.Legend.Add(c+" (none delivered)", l)
			continue
		}
		drawn = true
		slices.Sort(fcts)
		// A staircase: at each FCT the fraction jumps by 1/n.
		n := float64(len(fcts))
		xys := make(plotter.XYs, 0, 2*len(fcts)+1)
		xys = append(xys, plotter.XY{X: fcts[0], Y: 0})
		for j, x := range fcts {
			xys = append(xys, plotter.XY{X: x, Y: float64(j) / n}, plotter.XY{X: x, Y: float64(j+1) / n})
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(c, l)
	}
	if !drawn {
		p.Title.Text += " (no delivered messages)"
		p.X.Min, p.X.Max = 0, 1
	}
	p.Legend.Top, p.Legend.Left = false, false
	return p, nil
}

// groupedBars adds one bar chart per cell to p, the cells' bars side by
// side in each of the groups; values[i][g] is cell i's value in group g.
func groupedBars(p *plot.Plot, cells []string, groups []string, values [][]float64) error {
	if len(groups) == 0 || len(cells) == 0 {
		p.Title.Text += " (no data)"
		p.HideX()
		return nil
	}
	// About 80% of the space of a group is bars.
	w := 0.8 * (plotWidth - vg.Inch) / vg.Length(len(groups)*len(cells))
	w = min(w, vg.Points(40))
	for i, c := range cells {
		b, err := plotter.NewBarChart(plotter.Values(values[i]), w)
		if err != nil {
			return err
		}
		b.Color = plotutil.Color(i)
		b.LineStyle.Width = vg.Points(0.5)
		b.Offset = vg.Length(float64(i)-float64(len(cells)-1)/2) * w
		p.Add(b)
		p.Legend.Add(c, b)
	}
	p.NominalX(groups...)
	p.X.Min, p.X.Max = -0.5, float64(len(groups))-0.5
	// Headroom for the legend.
	p.Y.Max *= 1.15
	return nil
}

// directionBarsPlot draws value(direction's queue summary) per direction
// (in path order) and cell. With balanced set, a dashed line marks 1.0.
func directionBarsPlot(sums []CellSummary, title, ylabel string, value func(DirectionQueue) float64, balanced bool) (*plot.Plot, error) {
	p := newPlot(title, "direction", ylabel)
	p.Y.Min = 0
	var dirs []string
	for _, s := range sums {
		for _, q := range s.Queues {
			if !slices.Contains(dirs, q.Direction) {
				dirs = append(dirs, q.Direction)
			}
		}
	}
	slices.SortStableFunc(dirs, func(a, b string) int { return switchd.DirectionRank(a) - switchd.DirectionRank(b) })
	cells := make([]string, len(sums))
	values := make([][]float64, len(sums))
	for i, s := range sums {
		cells[i] = s.Cell
		values[i] = make([]float64, len(dirs))
		for _, q := range s.Queues {
			values[i][slices.Index(dirs, q.Direction)] = value(q)
		}
	}
	if err := groupedBars(p, cells, dirs, values); err != nil {
		return nil, err
	}
	if balanced {
		f := plotter.NewFunction(func(float64) float64 { return 1 })
		f.Color = color.Gray{Y: 96}
		f.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(f)
		p.Y.Max = max(p.Y.Max, 1.1)
	}
	return p, nil
}

// retxPlot draws the RTOs, needed and spurious retransmissions of each
// cell, summed over its runs.
func retxPlot(sums []CellSummary) (*plot.Plot, error) {
	p := newPlot("RTOs and retransmissions (all runs of a cell)", "", "count")
	p.Y.Min = 0
	groups := []string{"RTOs", "retx needed", "retx spurious"}
	cells := make([]string, len(sums))
	values := make([][]float64, len(sums))
	for i, s := range sums {
		cells[i] = s.Cell
		values[i] = []float64{float64(s.RTOs), float64(s.RetxNeeded), float64(s.RetxSpurious)}
	}
	if err := groupedBars(p, cells, groups, values); err != nil {
		return nil, err
	}
	return p, nil
}
