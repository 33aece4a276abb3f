package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/ftlab/ftlab/orchestrator/runner"
)

// lineEvery is how often progress away from a terminal gets a line.
type lineEvery int

const (
	everyRun  lineEvery = iota // a line per finished run (ftlab run)
	everyCell                  // a line per finished cell (ftlab check: hundreds of runs)
)

// progress shows a scenario's progress on stderr: what to tell it, and
// how to finish it. On a terminal it is a bar redrawn in place; anywhere
// else (a log, a pipe, CI) a bar would leave every redraw in the file, so
// progress is a line per finished run or cell, with the verdicts and the
// time left.
func (a *app) progress(label string, every lineEvery) (func(runner.Progress), func()) {
	if !isTerminal(a.stderr) {
		l := &progressLines{w: a.stderr, label: label, every: every, cells: map[int]*cellTally{}}
		return l.tell, func() {}
	}
	var bar *progressbar.ProgressBar
	return func(p runner.Progress) {
			if bar == nil {
				bar = progressbar.NewOptions(p.Total, progressbar.OptionSetWriter(a.stderr),
					progressbar.OptionSetDescription(label), progressbar.OptionShowCount(),
					progressbar.OptionSetElapsedTime(true), progressbar.OptionSetPredictTime(true),
					progressbar.OptionSetWidth(30), progressbar.OptionClearOnFinish())
			}
			bar.Describe(fmt.Sprintf("%s: cell %d/%d %s run %d/%d: %s", label, p.Cell, p.Cells, p.CellName, p.Run, p.Runs, p.Status))
			_ = bar.Set(p.Done)
		}, func() {
			if bar != nil {
				_ = bar.Finish()
			}
		}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progressLines is progress as lines, for a stderr that is not a
// terminal.
type progressLines struct {
	w     io.Writer
	label string
	every lineEvery
	cells map[int]*cellTally
}

// cellTally counts a cell's finished runs by verdict, and its retries.
type cellTally struct {
	done, retried int
	verdicts      map[string]int
}

func (l *progressLines) tell(p runner.Progress) {
	switch p.Status {
	case "building", "running":
		return
	case "retrying":
		l.cell(p.Cell).retried++
		return
	}
	c := l.cell(p.Cell)
	c.done++
	c.verdicts[p.Verdict]++
	left := ""
	if p.Done > 0 && p.Done < p.Total {
		left = fmt.Sprintf(", about %v left", (p.Elapsed * time.Duration(p.Total-p.Done) / time.Duration(p.Done)).Round(time.Second))
	}
	switch {
	case l.every == everyRun:
		status := p.Status
		if p.Verdict != "" {
			status += ", " + p.Verdict
		}
		fmt.Fprintf(l.w, "%s: cell %d/%d %s run %d/%d: %s (%d/%d runs, %v%s)\n",
			l.label, p.Cell, p.Cells, p.CellName, p.Run, p.Runs, status, p.Done, p.Total, p.Elapsed.Round(time.Second), left)
	case c.done == p.Runs:
		fmt.Fprintf(l.w, "%s: cell %d/%d %s: %s (%d/%d runs, %v%s)\n",
			l.label, p.Cell, p.Cells, p.CellName, c.summary(), p.Done, p.Total, p.Elapsed.Round(time.Second), left)
	}
}

func (l *progressLines) cell(i int) *cellTally {
	c := l.cells[i]
	if c == nil {
		c = &cellTally{verdicts: map[string]int{}}
		l.cells[i] = c
	}
	return c
}

// summary is e.g. "16 runs: 15 OK, 1 WARN, 2 retried".
func (c *cellTally) summary() string {
	var parts []string
	for _, v := range []string{"OK", "WARN", "FAIL", ""} {
		if n := c.verdicts[v]; n > 0 {
			name := v
			if v == "" {
				name = "without a verdict"
			}
			parts = append(parts, fmt.Sprintf("%d %s", n, name))
		}
	}
	if c.retried > 0 {
		parts = append(parts, fmt.Sprintf("%d retried", c.retried))
	}
	runs := "runs"
	if c.done == 1 {
		runs = "run"
	}
	return fmt.Sprintf("%d %s: %s", c.done, runs, strings.Join(parts, ", "))
}
