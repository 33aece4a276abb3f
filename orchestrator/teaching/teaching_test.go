package teaching_test

import (
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ftlab/ftlab/orchestrator/teaching"
)

var update = flag.Bool("update", false, "rewrite golden files")

func root(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func labsDir(t *testing.T) string { return filepath.Join(root(t), "labs") }

func load(t *testing.T, id string) *teaching.Lab {
	t.Helper()
	l, err := teaching.Load(filepath.Join(labsDir(t), id))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestShippedLabs: every lab loads, has a handout, an answers template
// and a solution key (Load checks it answers every question), and the
// six topics of issue 14 are there.
func TestShippedLabs(t *testing.T) {
	labs, err := teaching.List(labsDir(t))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, l := range labs {
		ids = append(ids, l.ID)
		if l.Points == 0 || len(l.Steps) < 2 || len(l.Goals) == 0 {
			t.Errorf("lab %s: %d points, %d steps, %d goals", l.ID, l.Points, len(l.Steps), len(l.Goals))
		}
		handout, err := os.ReadFile(filepath.Join(l.Dir, teaching.HandoutFile))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range l.Steps {
			if !strings.Contains(string(handout), "("+s.ID+")") {
				t.Errorf("lab %s: the handout has no section for step %s", l.ID, s.ID)
			}
		}
	}
	want := []string{"breakfix", "corruption", "ecmp", "failure", "fattree", "ofan"}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("labs (-want +got):\n%s", diff)
	}
}

// TestLabErrors: every problem of a lab and its check files at once, each
// at its file, line and column.
func TestLabErrors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bad")
	write := func(name, content string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("lab.yaml", `id: bad
title: A bad lab
goals: [learn]
topology: `+filepath.Join(root(t), "topologies", "fattree-k4.yaml")+`
dataplane: {mode: fast}
questions:
  - {id: q1, step: one, type: numbr, text: "?"}
  - {id: q2, step: nowhere, type: integer, text: "?"}
steps:
  - id: one
    title: One
    chekcs: checks/one.yaml
  - id: two
    title: Two
    checks: checks/two.yaml
points: 99
`)
	write("checks/two.yaml", `checks:
  - id: a
    kind: stats
    description: a predicate with a typo
    expect: nosuch.x > 1
  - id: b
    kind: answer
    question: q9
    description: an unknown question
    expect: 3
  - id: c
    kind: sumary
    description: an unknown kind
  - id: d
    kind: summary
    run: two
    expect: summary.complete
    description: a step without a run
`)
	_, err := teaching.Load(dir)
	if err == nil {
		t.Fatal("no error")
	}
	got := strings.Split(strings.ReplaceAll(err.Error(), dir+"/", ""), "\n")
	want := []string{
		`lab.yaml:5:19: dataplane.mode: "fast" is not valid (valid: linerate, shaped)`,
		`lab.yaml:7:31: questions[0].type: "numbr" is not valid (valid: number, integer, text, choice, links, nodes); did you mean "number"?`,
		`lab.yaml:10:5: steps[0].checks: missing; expected the step's check file`,
		`lab.yaml:12:5: steps[0].chekcs: unknown field "chekcs"; did you mean "checks"? (valid: id, title, do, run, checks)`,
		`lab.yaml:16:9: points: says 99, but the checks' points add up to 1`,
		`checks/two.yaml:5:13: checks[0].expect: expression: unknown name nosuch (1:1)`,
		`checks/two.yaml:8:15: checks[1].question: no question "q9" in lab.yaml (questions: q1, q2)`,
		`checks/two.yaml:12:11: checks[2].kind: "sumary" is not valid (valid: reachability, stats, summary, exec, file, pcap, answer); did you mean "summary"?`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}

	// Once every file decodes, what spans them is validated.
	write("lab.yaml", `id: bad
title: A bad lab
goals: [learn]
topology: `+filepath.Join(root(t), "topologies", "fattree-k4.yaml")+`
questions:
  - {id: q1, step: nowhere, type: integer, text: "?"}
steps:
  - id: two
    title: Two
    checks: checks/two.yaml
`)
	write("checks/two.yaml", `checks:
  - id: d
    kind: summary
    run: two
    expect: summary.complete
    description: a step without a run
`)
	_, err = teaching.Load(dir)
	if err == nil {
		t.Fatal("no error")
	}
	got = strings.Split(strings.ReplaceAll(err.Error(), dir+"/", ""), "\n")
	want = []string{
		`lab.yaml:1:1: the lab has no README.md`,
		`lab.yaml:1:1: the lab has no answers.yaml`,
		`lab.yaml:6:5: questions[0].step: no step "nowhere"`,
		`lab.yaml:6:5: questions[0]: question "q1" has no check (an answer check, or a predicate reading answers.q1): it would never be graded`,
		`checks/two.yaml:2:5: run: step "two" has no measured run (run: with mode measure)`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("validation errors (-want +got):\n%s", diff)
	}
	for _, line := range got {
		if !strings.HasPrefix(line, "lab.yaml:") && !strings.HasPrefix(line, "checks/two.yaml:") {
			t.Errorf("error without file:line:col: %s", line)
		}
	}
}
