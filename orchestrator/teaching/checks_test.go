package teaching_test

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ftlab/ftlab/orchestrator/teaching"
)

// ecmpEnv is the ecmp lab with a recorded run (testdata/ecmp-summary.json)
// and the answers given.
func ecmpEnv(t *testing.T, answers string, verdict string) *teaching.Env {
	t.Helper()
	l := load(t, "ecmp")
	run, err := teaching.ReadRun("measure", writeRun(t, verdict))
	if err != nil {
		t.Fatal(err)
	}
	return &teaching.Env{Lab: l, Facts: l.Draw("ana"), Answers: teaching.ParseAnswers(l, "answers.yaml", []byte(answers)),
		Runs: map[string]*teaching.Run{"measure": run}}
}

// writeRun is a results directory holding the recorded summary, with its
// fidelity verdict replaced.
func writeRun(t *testing.T, verdict string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "ecmp-summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	fid := doc["fidelity"].(map[string]any)
	fid["verdict"] = verdict
	if verdict != "OK" {
		r := fid["runs"].([]any)[0].(map[string]any)
		r["verdict"], r["reasons"] = verdict, []string{verdict + ": CPU saturated 60% of the run (limit 10%)"}
	}
	dir := t.TempDir()
	out, _ := json.Marshal(doc)
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), out, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func results(t *testing.T, env *teaching.Env) map[string]teaching.Result {
	t.Helper()
	out := map[string]teaching.Result{}
	for _, r := range teaching.Evaluate(context.Background(), env, env.Lab.Checks()) {
		out[r.Check] = r
	}
	return out
}

// TestAnswerChecks: numbers within tolerances (absolute and relative,
// against literal and computed values), choices in any case, the answers
// file's own problems, unanswered questions.
func TestAnswerChecks(t *testing.T) {
	const good = `idle_paths: 2.76        # within 3% of 2.749
two_collide: 0.255      # within 0.01 of 0.25
leave_pod: 12.8
worst_ecmp: 1.74        # recorded 1.75, 3%
worst_rss: 1.21
worst_rps: 1.04
most_balanced: RPS      # any case
cct_slowdown: 2.0       # 330/165
why_collide: hash-ignores-load
more_flows: imbalance-shrinks-not-vanishes
`
	env := ecmpEnv(t, good, "OK")
	for id, r := range results(t, env) {
		if r.Status != teaching.Pass {
			t.Errorf("%s: %s (%s; %s)", id, r.Status, r.Observed, r.Reason)
		}
	}

	const bad = `idle_paths: 2.9         # 5% off
two_collide: 0.3
leave_pod: twelve
worst_ecmp: 1.62        # E->A's, not A->C's
most_balanced: ecmp
cct_slowdown: 1.8
why_collide: links-too-slow
more_flows: maybe
`
	env = ecmpEnv(t, bad, "OK")
	got := map[string]string{}
	for id, r := range results(t, env) {
		got[id] = string(r.Status)
		if r.Status == teaching.Fail {
			got[id] += ": " + r.Reason
			if r.Hint == "" {
				t.Errorf("%s failed without a hint", id)
			}
		}
	}
	want := map[string]string{
		"idle-paths":    "fail: not the expected value (within 3%)",
		"two-collide":   "fail: not the expected value (within 0.01)",
		"leave-pod":     `fail: answers.yaml:3:12: leave_pod: expected a number, found "twelve"`,
		"worst-ecmp":    "fail: not the expected value (within 3%)",
		"worst-rss":     "fail: answer worst_rss in answers.yaml",
		"worst-rps":     "fail: answer worst_rps in answers.yaml",
		"most-balanced": "fail: not the expected answer",
		"cct-slowdown":  "fail: not the expected value (within 5%)",
		"why-collide":   "fail: not the expected answer",
		"more-flows":    `fail: answers.yaml:8:13: more_flows: "maybe" is not one of the options (imbalance-shrinks-not-vanishes, collisions-vanish, collisions-get-worse)`,
		"run-complete":  "pass",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}

// TestFidelityMakesInconclusive: a run whose verdict is WARN (or FAIL)
// makes the checks that read it inconclusive, never failed, and they
// count for nothing either way; the others are judged.
func TestFidelityMakesInconclusive(t *testing.T) {
	for _, verdict := range []string{"WARN", "FAIL"} {
		env := ecmpEnv(t, "worst_ecmp: 9\nidle_paths: 2.75\n", verdict)
		res := results(t, env)
		for _, id := range []string{"run-complete", "worst-ecmp"} {
			if r := res[id]; r.Status != teaching.Inconclusive || !strings.Contains(r.Reason, "fidelity verdict "+verdict) {
				t.Errorf("%s with verdict %s: %s (%s)", id, verdict, r.Status, r.Reason)
			}
		}
		// Judged all the same: a right answer, and unanswered questions
		// (the student's, whatever the machine did).
		if r := res["idle-paths"]; r.Status != teaching.Pass {
			t.Errorf("idle-paths: %s", r.Status)
		}
		if r := res["cct-slowdown"]; r.Status != teaching.Fail {
			t.Errorf("unanswered cct-slowdown: %s", r.Status)
		}
		earned, possible := teaching.Score(teaching.Evaluate(context.Background(), env, env.Lab.Checks()))
		if earned != 3 || possible != float64(env.Lab.Points-2-3) {
			t.Errorf("verdict %s: score %v of %v, want 3 of %d (inconclusive checks count neither way)", verdict, earned, possible, env.Lab.Points-5)
		}
	}
	// No run at all: the student's to fix.
	env := ecmpEnv(t, "", "OK")
	env.Runs = nil
	if r := results(t, env)["run-complete"]; r.Status != teaching.Fail || !strings.Contains(r.Reason, "ftlab lab run measure") {
		t.Errorf("no run: %+v", r)
	}
}

// TestLinkAnswers: links in either order and either end first, partial
// credit less wrong names, problems with names that are no links.
func TestLinkAnswers(t *testing.T) {
	l := load(t, "breakfix")
	facts := l.Draw("ana")
	faulty := facts.FaultyLinks()
	if len(faulty) != 3 {
		t.Fatalf("faulty links %v", faulty)
	}
	flip := func(s string) string { a, b, _ := strings.Cut(s, "~"); return b + "~" + a }
	healthy := ""
	for _, lk := range l.Topo.Links {
		if lk.Stage == "agg-core" && !slices.Contains(faulty, lk.Name) {
			healthy = lk.Name
			break
		}
	}
	cases := []struct {
		answer string
		status teaching.Status
		earned float64
	}{
		{"[" + flip(faulty[2]) + ", " + faulty[0] + ", " + flip(faulty[1]) + "]", teaching.Pass, 12},
		{"[" + faulty[0] + ", " + faulty[1] + "]", teaching.Fail, 8},
		{"[" + faulty[0] + ", " + healthy + "]", teaching.Fail, 0},
		{"[" + faulty[0] + ", " + faulty[1] + ", " + faulty[2] + ", " + healthy + "]", teaching.Fail, 8},
		{"[e0-0~c0-0]", teaching.Fail, 0},
	}
	for _, c := range cases {
		env := &teaching.Env{Lab: l, Facts: facts, Answers: teaching.ParseAnswers(l, "answers.yaml", []byte("faulty_links: "+c.answer+"\n"))}
		var r teaching.Result
		for _, x := range teaching.Evaluate(context.Background(), env, l.Checks()) {
			if x.Check == "faulty-links" {
				r = x
			}
		}
		if r.Status != c.status || r.Earned != c.earned {
			t.Errorf("%s: %s, %v points; want %s, %v (%s)", c.answer, r.Status, r.Earned, c.status, c.earned, r.Reason)
		}
	}
	env := &teaching.Env{Lab: l, Facts: facts, Answers: teaching.ParseAnswers(l, "answers.yaml", []byte("faulty_links: [e0-0~c0-0]\n"))}
	if len(env.Answers.Problems) != 1 || !strings.Contains(env.Answers.Problems[0].Error(), `answers.yaml:1:15: faulty_links[0]: "e0-0~c0-0" is not a link of this fabric`) {
		t.Errorf("problems: %v", env.Answers.Problems)
	}
}

// TestVariants: a student's name seeds their faults and picks: the same
// name (in any case) always the same, other names others, faulty links
// never sharing a switch.
func TestVariants(t *testing.T) {
	l := load(t, "breakfix")
	a, again, upper := l.Draw("ana"), l.Draw("ana"), l.Draw(" Ana ")
	if diff := cmp.Diff(a, again); diff != "" {
		t.Errorf("the same student got another variant:\n%s", diff)
	}
	if diff := cmp.Diff(a, upper); diff != "" {
		t.Errorf("\" Ana \" and \"ana\" differ:\n%s", diff)
	}
	seen := map[string]bool{}
	for _, name := range []string{"ana", "ben", "cho", "dev", "eli", "fay", "gus", "hal"} {
		f := l.Draw(name)
		key := strings.Join(f.FaultyLinks(), " ")
		seen[key] = true
		var kinds []string
		nodes := map[string]bool{}
		for _, im := range f.Faults {
			kinds = append(kinds, im.Kind)
			x, y, _ := strings.Cut(im.Link, "~")
			lk, _, _ := l.Topo.LinkBetween(x, y)
			for _, n := range []string{lk.A.Node, lk.B.Node} {
				if nodes[n] {
					t.Errorf("%s: two faulty links share %s: %v", name, n, f.FaultyLinks())
				}
				nodes[n] = true
			}
			if im.Direction != "up" && im.Direction != "down" {
				t.Errorf("%s: direction %q", name, im.Direction)
			}
		}
		slices.Sort(kinds)
		if diff := cmp.Diff([]string{"corrupt", "corrupt", "degrade"}, kinds); diff != "" {
			t.Errorf("%s: fault kinds (-want +got):\n%s", name, diff)
		}
	}
	if len(seen) < 7 {
		t.Errorf("8 students got only %d different sets of faulty links", len(seen))
	}
	if teaching.SeedOf("breakfix", "ana") == teaching.SeedOf("fattree", "ana") {
		t.Error("one student gets the same seed in two labs")
	}
}

// TestReports: results.json reads back, JUnit has a suite per step and a
// case per check with failures and skips, the student's copy has no
// expected answers.
func TestReports(t *testing.T) {
	env := ecmpEnv(t, "idle_paths: 4\nworst_ecmp: 1.75\n", "WARN")
	rep := teaching.NewReport(env.Lab, env.Facts, env.Answers, teaching.Evaluate(context.Background(), env, env.Lab.Checks()))
	dir := t.TempDir()
	if err := rep.ForStudent().WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	back, err := teaching.ReadReport(filepath.Join(dir, teaching.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range back.Results {
		if r.Expected != "" {
			t.Errorf("%s: the student's results.json gives the expected answer %q", r.Check, r.Expected)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, teaching.JUnitFile))
	if err != nil {
		t.Fatal(err)
	}
	var ju struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Skipped  int `xml:"skipped,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &ju); err != nil {
		t.Fatal(err)
	}
	var suites []string
	for _, s := range ju.Suites {
		suites = append(suites, s.Name)
	}
	// 11 checks: run-complete and worst-ecmp inconclusive (skipped),
	// idle-paths wrong, the 8 unanswered ones failed.
	if ju.Tests != 11 || ju.Skipped != 2 || ju.Failures != 9 {
		t.Errorf("junit: %d tests, %d failures, %d skipped", ju.Tests, ju.Failures, ju.Skipped)
	}
	if diff := cmp.Diff([]string{"ecmp/predict", "ecmp/measure", "ecmp/explain"}, suites); diff != "" {
		t.Errorf("suites (-want +got):\n%s", diff)
	}
	if f := ju.Suites[0].Cases[0].Failure; f == nil || !strings.Contains(f.Text, "hint: a path stays idle") {
		t.Errorf("first failure without its hint: %+v", f)
	}
	md, _ := os.ReadFile(filepath.Join(dir, teaching.ReportFile))
	for _, want := range []string{"**FAIL** idle-paths", "**INCONCLUSIVE** worst-ecmp", "hint: a path stays idle"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}
