package figure

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testFigure has a panel of each kind, one of them empty.
func testFigure() Figure {
	return Figure{Name: "fig", Title: "A test figure", Panels: []Panel{
		{Title: "FCT", X: "scheme", Y: "FCT (ms)", Kind: Distributions, LogY: true, Categories: []string{"no trimming", "trimming"},
			Series: []Series{
				{Name: "ecmp", Samples: [][]float64{{10, 12, 15, 40, 90}, {9, 11, 30}}},
				{Name: "rss+pfld", Samples: [][]float64{{8, 9, 10, 11}, {}}},
			}, Refs: []Ref{{Label: "ideal", Y: 7}}},
		{Title: "RTOs", X: "", Y: "RTOs", Kind: Bars, Categories: []string{"incast", "tornado"},
			Series: []Series{{Name: "ecmp", Values: []float64{40, 12}, Low: []float64{30, 10}, High: []float64{50, 14}}, {Name: "rss+pfld", Values: []float64{0, 1}}}},
		{Title: "share", X: "time (tau)", Y: "share", Kind: Lines, Series: []Series{{Name: "slow path", Points: []Point{{0, 0.25}, {5, 0.1}, {10, 0.07}}}},
			Refs: []Ref{{Label: "capacity share", Y: 0.0625}}, YMin: 0, YMax: 0.5},
		{Title: "nothing", Kind: Lines},
		{Title: "nothing on a log axis", Kind: Distributions, LogY: true, Categories: []string{"a"}, Series: []Series{{Name: "x", Samples: [][]float64{nil}}}},
	}}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	if d := os.Getenv("FIGURE_TEST_DIR"); d != "" {
		dir = d // to look at them
	}
	files, err := Write(dir, testFigure())
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || filepath.Base(files[0]) != "fig.png" || filepath.Base(files[1]) != "fig.svg" {
		t.Fatalf("files %v", files)
	}
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() < 1000 || b.Dy() < 600 {
		t.Errorf("png %v: two columns of two rows should be larger", b)
	}
	svg, err := os.ReadFile(files[1])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"A test figure", "FCT", "RTOs", "capacity share", "nothing (no data)", "nothing on a log axis (no data)", "no trimming"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("svg lacks %q", want)
		}
	}
}

func TestWriteRefusesEmpty(t *testing.T) {
	if _, err := Write(t.TempDir(), Figure{Name: "x"}); err == nil {
		t.Error("a figure without panels: no error")
	}
	if _, err := Write(t.TempDir(), Figure{Name: "x", Panels: []Panel{{Kind: "pie"}}}); err == nil {
		t.Error("an unknown kind: no error")
	}
}
