package fidelity

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const stat0 = `cpu  300 0 300 800 0 0 100 20 0 0
cpu0 150 0 150 400 0 0 50 10 0 0
cpu1 150 0 150 400 0 0 50 10 0 0
intr 12345
ctxt 99
`

func TestParseProcStat(t *testing.T) {
	got := parseProcStat([]byte(stat0))
	want := cpuTimes{total: 1520, idle: 800, softirq: 100, steal: 20, cores: 2}
	if got != want {
		t.Errorf("parseProcStat = %+v, want %+v", got, want)
	}
}

func TestSummarize(t *testing.T) {
	samples := []sample{{busy: 1, softirq: 0.5, steal: 0.2}, {busy: 0.96, softirq: 0.3}, {busy: 0.5, softirq: 0.1}, {busy: 0.2, softirq: 0.1}}
	got := summarize(samples, 2)
	want := CPUStats{Cores: 2, Samples: 4, SaturatedFraction: 0.5, MeanBusy: 0.665, MeanSoftirq: 0.25, MeanSteal: 0.05}
	if d := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); d != "" {
		t.Errorf("summarize (-want +got):\n%s", d)
	}
	a, _ := between(cpuTimes{total: 100, idle: 50, softirq: 10, steal: 5}, cpuTimes{total: 200, idle: 52, softirq: 40, steal: 15})
	if d := cmp.Diff(sample{busy: 0.98, softirq: 0.3, steal: 0.1}, a, cmp.AllowUnexported(sample{}), cmpopts.EquateApprox(0, 1e-9)); d != "" {
		t.Errorf("between (-want +got):\n%s", d)
	}
}

func TestSamplerReadsAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stat")
	if err := os.WriteFile(path, []byte(stat0), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &Sampler{path: path, interval: 5 * time.Millisecond}
	s.Start()
	time.Sleep(20 * time.Millisecond)
	// Fully busy from here: only user time grows. Replaced by a rename,
	// as the kernel's file never reads half-written.
	next := path + ".next"
	if err := os.WriteFile(next, []byte("cpu0 1150 0 150 400 0 0 50 0 0 0\ncpu1 1150 0 150 400 0 0 50 0 0 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, path); err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond)
	st := s.Stop()
	if st == nil || st.Cores != 2 || st.Samples == 0 || st.SaturatedFraction != 1 || st.MeanBusy != 1 {
		t.Errorf("Stop = %+v, want one fully busy sample on 2 cores", st)
	}
}

func TestDisturbed(t *testing.T) {
	steal := func(v Verdict, s float64) *Report {
		return &Report{Verdict: v, Inputs: Inputs{CPU: &CPUStats{Cores: 2, MeanSteal: s}}}
	}
	for _, tt := range []struct {
		name string
		r    *Report
		want bool
	}{
		{"WARN under steal", steal(WARN, 0.30), true},
		{"WARN at the threshold", steal(WARN, DisturbedSteal), true},
		{"WARN, little steal", steal(WARN, DisturbedSteal/2), false},
		{"OK under steal", steal(OK, 0.30), false},
		{"FAIL under steal", steal(FAIL, 0.50), false},
		{"WARN, CPU not sampled", &Report{Verdict: WARN}, false},
		{"no report", nil, false},
	} {
		if got := tt.r.Disturbed(); got != tt.want {
			t.Errorf("%s: Disturbed() = %v, want %v", tt.name, got, tt.want)
		}
	}
}
