package teaching_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ftlab/ftlab/orchestrator/teaching"
)

// submit writes a student's workspace for the ecmp lab: session.json, the
// answers given and, when verdict is not empty, a run of step measure
// with the recorded summary.
func submit(t *testing.T, dir, student string, answers map[string]any, verdict string) {
	t.Helper()
	l := load(t, "ecmp")
	ws := filepath.Join(dir, student)
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	sess := &teaching.Session{Lab: "ecmp", LabsDir: labsDir(t), Student: student, Seed: teaching.SeedOf("ecmp", student),
		LabName: "ecmp_" + student, Workspace: ws, Runs: map[string]teaching.SessionRun{}}
	if verdict != "" {
		rel := filepath.Join(teaching.RunsDir, "measure", "20261201-100000.000")
		if err := os.MkdirAll(filepath.Join(ws, rel), 0o755); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(writeRun(t, verdict), "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, rel, "summary.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		sess.Runs["measure"] = teaching.SessionRun{Dir: rel, Mode: teaching.RunMeasure, Verdict: verdict}
	}
	if err := sess.Write(); err != nil {
		t.Fatal(err)
	}
	tmpl, err := l.Template()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(ws, teaching.AnswersFile)
	if err := os.WriteFile(path, tmpl, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := teaching.FillAnswers(path, answers); err != nil {
		t.Fatal(err)
	}
}

// TestGrade: three submissions of the ecmp lab (the solution, two wrong
// answers, a half-done one whose run was not faithful) give the expected
// per-student and per-check tables.
func TestGrade(t *testing.T) {
	dir := t.TempDir()
	subs := filepath.Join(dir, "submissions")
	l := load(t, "ecmp")
	run, err := teaching.ReadRun("measure", writeRun(t, "OK"))
	if err != nil {
		t.Fatal(err)
	}
	key, err := teaching.Solve(context.Background(), &teaching.Env{Lab: l, Facts: l.Draw("ana"), Runs: map[string]*teaching.Run{"measure": run}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	submit(t, subs, "ana", key, "OK")
	wrong := map[string]any{}
	for k, v := range key {
		wrong[k] = v
	}
	wrong["idle_paths"], wrong["most_balanced"] = 4.0, "ecmp"
	submit(t, subs, "ben", wrong, "OK")
	submit(t, subs, "cho", map[string]any{"idle_paths": 2.75, "two_collide": 0.25, "worst_ecmp": 1.75}, "WARN")

	found, err := teaching.FindSubmissions([]string{subs})
	if err != nil {
		t.Fatal(err)
	}
	g, err := teaching.Grade(context.Background(), labsDir(t), found, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "grades")
	if err := g.WriteFiles(out); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(out, teaching.GradesMarkdown))
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "grades.golden.md")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("grades.md (-want +got):\n%s", diff)
	}
	for _, f := range []string{teaching.GradesCSV, teaching.GradesJSON, filepath.Join(teaching.GradesReports, "ecmp-ben.md")} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	// The instructor's report of a student gives the expected answers.
	ben, _ := os.ReadFile(filepath.Join(out, teaching.GradesReports, "ecmp-ben.md"))
	if want := "expected: rps"; !strings.Contains(string(ben), want) {
		t.Errorf("ben's report lacks %q:\n%s", want, ben)
	}
}
