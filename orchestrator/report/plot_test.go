package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ftlab/ftlab/orchestrator/results"
)

func checkPlotFiles(t *testing.T, dir string) {
	t.Helper()
	png := []byte("\x89PNG\r\n\x1a\n")
	for _, f := range plotFiles {
		for _, ext := range plotFormats {
			name := filepath.Join(dir, f.name+"."+ext)
			data, err := os.ReadFile(name)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if len(data) == 0 {
				t.Errorf("%s is empty", name)
			}
			switch ext {
			case "png":
				if !bytes.HasPrefix(data, png) {
					t.Errorf("%s does not start with the PNG signature", name)
				}
			case "svg":
				if !bytes.Contains(data, []byte("<svg")) {
					t.Errorf("%s has no <svg", name)
				}
			}
		}
	}
}

func TestPlotsTwoCells(t *testing.T) {
	link := func(cell, dir string, port int, tx, backlog uint64) results.LinkRow {
		return results.LinkRow{Cell: cell, Switch: "s1", Port: port, Direction: dir, TxPackets: tx, MaxBacklog: backlog}
	}
	flow := func(cell string, id int, fct time.Duration, delivered bool) results.FlowRow {
		return results.FlowRow{Cell: cell, ID: id, FCT: fct, Delivered: delivered, RetxNeeded: id % 2, RTOs: id % 3, RetxSpurious: 1}
	}
	byCell := map[string][]results.Rows{
		"spray": {{
			Status: results.StatusComplete,
			Flows:  []results.FlowRow{flow("spray", 1, 3*time.Millisecond, true), flow("spray", 2, 1500*time.Microsecond, true), flow("spray", 3, 0, false)},
			Links: []results.LinkRow{link("spray", "E->A", 1, 100, 3000), link("spray", "E->A", 2, 300, 60000),
				link("spray", "A->C", 1, 200, 0), link("spray", "C->A", 1, 50, 1024), link("spray", "A->E", 1, 70, 4096)},
		}, {
			Status: results.StatusComplete,
			Flows:  []results.FlowRow{flow("spray", 1, 2*time.Millisecond, true)},
			Links:  []results.LinkRow{link("spray", "E->A", 1, 120, 2000), link("spray", "E->A", 2, 110, 1000)},
		}},
		// Line-rate, nothing delivered: no queues, no FCTs.
		"ecmp": {{
			Status: "failed",
			Flows:  []results.FlowRow{flow("ecmp", 1, 0, false)},
			Links:  []results.LinkRow{link("ecmp", "A->C", 1, 0, 0), link("ecmp", "E->A", 1, 0, 0)},
		}},
	}
	dir := t.TempDir()
	if err := writePlots(dir, []string{"spray", "ecmp"}, byCell); err != nil {
		t.Fatal(err)
	}
	checkPlotFiles(t, dir)
}

func TestPlotsEmpty(t *testing.T) {
	for name, cells := range map[string][]string{"no cells": nil, "cell without runs": {"idle"}} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := writePlots(dir, cells, map[string][]results.Rows{}); err != nil {
				t.Fatal(err)
			}
			checkPlotFiles(t, dir)
		})
	}
}

func TestPlotLinks(t *testing.T) {
	var b strings.Builder
	if err := writePlotLinks(&b); err != nil {
		t.Fatal(err)
	}
	for _, f := range plotFiles {
		if want := "](" + f.name + ".png)"; !strings.Contains(b.String(), want) {
			t.Errorf("report plot section lacks %q:\n%s", want, b.String())
		}
	}
	if !strings.Contains(b.String(), "![FCT CDF](fct_cdf.png)") {
		t.Errorf("no FCT CDF link:\n%s", b.String())
	}
}
