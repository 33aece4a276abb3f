package calibrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/orchestrator/fidelity"
)

// Files a calibration writes into its directory.
const (
	ResultFile = "calibration.json"
	ReportFile = "report.md"
)

// Calibrate runs Search, writes calibration.json and report.md into
// opt.Dir (also when the search fails: the trials made are kept), and
// puts a found rate into cache (when not nil).
func Calibrate(ctx context.Context, load Loader, opt Options, cache *Cache) (*Result, error) {
	if err := os.MkdirAll(opt.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("calibrate: %w", err)
	}
	res, err := Search(ctx, load, opt)
	if res == nil {
		return nil, err
	}
	werr := res.write(opt.Dir, err)
	if err == nil && cache != nil {
		err = cache.Put(res)
	}
	return res, errors.Join(err, werr)
}

func (r *Result) write(dir string, searchErr error) error {
	data, err := json.MarshalIndent(struct {
		*Result
		Error string `json:"error,omitempty"`
	}{r, errText(searchErr)}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, ResultFile), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, ReportFile))
	if err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	defer f.Close()
	return r.Markdown(f, searchErr)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Markdown writes the calibration as a report: the answer, the machine,
// and every trial with why it was not OK.
func (r *Result) Markdown(w io.Writer, searchErr error) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Calibration: %s\n\n", r.Scenario)
	if searchErr != nil {
		fmt.Fprintf(&b, "**No rate found**: %v\n\n", searchErr)
	} else {
		fmt.Fprintf(&b, "Highest full link rate with an OK fidelity verdict on this machine: **%s** "+
			"(the fastest link's rate; the others keep their ratio to it). Scenarios saying `rate: auto` run at it.\n\n",
			units.FormatRate(r.RateBps))
	}
	fmt.Fprintf(&b, "- scenario: %s\n- machine: %s\n- ftlab: %s\n- key: %s\n- precision: %.0f%% (the search stops when the lowest rate found not OK is within this of the highest OK rate)\n- time: %s to %s\n\n",
		r.File, r.Machine, r.Version, r.Key, r.Precision*100, r.Started.Format(time.RFC3339), r.Finished.Format(time.RFC3339))
	fmt.Fprintf(&b, "A trial runs every cell of the scenario once (its first seed) at one rate; it is OK when every run completes and every fidelity verdict is OK. The next trial aims at the rate that would keep %.0f%% of the cores busy, from the load of the last one (cores busy); after a trial that was not OK, at most its rate over how far it was past its worst limit (over). A WARN trial at or below a rate found OK before, while the hypervisor gave other guests %.0f%% of the cores or more (steal), is asked again at once, and the repeat's answer counts.\n\n", 100*AimBusy, 100*fidelity.DisturbedSteal)
	if st := r.Steal(); st >= fidelity.DisturbedSteal {
		fmt.Fprintf(&b, "The hypervisor took %.0f%% of the cores during this calibration: the rate found is what the machine gave then. Calibrate again (`ftlab bench calibrate --no-cache`, `ftlab run --recalibrate`) when it is quieter.\n\n", 100*st)
	}
	b.WriteString("| trial | rate | verdict | cores busy | steal | over | took | why not OK | results |\n|---:|---:|---|---:|---:|---:|---:|---|---|\n")
	for _, t := range r.Trials {
		v := string(t.Verdict)
		if v == "" {
			v = "-"
		}
		busy := "-"
		if t.Busy > 0 {
			busy = fmt.Sprintf("%.0f%%", 100*t.Busy)
		}
		over := "-"
		if t.Over > 0 {
			over = fmt.Sprintf("x%.2f", t.Over)
		}
		steal := "-"
		if t.Steal > 0 {
			steal = fmt.Sprintf("%.0f%%", 100*t.Steal)
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", t.N, units.FormatRate(t.RateBps), v, busy, steal, over,
			t.Elapsed.Round(100*time.Millisecond), strings.ReplaceAll(reasonsLine(t), "|", `\|`), filepath.Base(t.Dir))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
