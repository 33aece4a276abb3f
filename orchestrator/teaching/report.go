package teaching

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Files of a student's report, written in their workspace.
const (
	ReportFile  = "report.md"
	ResultsFile = "results.json"
	JUnitFile   = "junit.xml"
	reportFmt   = 1
)

// Report is one student's results: results.json.
type Report struct {
	Format    int       `json:"format"`
	Lab       string    `json:"lab"`
	Title     string    `json:"title"`
	Student   string    `json:"student"`
	Seed      uint64    `json:"seed"`
	LabName   string    `json:"lab_name,omitempty"`
	Generated time.Time `json:"generated"`
	Version   string    `json:"ftlab_version,omitempty"`
	// Current is the step the student is on (after this check).
	Current string       `json:"current_step,omitempty"`
	Steps   []StepReport `json:"steps"`
	Results []Result     `json:"results"`
	// Earned and Possible add up the results; Total is the lab's points.
	Earned   float64 `json:"earned"`
	Possible float64 `json:"possible"`
	Total    int     `json:"total"`
	// AnswerProblems are problems of the answers file.
	AnswerProblems []string `json:"answer_problems,omitempty"`
	Runs           []*Run   `json:"runs,omitempty"`
}

// StepReport is one step's standing.
type StepReport struct {
	ID      string   `json:"id"`
	Title   string   `json:"title"`
	Points  int      `json:"points"`
	Earned  float64  `json:"earned"`
	Checked int      `json:"checked"` // checks with a result
	Done    bool     `json:"done"`    // every priority-1 check passed
	Failing []string `json:"failing,omitempty"`
}

// NewReport totals results of a lab for a student.
func NewReport(l *Lab, facts *Facts, answers *Answers, results []Result) *Report {
	rep := &Report{Format: reportFmt, Lab: l.ID, Title: l.Title, Generated: time.Now().UTC(), Results: results, Total: l.Points}
	if facts != nil {
		rep.Student, rep.Seed = facts.Student, facts.Seed
	}
	if answers != nil {
		for _, p := range answers.Problems {
			rep.AnswerProblems = append(rep.AnswerProblems, p.Error())
		}
	}
	rep.Earned, rep.Possible = Score(results)
	for _, s := range l.Steps {
		sr := StepReport{ID: s.ID, Title: s.Title, Points: s.Points}
		for _, r := range results {
			if r.Step == s.ID {
				sr.Earned += r.Earned
				sr.Checked++
			}
		}
		if sr.Checked > 0 {
			sr.Done, sr.Failing = StepDone(s.ID, results)
		}
		rep.Steps = append(rep.Steps, sr)
	}
	return rep
}

// ForStudent is the report without expected answers: a student's
// workspace gets what the checker saw, not the solution.
func (r *Report) ForStudent() *Report {
	c := *r
	c.Results = make([]Result, len(r.Results))
	for i, res := range r.Results {
		res.Expected = ""
		c.Results[i] = res
	}
	return &c
}

// WriteFiles writes report.md, results.json and junit.xml into dir.
func (r *Report) WriteFiles(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	x, err := r.JUnit()
	if err != nil {
		return err
	}
	for name, content := range map[string][]byte{ResultsFile: append(data, '\n'), ReportFile: []byte(r.Markdown()), JUnitFile: x} {
		if err := writeAtomic(filepath.Join(dir, name), content); err != nil {
			return err
		}
	}
	return nil
}

func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ReadReport reads a results.json.
func ReadReport(path string) (*Report, error) {
	var r Report
	if err := readJSON(path, &r, &r.Format, reportFmt); err != nil {
		return nil, err
	}
	return &r, nil
}

// readJSON decodes one of the package's JSON files, whose format field
// must be want (a file of another ftlab's making says so).
func readJSON(path string, v any, format *int, want int) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if *format != want {
		return fmt.Errorf("%s: format %d, this ftlab reads %d", path, *format, want)
	}
	return nil
}

var statusMark = map[Status]string{Pass: "PASS", Fail: "FAIL", Inconclusive: "INCONCLUSIVE", Skipped: "SKIPPED"}

// Markdown renders report.md.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: %s\n\n", r.Lab, r.Title)
	fmt.Fprintf(&b, "Student **%s** (seed %d), checked %s", r.Student, r.Seed, r.Generated.Local().Format(time.DateTime))
	if r.LabName != "" {
		fmt.Fprintf(&b, " on lab %s", r.LabName)
	}
	fmt.Fprintf(&b, ".\n\n**Score: %s of %s points checked** (the lab has %d).", pts(r.Earned), pts(r.Possible), r.Total)
	if r.Current != "" {
		fmt.Fprintf(&b, " Current step: %s.", r.Current)
	}
	b.WriteString("\n\n")
	if len(r.AnswerProblems) > 0 {
		b.WriteString("## Problems in your answers file\n\n")
		for _, p := range r.AnswerProblems {
			fmt.Fprintf(&b, "- %s\n", p)
		}
		b.WriteString("\n")
	}
	b.WriteString("## Steps\n\n| step | points | done |\n|---|---|---|\n")
	for _, s := range r.Steps {
		done := "-"
		switch {
		case s.Checked == 0:
			done = "not checked yet"
		case s.Done:
			done = "yes"
		default:
			done = "no: " + strings.Join(s.Failing, ", ")
		}
		fmt.Fprintf(&b, "| %s: %s | %s / %d | %s |\n", s.ID, s.Title, pts(s.Earned), s.Points, done)
	}
	step := ""
	for _, res := range r.Results {
		if res.Step != step {
			step = res.Step
			fmt.Fprintf(&b, "\n## Step %s\n\n", step)
		}
		fmt.Fprintf(&b, "- **%s** %s (priority %d, %s/%d points): %s\n", statusMark[res.Status], res.Check, res.Priority, pts(res.Earned), res.Points, res.Description)
		if res.Observed != "" {
			fmt.Fprintf(&b, "  - saw: %s\n", res.Observed)
		}
		if res.Reason != "" {
			fmt.Fprintf(&b, "  - why: %s\n", res.Reason)
		}
		if res.Expected != "" {
			fmt.Fprintf(&b, "  - expected: %s\n", res.Expected)
		}
		if res.Hint != "" {
			fmt.Fprintf(&b, "  - hint: %s\n", res.Hint)
		}
	}
	if len(r.Runs) > 0 {
		b.WriteString("\n## Runs\n\n")
		for _, run := range r.Runs {
			fmt.Fprintf(&b, "- step %s: %s, fidelity %s\n", run.Step, run.Dir, run.Verdict)
		}
	}
	b.WriteString("\nINCONCLUSIVE checks read a run whose fidelity verdict was not OK: rerun that step (`ftlab lab run STEP`); they count neither for nor against you.\n")
	return b.String()
}

func pts(x float64) string {
	if x == float64(int64(x)) {
		return fmt.Sprintf("%d", int64(x))
	}
	return fmt.Sprintf("%.1f", x)
}

// JUnit XML: one test suite per step, one test case per check; a failed
// check is a failure (its reason and hint the message), a skipped or
// inconclusive one is skipped.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// JUnit renders junit.xml.
func (r *Report) JUnit() ([]byte, error) {
	js := junitSuites{Name: "ftlab lab " + r.Lab + " (" + r.Student + ")"}
	idx := map[string]int{}
	for _, res := range r.Results {
		i, ok := idx[res.Step]
		if !ok {
			i = len(js.Suites)
			idx[res.Step] = i
			js.Suites = append(js.Suites, junitSuite{Name: r.Lab + "/" + res.Step, Timestamp: res.At.Format(time.RFC3339),
				Properties: []junitProperty{{"student", r.Student}, {"seed", fmt.Sprint(r.Seed)}}})
		}
		s := &js.Suites[i]
		c := junitCase{Name: res.Check, Classname: r.Lab + "." + res.Step, Time: fmt.Sprintf("%.3f", res.Duration.Seconds()),
			SystemOut: fmt.Sprintf("%s (priority %d, %s/%d points) %s", res.Description, res.Priority, pts(res.Earned), res.Points, res.Observed)}
		text := strings.TrimSpace(strings.Join(nonEmpty(res.Observed, res.Reason, hintLine(res.Hint)), "\n"))
		switch res.Status {
		case Fail:
			c.Failure = &junitMessage{Message: firstNonEmpty(res.Reason, res.Observed, "failed"), Type: "fail", Text: text}
			s.Failures++
		case Skipped, Inconclusive:
			c.Skipped = &junitMessage{Message: string(res.Status) + ": " + res.Reason}
			s.Skipped++
		}
		s.Tests++
		s.Cases = append(s.Cases, c)
	}
	for i := range js.Suites {
		s := &js.Suites[i]
		js.Tests += s.Tests
		js.Failures += s.Failures
		js.Skipped += s.Skipped
		var total time.Duration
		for _, res := range r.Results {
			if r.Lab+"/"+res.Step == s.Name {
				total += res.Duration
			}
		}
		s.Time = fmt.Sprintf("%.3f", total.Seconds())
	}
	out, err := xml.MarshalIndent(js, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(out, '\n')...), nil
}

func hintLine(h string) string {
	if h == "" {
		return ""
	}
	return "hint: " + h
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
