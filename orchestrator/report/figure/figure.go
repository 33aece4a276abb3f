// Package figure draws figures that are given as data: panels of
// distributions (one box per series and category), bars (with a range
// per bar) or lines, with reference lines, written as PNG and SVG. Its
// callers (ftlab check's paper figures) build a Figure without importing
// the plotting library, which only the report side does; this package is
// that side for them.
package figure

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Figure is one figure: panels side by side in rows of Columns.
type Figure struct {
	// Name is the file name without extension: Write makes Name.png and
	// Name.svg.
	Name    string  `json:"name"`
	Title   string  `json:"title"`
	Columns int     `json:"columns,omitempty"` // panels per row; default 2 (1 for a single panel)
	Panels  []Panel `json:"panels"`
}

// Kind is how a panel draws its series.
type Kind string

// Panel kinds.
const (
	// Distributions: for each category, one box per series from its
	// samples: the box from the 25th to the 75th percentile, a line at
	// the median, a whisker from the smallest to the largest sample and a
	// dot at the 99th percentile (nearest rank, as every ftlab
	// percentile).
	Distributions Kind = "distributions"
	// Bars: for each category, one bar per series, with a range (Low to
	// High) drawn over it when given.
	Bars Kind = "bars"
	// Lines: each series is a line through its points.
	Lines Kind = "lines"
)

// Panel is one plot of a figure.
type Panel struct {
	Title string `json:"title"`
	X     string `json:"x"`
	Y     string `json:"y"`
	Kind  Kind   `json:"kind"`
	LogX  bool   `json:"log_x,omitempty"`
	LogY  bool   `json:"log_y,omitempty"`
	// Categories name the groups along x (Distributions and Bars).
	Categories []string `json:"categories,omitempty"`
	Series     []Series `json:"series"`
	// Refs are horizontal reference lines (a paper's value, a capacity
	// share, an ideal time).
	Refs []Ref `json:"refs,omitempty"`
	// YMin and YMax fix the y range when YMax > YMin.
	YMin float64 `json:"y_min,omitempty"`
	YMax float64 `json:"y_max,omitempty"`
}

// Series is one scheme (or case) of a panel.
type Series struct {
	Name string `json:"name"`
	// Samples, per category (Distributions).
	Samples [][]float64 `json:"samples,omitempty"`
	// Values, per category (Bars), and optionally the range of each
	// (e.g. the smallest and largest over seeds).
	Values []float64 `json:"values,omitempty"`
	Low    []float64 `json:"low,omitempty"`
	High   []float64 `json:"high,omitempty"`
	// Points (Lines).
	Points []Point `json:"points,omitempty"`
}

// Point is a point of a line.
type Point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// Ref is a horizontal reference line.
type Ref struct {
	Label string  `json:"label"`
	Y     float64 `json:"y"`
}

// Formats are the formats Write writes.
var Formats = []string{"png", "svg"}

const (
	panelWidth  = 6 * vg.Inch
	panelHeight = 3.6 * vg.Inch
)

// Write draws f into dir as Name.png and Name.svg and returns their
// paths. Empty panels (nothing measured) are drawn with "(no data)" in
// their title rather than failing.
func Write(dir string, f Figure) (files []string, err error) {
	// The plotting library panics on data it cannot scale; a figure that
	// cannot be drawn is an error of its own, not the end of the caller.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("figure %s: %v", f.Name, r)
		}
	}()
	if f.Name == "" || len(f.Panels) == 0 {
		return nil, errors.New("figure: a figure needs a name and a panel")
	}
	cols := f.Columns
	if cols <= 0 {
		cols = min(2, len(f.Panels))
	}
	rows := (len(f.Panels) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, cols)
	}
	for i, p := range f.Panels {
		pl, err := draw1(p)
		if err != nil {
			return nil, fmt.Errorf("figure %s, panel %q: %w", f.Name, p.Title, err)
		}
		grid[i/cols][i%cols] = pl
	}
	title := vg.Length(0)
	if f.Title != "" {
		title = 0.4 * vg.Inch
	}
	w, h := panelWidth*vg.Length(cols), panelHeight*vg.Length(rows)+title
	render := func(c vg.CanvasSizer) {
		dc := draw.New(c)
		if f.Title != "" {
			sty := draw.TextStyle{Color: color.Black, Font: plot.DefaultFont, XAlign: draw.XCenter, YAlign: draw.YTop}
			sty.Font.Size = vg.Points(13)
			sty.Font.Variant = "Sans"
			sty.Handler = plot.DefaultTextHandler
			dc.FillText(sty, vg.Point{X: w / 2, Y: h - vg.Points(6)}, f.Title)
			dc = draw.Crop(dc, 0, 0, 0, -title)
		}
		tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(6), PadY: vg.Points(8)}
		canvases := plot.Align(grid, tiles, dc)
		for r := range grid {
			for c := range grid[r] {
				if grid[r][c] != nil {
					grid[r][c].Draw(canvases[r][c])
				}
			}
		}
	}
	var errs []error
	save := func(ext string, wr io.WriterTo) {
		file := filepath.Join(dir, f.Name+"."+ext)
		out, err := os.Create(file)
		if err == nil {
			_, err = wr.WriteTo(out)
			err = errors.Join(err, out.Close())
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("figure %s: %w", file, err))
			return
		}
		files = append(files, file)
	}
	img := vgimg.New(w, h)
	render(img)
	save("png", vgimg.PngCanvas{Canvas: img})
	svg := vgsvg.New(w, h)
	render(svg)
	save("svg", svg)
	return files, errors.Join(errs...)
}

// draw1 builds one panel's plot.
func draw1(p Panel) (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text = p.Title
	pl.X.Label.Text = p.X
	pl.Y.Label.Text = p.Y
	pl.Add(plotter.NewGrid())
	pl.Legend.Top = true
	var err error
	var any bool
	switch p.Kind {
	case Distributions:
		any, err = distributions(pl, p)
	case Bars:
		any, err = bars(pl, p)
	case Lines:
		any, err = lines(pl, p)
	default:
		return nil, fmt.Errorf("unknown panel kind %q", p.Kind)
	}
	if err != nil {
		return nil, err
	}
	if !any {
		pl.Title.Text += " (no data)"
	}
	for i, r := range p.Refs {
		y := r.Y
		f := plotter.NewFunction(func(float64) float64 { return y })
		f.Color = color.Gray{Y: uint8(60 + 40*(i%3))}
		f.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		f.Width = vg.Points(1)
		pl.Add(f)
		pl.Legend.Add(r.Label, f)
		if any {
			pl.Y.Max = max(pl.Y.Max, y*1.05)
			pl.Y.Min = min(pl.Y.Min, y*0.95)
		}
	}
	if !any {
		p.LogX, p.LogY = false, false // an empty log axis has no range
	}
	if p.LogY {
		if pl.Y.Min <= 0 {
			pl.Y.Min = positiveMin(p)
		}
		pl.Y.Scale = plot.LogScale{}
		pl.Y.Tick.Marker = logTicks{}
	}
	if p.LogX {
		pl.X.Scale = plot.LogScale{}
		pl.X.Tick.Marker = logTicks{}
	}
	if p.YMax > p.YMin {
		pl.Y.Min, pl.Y.Max = p.YMin, p.YMax
	}
	if !any {
		pl.X.Min, pl.X.Max = 0, 1
		pl.Y.Min, pl.Y.Max = 0, 1
	}
	return pl, nil
}

// positiveMin is the smallest positive value a panel shows, for a log
// axis (1 when there is none).
func positiveMin(p Panel) float64 {
	m := math.Inf(1)
	take := func(v float64) {
		if v > 0 && v < m {
			m = v
		}
	}
	for _, s := range p.Series {
		for _, c := range s.Samples {
			for _, v := range c {
				take(v)
			}
		}
		for _, v := range s.Values {
			take(v)
		}
		for _, v := range s.Low {
			take(v)
		}
		for _, pt := range s.Points {
			take(pt.Y)
		}
	}
	for _, r := range p.Refs {
		take(r.Y)
	}
	if math.IsInf(m, 1) {
		return 1
	}
	return m / 1.5
}

// slot is where series j of n sits within a category: offsets in
// category units, the category's boxes taking 80% of its width.
func slot(j, n int) (offset, width float64) {
	width = 0.8 / float64(n)
	return -0.4 + width*(float64(j)+0.5), width
}

// quantile is the nearest-rank percentile of sorted samples.
func quantile(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func distributions(pl *plot.Plot, p Panel) (bool, error) {
	any := false
	for j, s := range p.Series {
		off, w := slot(j, len(p.Series))
		col := plotutil.Color(j)
		var legend plot.Thumbnailer
		for i, smp := range s.Samples {
			if len(smp) == 0 {
				continue
			}
			any = true
			v := slices.Sorted(slices.Values(smp))
			x := float64(i) + off
			lo, q1, med, q3, p99, hi := v[0], quantile(v, 0.25), quantile(v, 0.5), quantile(v, 0.75), quantile(v, 0.99), v[len(v)-1]
			box, err := plotter.NewPolygon(plotter.XYs{{X: x - w*0.4, Y: q1}, {X: x + w*0.4, Y: q1}, {X: x + w*0.4, Y: q3}, {X: x - w*0.4, Y: q3}})
			if err != nil {
				return false, err
			}
			box.Color = lighter(col)
			box.LineStyle.Color = col
			box.LineStyle.Width = vg.Points(1)
			whisker, err := plotter.NewLine(plotter.XYs{{X: x, Y: lo}, {X: x, Y: hi}})
			if err != nil {
				return false, err
			}
			whisker.Color, whisker.Width = col, vg.Points(1)
			median, err := plotter.NewLine(plotter.XYs{{X: x - w*0.4, Y: med}, {X: x + w*0.4, Y: med}})
			if err != nil {
				return false, err
			}
			median.Color, median.Width = color.Black, vg.Points(1.5)
			dot, err := plotter.NewScatter(plotter.XYs{{X: x, Y: p99}})
			if err != nil {
				return false, err
			}
			dot.Color, dot.Shape, dot.Radius = color.Black, draw.CircleGlyph{}, vg.Points(2.5)
			pl.Add(whisker, box, median, dot)
			legend = box
		}
		if legend != nil {
			pl.Legend.Add(s.Name, legend)
		}
	}
	nominal(pl, p.Categories)
	return any, nil
}

func bars(pl *plot.Plot, p Panel) (bool, error) {
	any := false
	for j, s := range p.Series {
		off, w := slot(j, len(p.Series))
		col := plotutil.Color(j)
		var legend plot.Thumbnailer
		for i, v := range s.Values {
			if math.IsNaN(v) {
				continue
			}
			any = true
			x := float64(i) + off
			base := 0.0
			if p.LogY {
				base = positiveMin(p)
			}
			bar, err := plotter.NewPolygon(plotter.XYs{{X: x - w*0.45, Y: base}, {X: x + w*0.45, Y: base}, {X: x + w*0.45, Y: max(v, base)}, {X: x - w*0.45, Y: max(v, base)}})
			if err != nil {
				return false, err
			}
			bar.Color = col
			bar.LineStyle.Width = vg.Points(0.5)
			pl.Add(bar)
			legend = bar
			if i < len(s.Low) && i < len(s.High) && s.High[i] > s.Low[i] {
				rng, err := plotter.NewLine(plotter.XYs{{X: x, Y: s.Low[i]}, {X: x, Y: s.High[i]}})
				if err != nil {
					return false, err
				}
				rng.Color, rng.Width = color.Black, vg.Points(1)
				pl.Add(rng)
			}
		}
		if legend != nil {
			pl.Legend.Add(s.Name, legend)
		}
	}
	if any && !p.LogY {
		pl.Y.Min = 0
		pl.Y.Max *= 1.15 // the legend's room
	}
	nominal(pl, p.Categories)
	return any, nil
}

func lines(pl *plot.Plot, p Panel) (bool, error) {
	any := false
	for j, s := range p.Series {
		if len(s.Points) == 0 {
			continue
		}
		any = true
		xys := make(plotter.XYs, len(s.Points))
		for i, pt := range s.Points {
			xys[i] = plotter.XY{X: pt.X, Y: pt.Y}
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return false, err
		}
		l.Color, l.Dashes, l.Width = plotutil.Color(j), plotutil.Dashes(j), vg.Points(1.5)
		pts.Color, pts.Shape = plotutil.Color(j), plotutil.Shape(j)
		if len(xys) > 40 { // a dense series reads better as a line alone
			pts.Radius = 0
		}
		pl.Add(l, pts)
		pl.Legend.Add(s.Name, l, pts)
	}
	return any, nil
}

// nominal names the categories along x.
func nominal(pl *plot.Plot, cats []string) {
	if len(cats) == 0 {
		return
	}
	pl.NominalX(cats...)
	pl.X.Min, pl.X.Max = -0.5, float64(len(cats))-0.5
}

// lighter is c at a third of its strength, for box fills.
func lighter(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8((v>>8)/3 + 2*255/3) }
	return color.RGBA{R: mix(r), G: mix(g), B: mix(b), A: 255}
}

// logTicks labels a log axis at 1, 2 and 5 times each power of ten (plot's
// LogTicks labels powers of ten only, which a range within one decade
// never shows).
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	if lo <= 0 || hi <= lo {
		return nil
	}
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		p := math.Pow(10, e)
		for m := 1; m < 10; m++ {
			v := float64(m) * p
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'g', 4, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}
