// Package bench measures ftlab against baselines taken in the same run:
// fabric setup and teardown, and `ftlab up`/`down` with the data plane,
// against bare namespaces and veths, the data
// plane's forwarding rate per core against kernel IP forwarding, the host
// agent's packet rate per core against a bare UDP loop, and memory per lab
// and per flow. Every figure is a Row: value, baseline, ratio.
//
// Everything a run creates lives under a fresh namespace prefix
// ("ftbench" + 8 hex digits + "-") and is removed when the run ends, also
// on error or cancellation.
package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ftlab/ftlab/hostagent/cc"

	"github.com/ftlab/ftlab/internal/bpffs"
	"github.com/ftlab/ftlab/internal/machine"
	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/stats"
)

// Sections in the order "all" runs them.
var Sections = []string{"fabric", "setup", "dataplane", "agent", "memory"}

// Options select sizes and durations.
type Options struct {
	// K lists fat-tree sizes for the fabric section (default 4, 8, 16).
	K []int
	// Quick shortens every measurement (k=4 only, one repetition, short
	// windows) for smoke tests.
	Quick bool
	// Repetitions is how many times the memory section measures each
	// figure; it reports the median with the min and max. 0 means the
	// default: DefaultRepetitions, or 1 with Quick.
	Repetitions int
	// CC lists the congestion controls the agent section measures
	// against cc none (default: every one).
	CC []string
	// Log, if set, receives progress lines.
	Log io.Writer
}

// ccs returns the congestion controls the options ask for.
func (o Options) ccs() []string {
	if len(o.CC) == 0 {
		return cc.Names()
	}
	return o.CC
}

// DefaultRepetitions is the memory section's repetition count unless
// Options.Repetitions or Quick says otherwise.
const DefaultRepetitions = 3

// repetitions is the number of repetitions the options ask for.
func (o Options) repetitions() int {
	switch {
	case o.Repetitions > 0:
		return o.Repetitions
	case o.Quick:
		return 1
	default:
		return DefaultRepetitions
	}
}

func (o Options) logf(format string, args ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, format+"\n", args...)
	}
}

// Row is one figure against its baseline. Ratio is Value / Baseline.
type Row struct {
	Figure   string  `json:"figure"`
	Value    float64 `json:"value"`
	Baseline float64 `json:"baseline"`
	Unit     string  `json:"unit"`
	// BaselineName says what the baseline is.
	BaselineName string  `json:"baseline_name"`
	Ratio        float64 `json:"ratio"`
	Note         string  `json:"note,omitempty"`
	// Spread, set for figures measured more than once (even if only once
	// in a quick run), says how they varied; Value and Baseline are then
	// the medians and Ratio is Value / Baseline of the medians.
	Spread *Spread `json:"spread,omitempty"`
}

// Spread summarises repeated measurements of one figure.
type Spread struct {
	// N is the number of measurements.
	N int `json:"n"`
	// Min and Max bound the measured values; BaselineMin and BaselineMax
	// the baselines; RatioMin and RatioMax the ratio of each
	// measurement to the baseline taken in the same repetition.
	Min         float64 `json:"min"`
	Max         float64 `json:"max"`
	BaselineMin float64 `json:"baseline_min"`
	BaselineMax float64 `json:"baseline_max"`
	RatioMin    float64 `json:"ratio_min"`
	RatioMax    float64 `json:"ratio_max"`
	// Rel is (Max - Min) / |median value|, 0 when the median is 0: the
	// relative spread of the value.
	Rel float64 `json:"rel"`
}

// rowOf makes a Row from repeated measurements: values[i] and
// baselines[i] were taken in the same repetition. It panics if the slices
// are empty or of different lengths.
func rowOf(figure, unit string, values, baselines []float64, baseName string) Row {
	if len(values) == 0 || len(values) != len(baselines) {
		panic(fmt.Sprintf("bench: rowOf %q: %d values, %d baselines", figure, len(values), len(baselines)))
	}
	r := row(figure, unit, stats.Median(values), stats.Median(baselines), baseName)
	sp := &Spread{N: len(values),
		Min: slices.Min(values), Max: slices.Max(values),
		BaselineMin: slices.Min(baselines), BaselineMax: slices.Max(baselines)}
	ratios := make([]float64, 0, len(values))
	for i, v := range values {
		if baselines[i] != 0 {
			ratios = append(ratios, v/baselines[i])
		}
	}
	if len(ratios) > 0 {
		sp.RatioMin, sp.RatioMax = slices.Min(ratios), slices.Max(ratios)
	}
	if r.Value != 0 {
		sp.Rel = (sp.Max - sp.Min) / math.Abs(r.Value)
	}
	r.Spread = sp
	return r
}

// hasSpread reports whether any row of s carries a Spread.
func (s Section) hasSpread() bool {
	return slices.ContainsFunc(s.Rows, func(r Row) bool { return r.Spread != nil })
}

// spreadCells renders a row's spread as "n", "min–max unit" and "±rel %"
// cells ("", "", "" without one).
func (x Row) spreadCells() (n, rng, rel string) {
	if x.Spread == nil {
		return "", "", ""
	}
	sp := x.Spread
	return fmt.Sprint(sp.N), fmt.Sprintf("%s–%s %s", num(sp.Min), num(sp.Max), x.Unit), fmt.Sprintf("%.1f %%", 100*sp.Rel)
}

func row(figure, unit string, value, baseline float64, baseName string) Row {
	r := Row{Figure: figure, Unit: unit, Value: value, Baseline: baseline, BaselineName: baseName}
	if baseline != 0 {
		r.Ratio = value / baseline
	}
	return r
}

// Section is one part of a report.
type Section struct {
	Name   string `json:"name"`
	Method string `json:"method"`
	Rows   []Row  `json:"rows"`
}

// Machine describes where the report was made.
type Machine struct {
	machine.Info
	Go   string    `json:"go"`
	Date time.Time `json:"date"`
}

// Report is a whole run.
type Report struct {
	Machine  Machine   `json:"machine"`
	Quick    bool      `json:"quick"`
	Sections []Section `json:"sections"`
}

// MachineInfo describes this machine, the Go release and the time.
func MachineInfo() Machine {
	return Machine{Info: machine.Read(), Go: runtime.Version(), Date: time.Now().UTC().Truncate(time.Second)}
}

// Run runs the named sections ("all" for every one) and returns the report.
// A section that fails ends the run with its error; the sections already
// measured are returned with it.
func Run(ctx context.Context, names []string, opt Options) (*Report, error) {
	rep := &Report{Machine: MachineInfo(), Quick: opt.Quick}
	var want []string
	for _, n := range names {
		if n == "all" {
			want = append(want, Sections...)
		} else {
			want = append(want, n)
		}
	}
	for _, n := range want {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		var s *Section
		var err error
		opt.logf("bench: %s", n)
		switch n {
		case "fabric":
			s, err = Fabric(ctx, opt)
		case "setup":
			s, err = Setup(ctx, opt)
		case "dataplane":
			s, err = Dataplane(ctx, opt)
		case "agent":
			s, err = Agent(ctx, opt)
		case "memory":
			s, err = Memory(ctx, opt)
		default:
			return rep, fmt.Errorf("unknown section %q (want %s or all)", n, strings.Join(Sections, ", "))
		}
		if s != nil {
			rep.Sections = append(rep.Sections, *s)
		}
		if err != nil {
			return rep, fmt.Errorf("%s: %w", n, err)
		}
	}
	return rep, nil
}

// Markdown writes the report as markdown: machine info, then a table per
// section.
func (r *Report) Markdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# ftlab bench\n\n")
	fmt.Fprintf(&b, "- Machine: %s\n- Go: %s\n- Date: %s\n", r.Machine.Info, r.Machine.Go, r.Machine.Date.Format(time.RFC3339))
	if r.Quick {
		fmt.Fprintf(&b, "- Mode: quick (short windows, k=4 only; indicative only)\n")
	}
	for _, s := range r.Sections {
		fmt.Fprintf(&b, "\n## %s\n\n%s\n\n", s.Name, s.Method)
		if !s.hasSpread() {
			fmt.Fprintf(&b, "| figure | value | baseline | ratio |\n|---|---:|---:|---:|\n")
			for _, x := range s.Rows {
				fmt.Fprintf(&b, "| %s | %s %s | %s %s (%s) | %.4g |\n", x.Figure, num(x.Value), x.Unit, num(x.Baseline), x.Unit, x.BaselineName, x.Ratio)
			}
			continue
		}
		fmt.Fprintf(&b, "| figure | value | baseline | ratio | n | value min–max | spread |\n|---|---:|---:|---:|---:|---:|---:|\n")
		for _, x := range s.Rows {
			n, rng, rel := x.spreadCells()
			fmt.Fprintf(&b, "| %s | %s %s | %s %s (%s) | %.4g | %s | %s | %s |\n", x.Figure, num(x.Value), x.Unit, num(x.Baseline), x.Unit, x.BaselineName, x.Ratio, n, rng, rel)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Text writes the report as aligned plain-text tables.
func (r *Report) Text(w io.Writer) error {
	fmt.Fprintf(w, "ftlab bench: %s, %d cores, kernel %s, %s, %s\n", r.Machine.CPU, r.Machine.Cores, r.Machine.Kernel, r.Machine.Go, r.Machine.Date.Format(time.RFC3339))
	for _, s := range r.Sections {
		fmt.Fprintf(w, "\n[%s] %s\n", s.Name, s.Method)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		spread := s.hasSpread()
		if spread {
			fmt.Fprintln(tw, "FIGURE\tVALUE\tBASELINE\tRATIO\tN\tVALUE MIN–MAX\tSPREAD")
		} else {
			fmt.Fprintln(tw, "FIGURE\tVALUE\tBASELINE\tRATIO")
		}
		for _, x := range s.Rows {
			fmt.Fprintf(tw, "%s\t%s %s\t%s %s (%s)\t%.4g", x.Figure, num(x.Value), x.Unit, num(x.Baseline), x.Unit, x.BaselineName, x.Ratio)
			if spread {
				n, rng, rel := x.spreadCells()
				fmt.Fprintf(tw, "\t%s\t%s\t%s", n, rng, rel)
			}
			fmt.Fprintln(tw)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

func num(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v >= 1e6 || v < 1e-3 && v > -1e-3:
		return fmt.Sprintf("%.4g", v)
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.4g", v)
	}
}

// ---- object lifetime ----

// scope owns the objects of one measurement: a namespace prefix and bpffs
// mounts. close removes them all.
type scope struct {
	prefix string
	mounts []string
	dirs   []string
}

// scopeHook, if set (by tests), is told of every new scope so that a test
// can remove what a measurement left even if it failed half-way.
var scopeHook func(*scope)

func newScope() (*scope, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	s := &scope{prefix: "ftbench" + hex.EncodeToString(b[:]) + "-"}
	if scopeHook != nil {
		scopeHook(s)
	}
	return s, nil
}

// Prefix is the scope's namespace prefix.
func (s *scope) Prefix() string { return s.prefix }

func (s *scope) name(node string) string { return s.prefix + node }

// pinRoot mounts a private bpffs for an eBPF data plane.
func (s *scope) pinRoot() (string, error) {
	dir, err := os.MkdirTemp("", "ftbench-bpf-")
	if err != nil {
		return "", err
	}
	s.dirs = append(s.dirs, dir)
	if err := bpffs.Mount(dir); err != nil {
		return "", err
	}
	s.mounts = append(s.mounts, dir)
	return dir, nil
}

// close removes every namespace under the prefix, unmounts the bpffs
// mounts and removes their directories.
func (s *scope) close() error {
	var errs []error
	errs = append(errs, RemovePrefix(s.prefix))
	for _, m := range s.mounts {
		errs = append(errs, bpffs.Unmount(m))
	}
	for _, d := range s.dirs {
		errs = append(errs, os.RemoveAll(d))
	}
	s.mounts, s.dirs = nil, nil
	return errors.Join(errs...)
}

// RemovePrefix deletes every network namespace whose name starts with
// prefix.
func RemovePrefix(prefix string) error {
	left, err := nsutil.List(prefix)
	if err != nil {
		return err
	}
	var errs []error
	for _, ns := range left {
		errs = append(errs, nsutil.Delete(ns))
	}
	return errors.Join(errs...)
}

// Leftovers lists namespaces of any bench run still present (runs that
// were killed before they could clean up).
func Leftovers() ([]string, error) { return nsutil.List("ftbench") }
