package report

// The paths plot (Ordered Chaos, Fig. 1A): for RSS over ECMP edges, the
// share of a cell's active subflows on each first-hop uplink over time.

import (
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/ftlab/ftlab/orchestrator/results"
	"github.com/ftlab/ftlab/orchestrator/scenario"
	"github.com/ftlab/ftlab/switchd"
)

// PathsPlot is the paths plot's file name without extension.
const PathsPlot = "paths"

// pathsCellHeight is the height of one cell's panel.
const pathsCellHeight = 3.5 * vg.Inch

// writePathsLink appends the paths plot's link to report.md, or the
// reason it was not drawn.
func writePathsLink(w io.Writer, cells []string) error {
	var s string
	if len(cells) == 0 {
		s = "\nNo paths plot: no cell runs ECMP at the edge with an RSS-family transport (rss, rss+pfld, rss+rack), " +
			"the only case where a subflow's EV decides its path.\n"
	} else {
		s = fmt.Sprintf("\n![Share of active subflows per first-hop uplink over time, repetition 0 (%s)](%s.png)\n\n"+
			"Paths are the ECMP choices of the source edge switches with every link up, computed from each subflow's EV "+
			"(subflows.csv); a subflow counts as active from its first EV on. Also as %s.svg.\n",
			strings.Join(cells, "; "), PathsPlot, PathsPlot)
	}
	_, err := io.WriteString(w, s)
	return err
}

// subflowKey identifies one subflow of a run.
type subflowKey struct {
	host, peer string
	flow       uint32
	subflow    int
}

// pathShares computes, for one run's subflow rows, the share of active
// subflows on each uplink as step lines (one per uplink, x in ms) and the
// number of subflows counted. Rows without an uplink (not going up, or not
// an ECMP edge) are left out.
func pathShares(rows []results.SubflowRow) (lines []plotter.XYs, subflows int) {
	uplinks := 0
	var evs []results.SubflowRow
	for _, r := range rows {
		if r.Uplink >= 0 {
			evs = append(evs, r)
			uplinks = max(uplinks, r.Uplinks, r.Uplink+1)
		}
	}
	if len(evs) == 0 {
		return nil, 0
	}
	slices.SortStableFunc(evs, func(a, b results.SubflowRow) int { return cmp.Compare(a.At, b.At) })
	on := map[subflowKey]int{} // current uplink of each subflow
	count := make([]int, uplinks)
	lines = make([]plotter.XYs, uplinks)
	share := func(u int) float64 { return float64(count[u]) / float64(len(on)) }
	ms := func(r results.SubflowRow) float64 { return float64(r.At) / 1e6 }
	for i := 0; i < len(evs); {
		// Apply every change at this instant, then step.
		t := evs[i].At
		before := make([]float64, uplinks)
		for u := range before {
			if len(on) > 0 {
				before[u] = share(u)
			}
		}
		for ; i < len(evs) && evs[i].At == t; i++ {
			r := evs[i]
			k := subflowKey{r.Host, r.Peer, r.Flow, r.Subflow}
			if u, ok := on[k]; ok {
				count[u]--
			}
			on[k] = r.Uplink
			count[r.Uplink]++
		}
		x := ms(evs[i-1])
		for u := range lines {
			if len(lines[u]) > 0 {
				lines[u] = append(lines[u], plotter.XY{X: x, Y: before[u]})
			}
			lines[u] = append(lines[u], plotter.XY{X: x, Y: share(u)})
		}
	}
	// Hold the last shares a little past the last change.
	first, last := ms(evs[0]), ms(evs[len(evs)-1])
	end := last + max((last-first)*0.05, 1)
	for u := range lines {
		lines[u] = append(lines[u], plotter.XY{X: end, Y: share(u)})
	}
	return lines, len(on)
}

// pathsPanel draws one cell's panel from its first repetition's rows.
func pathsPanel(cell string, rows []results.SubflowRow) (*plot.Plot, error) {
	rep := -1
	for _, r := range rows {
		if rep < 0 || r.Repetition < rep {
			rep = r.Repetition
		}
	}
	var first []results.SubflowRow
	for _, r := range rows {
		if r.Repetition == rep {
			first = append(first, r)
		}
	}
	lines, n := pathShares(first)
	p := newPlot(fmt.Sprintf("%s: repetition %d, %d subflows", cell, max(rep, 0), n), "time since run start (ms)",
		"share of active subflows")
	p.Y.Min, p.Y.Max = 0, 1
	if n == 0 {
		p.Title.Text = cell + ": no subflows on ECMP uplinks"
		p.X.Min, p.X.Max = 0, 1
		return p, nil
	}
	for u, xys := range lines {
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		l.Color, l.Dashes, l.Width = plotutil.Color(u), plotutil.Dashes(u), vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("uplink %d", u), l)
	}
	// The even share.
	even := 1 / float64(len(lines))
	f := plotter.NewFunction(func(float64) float64 { return even })
	f.Color = color.Gray{Y: 96}
	f.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(f)
	p.Legend.Top, p.Legend.Left = true, false
	return p, nil
}

// writePathsPlot writes paths.png and paths.svg, one panel per cell (in
// the given order) from the cell's subflow rows; with no cells it writes
// nothing.
func writePathsPlot(dir string, cells []string, rows map[string][]results.SubflowRow) error {
	if len(cells) == 0 {
		return nil
	}
	panels := make([][]*plot.Plot, len(cells))
	for i, c := range cells {
		p, err := pathsPanel(c, rows[c])
		if err != nil {
			return fmt.Errorf("plot %s: %w", PathsPlot, err)
		}
		panels[i] = []*plot.Plot{p}
	}
	h := pathsCellHeight * vg.Length(len(cells))
	render := func(c vg.CanvasSizer) {
		dc := draw.New(c)
		tiles := draw.Tiles{Rows: len(cells), Cols: 1, PadY: vg.Points(8)}
		canvases := plot.Align(panels, tiles, dc)
		for i := range panels {
			panels[i][0].Draw(canvases[i][0])
		}
	}
	var errs []error
	save := func(ext string, w io.WriterTo) {
		file := filepath.Join(dir, PathsPlot+"."+ext)
		f, err := os.Create(file)
		if err == nil {
			_, err = w.WriteTo(f)
			err = errors.Join(err, f.Close())
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("plot %s: %w", file, err))
		}
	}
	img := vgimg.New(plotWidth, h)
	render(img)
	save("png", vgimg.PngCanvas{Canvas: img})
	svg := vgsvg.New(plotWidth, h)
	render(svg)
	save("svg", svg)
	return errors.Join(errs...)
}

// rssFamily reports whether a cell's transport is RSS or one of its
// variants: one that reads the rss block.
func rssFamily(cfg *scenario.Config) bool { return cfg.RSS != nil }

// pathCells lists the summarized cells (in the summary's order) whose
// paths plot is drawn: ECMP at the edge and an RSS-family transport, where
// a subflow's EV alone decides its first hop.
func pathCells(meta *results.Meta, sum *Summary) []string {
	if meta == nil || meta.Scenario == nil || sum == nil {
		return nil
	}
	cfgs := map[string]*scenario.Config{}
	for _, c := range meta.Scenario.Cells {
		cfgs[c.Name] = c.Config
	}
	var out []string
	for _, c := range plotCells(sum) {
		cfg := cfgs[c]
		if cfg != nil && rssFamily(cfg) && cfg.Policy.Edge() == switchd.ECMP {
			out = append(out, c)
		}
	}
	return out
}
