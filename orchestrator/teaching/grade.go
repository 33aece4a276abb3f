package teaching

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Files `ftlab lab grade` writes.
const (
	GradesMarkdown = "grades.md"
	GradesCSV      = "grades.csv"
	GradesJSON     = "grades.json"
	GradesReports  = "reports" // one instructor's report per student
)

// Grades are the grades of a set of submissions, per lab.
type Grades struct {
	Labs []*LabGrades `json:"labs"`
	// Problems are submissions that could not be graded at all.
	Problems []string `json:"problems,omitempty"`
}

// LabGrades are the grades of one lab's submissions.
type LabGrades struct {
	Lab      string          `json:"lab"`
	Title    string          `json:"title"`
	Checks   []*Check        `json:"-"`
	Students []*StudentGrade `json:"students"`
	PerCheck []CheckGrade    `json:"checks"`
}

// StudentGrade is one submission's grade.
type StudentGrade struct {
	Student  string   `json:"student"`
	Dir      string   `json:"dir"`
	Earned   float64  `json:"earned"`
	Possible float64  `json:"possible"`
	Total    int      `json:"total"`
	Notes    []string `json:"notes,omitempty"`
	Report   *Report  `json:"-"`
}

// CheckGrade is how one check went over every submission.
type CheckGrade struct {
	Check        string  `json:"check"`
	Step         string  `json:"step"`
	Points       int     `json:"points"`
	Pass         int     `json:"pass"`
	Fail         int     `json:"fail"`
	Inconclusive int     `json:"inconclusive"`
	Skipped      int     `json:"skipped"`
	MeanEarned   float64 `json:"mean_earned"`
}

// FindSubmissions returns the workspaces under dirs: each dir is a
// workspace (it holds session.json) or a folder of them.
func FindSubmissions(dirs []string) ([]string, error) {
	var out []string
	for _, d := range dirs {
		if exists(filepath.Join(d, SessionFile)) {
			out = append(out, d)
			continue
		}
		entries, err := os.ReadDir(d)
		if err != nil {
			return nil, err
		}
		found := false
		for _, e := range entries {
			if p := filepath.Join(d, e.Name()); e.IsDir() && exists(filepath.Join(p, SessionFile)) {
				out = append(out, p)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("%s holds no submission (no %s in it or in its subdirectories)", d, SessionFile)
		}
	}
	return out, nil
}

// Grade evaluates every submission offline: answers and runs' summaries
// are judged again from the submitted files (with the expected answers the
// student's seed gives), live checks keep the outcome recorded in the
// submission's results.json at check time.
func Grade(ctx context.Context, labsDir string, submissions []string, features map[string]bool) (*Grades, error) {
	g := &Grades{}
	labs := map[string]*LabGrades{}
	for _, dir := range submissions {
		sg, l, err := gradeOne(ctx, labsDir, dir, features)
		if err != nil {
			g.Problems = append(g.Problems, fmt.Sprintf("%s: %v", dir, err))
			continue
		}
		lg, ok := labs[l.ID]
		if !ok {
			lg = &LabGrades{Lab: l.ID, Title: l.Title, Checks: l.Checks()}
			labs[l.ID] = lg
			g.Labs = append(g.Labs, lg)
		}
		lg.Students = append(lg.Students, sg)
	}
	for _, lg := range g.Labs {
		slices.SortFunc(lg.Students, func(a, b *StudentGrade) int { return strings.Compare(a.Student, b.Student) })
		for _, c := range lg.Checks {
			cg := CheckGrade{Check: c.ID, Step: c.Step, Points: c.Points}
			for _, s := range lg.Students {
				r := s.result(c.ID)
				if r == nil {
					continue
				}
				switch r.Status {
				case Pass:
					cg.Pass++
				case Fail:
					cg.Fail++
				case Inconclusive:
					cg.Inconclusive++
				case Skipped:
					cg.Skipped++
				}
				cg.MeanEarned += r.Earned / float64(len(lg.Students))
			}
			lg.PerCheck = append(lg.PerCheck, cg)
		}
	}
	if len(g.Labs) == 0 && len(g.Problems) > 0 {
		return g, errors.New(strings.Join(g.Problems, "; "))
	}
	return g, nil
}

func (s *StudentGrade) result(check string) *Result {
	for i := range s.Report.Results {
		if s.Report.Results[i].Check == check {
			return &s.Report.Results[i]
		}
	}
	return nil
}

func gradeOne(ctx context.Context, labsDir, dir string, features map[string]bool) (*StudentGrade, *Lab, error) {
	sess, err := ReadSession(dir)
	if err != nil {
		return nil, nil, err
	}
	l, err := Load(filepath.Join(labsDir, sess.Lab))
	if errors.Is(err, os.ErrNotExist) && sess.LabsDir != "" {
		// Graded elsewhere than the labs directory: the one the lab
		// was started from.
		l, err = Load(filepath.Join(sess.LabsDir, sess.Lab))
	}
	if err != nil {
		return nil, nil, err
	}
	sg := &StudentGrade{Student: sess.Student, Dir: dir, Total: l.Points}
	facts := l.Draw(sess.Student)
	if facts.Seed != sess.Seed {
		sg.Notes = append(sg.Notes, fmt.Sprintf("session.json says seed %d, but student %q has seed %d: graded with the student's", sess.Seed, sess.Student, facts.Seed))
	}
	answers, err := ReadAnswers(l, filepath.Join(dir, AnswersFile))
	if err != nil {
		return nil, nil, err
	}
	runs, err := LoadRuns(dir, sess)
	if err != nil {
		sg.Notes = append(sg.Notes, err.Error())
		runs = map[string]*Run{}
	}
	env := &Env{Lab: l, Facts: facts, Answers: answers, Runs: runs, Workspace: dir, Features: features}
	results := Evaluate(ctx, env, l.Checks())
	var recorded map[string]Result
	if rep, err := ReadReport(filepath.Join(dir, ResultsFile)); err == nil {
		recorded = map[string]Result{}
		for _, r := range rep.Results {
			recorded[r.Check] = r
		}
	} else if !os.IsNotExist(errors.Unwrap(err)) && !os.IsNotExist(err) {
		sg.Notes = append(sg.Notes, err.Error())
	}
	missingLive := 0
	for i, r := range results {
		if !r.Live || r.Status != Skipped || strings.HasPrefix(r.Reason, "needs ftlab") {
			continue
		}
		if rec, ok := recorded[r.Check]; ok {
			rec.Observed = strings.TrimSpace(rec.Observed + " (recorded at check time)")
			results[i] = rec
			continue
		}
		missingLive++
		results[i].Reason = "a live check, never run: the student did not run ftlab lab check on it"
		results[i].Status = Fail
	}
	if missingLive > 0 {
		sg.Notes = append(sg.Notes, fmt.Sprintf("%d live checks have no recorded result (no ftlab lab check --all before handing in?)", missingLive))
	}
	rep := NewReport(l, facts, answers, results)
	rep.LabName = sess.LabName
	sg.Report = rep
	sg.Earned, sg.Possible = rep.Earned, rep.Possible
	return sg, l, nil
}

// WriteFiles writes grades.md, grades.csv, grades.json and one report per
// student (with the expected answers) under dir.
func (g *Grades) WriteFiles(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, GradesReports), 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, GradesJSON), append(data, '\n')); err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, GradesMarkdown), []byte(g.Markdown())); err != nil {
		return err
	}
	var b strings.Builder
	cw := csv.NewWriter(&b)
	_ = cw.Write([]string{"lab", "student", "check", "step", "priority", "status", "earned", "points"})
	for _, lg := range g.Labs {
		for _, s := range lg.Students {
			for _, r := range s.Report.Results {
				_ = cw.Write([]string{lg.Lab, s.Student, r.Check, r.Step, fmt.Sprint(r.Priority), string(r.Status), pts(r.Earned), fmt.Sprint(r.Points)})
			}
			name := filepath.Join(dir, GradesReports, lg.Lab+"-"+safeFile(s.Student)+".md")
			if err := writeAtomic(name, []byte(s.Report.Markdown())); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return writeAtomic(filepath.Join(dir, GradesCSV), []byte(b.String()))
}

func safeFile(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

// Marks for the per-student table: the check's status at a glance.
var gradeMark = map[Status]string{Pass: "P", Fail: "F", Inconclusive: "I", Skipped: "S"}

// Markdown renders grades.md: per lab, a table of students (score and
// every check's mark) and a table of checks (how many passed, failed).
func (g *Grades) Markdown() string {
	var b strings.Builder
	b.WriteString("# Grades\n\nP pass, F fail (partial credit shows as F with points), I inconclusive (rerun; not counted), S skipped (not counted).\n")
	for _, lg := range g.Labs {
		fmt.Fprintf(&b, "\n## %s: %s\n\n### Students\n\n| student | score | of checked | of lab |", lg.Lab, lg.Title)
		for _, c := range lg.Checks {
			fmt.Fprintf(&b, " %s |", c.ID)
		}
		b.WriteString(" notes |\n|---|---|---|---|" + strings.Repeat("---|", len(lg.Checks)) + "---|\n")
		for _, s := range lg.Students {
			fmt.Fprintf(&b, "| %s | %s | %s | %d |", s.Student, pts(s.Earned), pts(s.Possible), s.Total)
			for _, c := range lg.Checks {
				r := s.result(c.ID)
				switch {
				case r == nil:
					b.WriteString(" - |")
				case r.Status == Fail && r.Earned > 0:
					fmt.Fprintf(&b, " F %s |", pts(r.Earned))
				default:
					fmt.Fprintf(&b, " %s |", gradeMark[r.Status])
				}
			}
			fmt.Fprintf(&b, " %s |\n", strings.Join(s.Notes, "; "))
		}
		b.WriteString("\n### Checks\n\n| check | step | points | pass | fail | inconclusive | skipped | mean points |\n|---|---|---|---|---|---|---|---|\n")
		for _, c := range lg.PerCheck {
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %d | %.1f |\n", c.Check, c.Step, c.Points, c.Pass, c.Fail, c.Inconclusive, c.Skipped, c.MeanEarned)
		}
	}
	if len(g.Problems) > 0 {
		b.WriteString("\n## Not graded\n\n")
		for _, p := range g.Problems {
			fmt.Fprintf(&b, "- %s\n", p)
		}
	}
	return b.String()
}
