package teaching

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/ftlab/ftlab/orchestrator/capture"
)

// Kind is one kind of check: its fields, what it needs and how it is
// decoded into a Spec.
type Kind struct {
	Name string
	Doc  string
	// Live kinds look at the running lab; grading takes their outcome
	// from the student's recorded results.
	Live   bool
	Fields []FieldDoc
	decode func(f *fields) Spec
}

// FieldDoc documents one field of a kind.
type FieldDoc struct {
	Name, Doc string
	Required  bool
}

// Kinds is the registry of check kinds, in documentation order.
var Kinds = []Kind{
	{
		Name: "reachability", Live: true,
		Doc: "UDP echo between hosts (ftlab pingall); retried for wait (default 5s) while the fabric converges",
		Fields: []FieldDoc{
			{Name: "from", Doc: "hosts that send (names or {pick.X}); default every host"},
			{Name: "to", Doc: "hosts they send to; default every host"},
			{Name: "expect", Doc: "reachable (default) or unreachable"},
		},
		decode: decodeReach,
	},
	{
		Name: "stats", Live: true,
		Doc: "a predicate over the lab's counters (stats: ftlab stats --json) and state (lab), read now",
		Fields: []FieldDoc{
			{Name: "expect", Doc: "a predicate expression", Required: true},
		},
		decode: func(f *fields) Spec { return &predicateSpec{expr: f.expr("expect", true, true), live: true} },
	},
	{
		Name: "summary",
		Doc:  "a predicate over summary.json of a step's latest run (ftlab lab run); inconclusive when the run's fidelity verdict is not OK",
		Fields: []FieldDoc{
			{Name: "run", Doc: "the step whose run it reads", Required: true},
			{Name: "expect", Doc: "a predicate expression (summary is the run's)", Required: true},
		},
		decode: func(f *fields) Spec {
			return &predicateSpec{run: f.str("run", "a step id", true), expr: f.expr("expect", true, true)}
		},
	},
	{
		Name: "exec", Live: true,
		Doc: "a command inside a node's namespace (no shell): its exit code and output",
		Fields: []FieldDoc{
			{Name: "node", Doc: "the node (or {pick.X})", Required: true},
			{Name: "command", Doc: "the argv, a list", Required: true},
			{Name: "exit", Doc: "the exit code wanted (default 0)"},
			{Name: "match", Doc: "a regular expression the output must match"},
			{Name: "no_match", Doc: "a regular expression the output must not match"},
			{Name: "timeout", Doc: "how long the command may run (default 10s)"},
		},
		decode: decodeExec,
	},
	{
		Name: "file",
		Doc:  "a file the student made in their workspace (a drawing, an export): it is there, and its content matches",
		Fields: []FieldDoc{
			{Name: "path", Doc: "the file, relative to the workspace", Required: true},
			{Name: "match", Doc: "a regular expression its content must match"},
		},
		decode: decodeFile,
	},
	{
		Name: "pcap",
		Doc:  "a packet capture in the workspace (ftlab capture -w): how many frames match a capture filter",
		Fields: []FieldDoc{
			{Name: "path", Doc: "the pcapng file, relative to the workspace", Required: true},
			{Name: "filter", Doc: "a capture filter (docs/capture.md) on packet fields: type, psn, src, ...; default every frame"},
			{Name: "min", Doc: "how many frames must match (default 1)"},
		},
		decode: decodePcap,
	},
	{
		Name: "answer",
		Doc:  "a student's answer in answers.yaml against a literal or a computed value, with a tolerance for measured numbers",
		Fields: []FieldDoc{
			{Name: "question", Doc: "the question id", Required: true},
			{Name: "expect", Doc: "the right answer, literally"},
			{Name: "value", Doc: "an expression computing the right answer (instead of expect)"},
			{Name: "run", Doc: "the step whose run value reads as summary; inconclusive when its verdict is not OK"},
			{Name: "tolerance", Doc: "numbers: an absolute (0.5) or relative (10%) tolerance"},
			{Name: "pattern", Doc: "text: a regular expression the answer must match, instead of equality"},
			{Name: "partial", Doc: "lists: credit for each right element, less each wrong one"},
		},
		decode: decodeAnswerCheck,
	},
}

// LookupKind returns a kind by name.
func LookupKind(name string) (*Kind, bool) {
	for i := range Kinds {
		if Kinds[i].Name == name {
			return &Kinds[i], true
		}
	}
	return nil, false
}

// KindNames lists the kinds.
func KindNames() []string {
	var out []string
	for _, k := range Kinds {
		out = append(out, k.Name)
	}
	return out
}

// exprEnv builds what an expression sees.
func exprEnv(env *Env, summary any) map[string]any {
	runs := map[string]any{}
	for id, r := range env.Runs {
		runs[id] = r.Summary
	}
	m := map[string]any{
		"summary": summary, "runs": runs, "answers": env.Answers.doc(), "variant": env.Facts.doc(),
		"topology": topologyDoc(env.Lab.Topo), "stats": map[string]any{}, "lab": map[string]any{}, "answer": nil,
	}
	if summary == nil {
		m["summary"] = map[string]any{}
	}
	return m
}

// runFor returns a step's run, or the outcome that says why it cannot be
// read: never run (fail), or run with a fidelity verdict that is not OK
// (inconclusive).
func runFor(env *Env, step string) (*Run, *Outcome) {
	r, ok := env.Runs[step]
	if !ok || r == nil {
		o := fail("no run of step "+step, fmt.Sprintf("run the step's scenario first: ftlab lab run %s", step))
		return nil, &o
	}
	switch r.Verdict {
	case "OK":
		return r, nil
	case "WARN":
		o := inconclusive(fmt.Sprintf("the run of step %s has fidelity verdict WARN (%s): this machine may have set its numbers; rerun it (ftlab lab run %s) on a quieter machine",
			step, shortReasons(r.Reasons), step))
		return nil, &o
	case "":
		o := inconclusive(fmt.Sprintf("the run of step %s has no fidelity verdict (interrupted?); rerun it", step))
		return nil, &o
	}
	o := inconclusive(fmt.Sprintf("the run of step %s has fidelity verdict %s (%s): an invariant of the emulation broke, not your answer; show it to your instructor",
		step, r.Verdict, shortReasons(r.Reasons)))
	return nil, &o
}

// shortReasons is the first reason of a verdict, and how many more the
// run's report.md gives.
func shortReasons(rs []string) string {
	switch len(rs) {
	case 0:
		return "no reason recorded"
	case 1:
		return rs[0]
	}
	return fmt.Sprintf("%s; %d more in the run's report.md", rs[0], len(rs)-1)
}

// predicateSpec is a stats or summary check.
type predicateSpec struct {
	run  string
	expr *Expr
	live bool
}

func (s *predicateSpec) Evaluate(ctx context.Context, env *Env) Outcome {
	var summary any
	if s.run != "" {
		r, o := runFor(env, s.run)
		if o != nil {
			return *o
		}
		summary = r.Summary
	}
	m := exprEnv(env, summary)
	if s.live {
		if env.Live == nil {
			return skipped("needs the running lab")
		}
		st, err := env.Live.Stats(ctx)
		if err != nil {
			return fail("", "cannot read the lab's counters: "+err.Error())
		}
		lab, err := env.Live.LabDoc(ctx)
		if err != nil {
			return fail("", "cannot read the lab: "+err.Error())
		}
		m["stats"], m["lab"] = st, lab
	}
	v, err := s.expr.run(m)
	if err != nil {
		return fail("", err.Error())
	}
	if v == true {
		return pass(s.expr.Src)
	}
	return fail("not "+s.expr.Src, "")
}

// reachSpec is a reachability check.
type reachSpec struct {
	from, to    []string
	unreachable bool
}

func decodeReach(f *fields) Spec {
	s := &reachSpec{from: f.strs("from", "a host name"), to: f.strs("to", "a host name")}
	if e := f.str("expect", "reachable or unreachable", false); e != "" && f.oneOf("expect", e, []string{"reachable", "unreachable"}) {
		s.unreachable = e == "unreachable"
	}
	for _, key := range []string{"from", "to"} {
		for _, h := range f.strs(key, "a host name") {
			if strings.Contains(h, "{pick.") {
				continue
			}
			if n, ok := f.lab.Topo.Node(h); !ok || n.Role.IsSwitch() {
				f.problem(key, "%q is not a host of the lab's topology", h)
			}
		}
	}
	return s
}

func (s *reachSpec) Evaluate(ctx context.Context, env *Env) Outcome {
	if env.Live == nil {
		return skipped("needs the running lab")
	}
	res, err := env.Live.PingAll(ctx)
	if err != nil {
		return fail("", "pingall: "+err.Error())
	}
	expand := func(names []string) []string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = env.Facts.Expand("", n)
		}
		return out
	}
	from, to := expand(s.from), expand(s.to)
	want, ok := 0, 0
	var bad []string
	for _, p := range res.Pairs {
		if (len(from) > 0 && !slices.Contains(from, p.From)) || (len(to) > 0 && !slices.Contains(to, p.To)) {
			continue
		}
		want++
		if p.OK != s.unreachable {
			ok++
		} else if len(bad) < 5 {
			bad = append(bad, p.From+" -> "+p.To)
		}
	}
	what := "answered"
	if s.unreachable {
		what = "got no answer, as expected"
	}
	obs := fmt.Sprintf("%d/%d pairs %s", ok, want, what)
	if want == 0 {
		return fail(obs, "no pair of hosts matches from/to")
	}
	if ok == want {
		return pass(obs)
	}
	return fail(obs, "for example "+strings.Join(bad, ", "))
}

// execSpec is an exec check.
type execSpec struct {
	node           string
	argv           []string
	exit           int
	match, noMatch *regexp.Regexp
	timeout        time.Duration
}

func decodeExec(f *fields) Spec {
	s := &execSpec{node: f.str("node", "a node name", true), argv: f.strs("command", "an argument"),
		exit: f.integer("exit", "an exit code", 0, 0, 255), match: f.regexp("match"), noMatch: f.regexp("no_match"),
		timeout: f.duration("timeout", 10*time.Second)}
	if !f.has("command") {
		f.missing("command", "the command's argv, a list such as [ip, route]")
	} else if len(s.argv) == 0 {
		f.problem("command", "empty; expected the command's argv, such as [ip, route]")
	}
	if s.node != "" && !strings.Contains(s.node, "{pick.") {
		if _, ok := f.lab.Topo.Node(s.node); !ok {
			f.problem("node", "%q is not a node of the lab's topology", s.node)
		}
	}
	return s
}

func (s *execSpec) Evaluate(ctx context.Context, env *Env) Outcome {
	if env.Live == nil {
		return skipped("needs the running lab")
	}
	node := env.Facts.Expand("", s.node)
	argv := make([]string, len(s.argv))
	for i, a := range s.argv {
		argv[i] = env.Facts.Expand("", a)
	}
	res, err := env.Live.Exec(ctx, node, argv, s.timeout)
	cmd := node + ": " + strings.Join(argv, " ")
	if err != nil {
		return fail(cmd, err.Error())
	}
	obs := fmt.Sprintf("%s exited %d", cmd, res.ExitCode)
	switch {
	case res.ExitCode != s.exit:
		return fail(obs, fmt.Sprintf("wanted exit code %d; output: %s", s.exit, firstLines(res.Output, 3)))
	case s.match != nil && !s.match.MatchString(res.Output):
		return fail(obs, fmt.Sprintf("output does not match %s: %s", s.match, firstLines(res.Output, 3)))
	case s.noMatch != nil && s.noMatch.MatchString(res.Output):
		return fail(obs, fmt.Sprintf("output matches %s: %s", s.noMatch, s.noMatch.FindString(res.Output)))
	}
	return pass(obs)
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, " | ")
}

// workspacePath is a check's file in the student's workspace.
func workspacePath(f *fields) string {
	p := f.str("path", "a file in the workspace", true)
	if p != "" && (filepath.IsAbs(p) || strings.HasPrefix(filepath.Clean(p), "..")) {
		f.problem("path", "%q is not inside the workspace: give a path relative to it", p)
		return ""
	}
	return p
}

// fileSpec is a file check.
type fileSpec struct {
	path  string
	match *regexp.Regexp
}

func decodeFile(f *fields) Spec { return &fileSpec{path: workspacePath(f), match: f.regexp("match")} }

func (s *fileSpec) Evaluate(ctx context.Context, env *Env) Outcome {
	if env.Workspace == "" {
		return skipped("no workspace")
	}
	data, err := os.ReadFile(filepath.Join(env.Workspace, s.path))
	if err != nil {
		return fail("no "+s.path, fmt.Sprintf("make %s in your workspace (%s)", s.path, env.Workspace))
	}
	obs := fmt.Sprintf("%s: %d bytes", s.path, len(data))
	if s.match != nil && !s.match.Match(data) {
		return fail(obs, fmt.Sprintf("its content does not match %s", s.match))
	}
	return pass(obs)
}

// pcapSpec is a pcap check.
type pcapSpec struct {
	path   string
	filter string
	min    int
}

func decodePcap(f *fields) Spec {
	s := &pcapSpec{path: workspacePath(f), filter: f.str("filter", "a capture filter such as 'type nack'", false),
		min: f.integer("min", "a number of frames", 1, 0, 1<<30)}
	if _, err := capture.ParseFilter(s.filter, f.lab.Topo); err != nil {
		f.problem("filter", "%v", err)
	}
	return s
}

func (s *pcapSpec) Evaluate(ctx context.Context, env *Env) Outcome {
	if env.Workspace == "" {
		return skipped("no workspace")
	}
	file, err := os.Open(filepath.Join(env.Workspace, s.path))
	if err != nil {
		return fail("no "+s.path, fmt.Sprintf("write your capture to %s in your workspace (ftlab capture ... -w %s)", s.path, s.path))
	}
	defer file.Close()
	frames, err := capture.ReadPcapng(file, env.Lab.Topo)
	if err != nil && len(frames) == 0 {
		return fail(s.path, err.Error())
	}
	flt, err := capture.ParseFilter(s.filter, env.Lab.Topo)
	if err != nil {
		return fail(s.path, err.Error())
	}
	n := 0
	for _, fr := range frames {
		if flt.Match(fr) {
			n++
		}
	}
	what := "frames"
	if s.filter != "" {
		what = "match " + s.filter
	}
	obs := fmt.Sprintf("%s: %d frames, %d %s", s.path, len(frames), n, what)
	if n < s.min {
		return fail(obs, fmt.Sprintf("wanted at least %d", s.min))
	}
	return pass(obs)
}

// tolerance is how far a number may be from the expected one.
type tolerance struct{ abs, rel float64 }

func (t tolerance) within(got, want float64) bool {
	d := math.Abs(got - want)
	return d <= t.abs+1e-12 || (t.rel > 0 && d <= t.rel*math.Abs(want)+1e-12)
}

func (t tolerance) String() string {
	switch {
	case t.rel > 0:
		return fmt.Sprintf("within %g%%", 100*t.rel)
	case t.abs > 0:
		return fmt.Sprintf("within %g", t.abs)
	}
	return "exactly"
}

// answerSpec is an answer check.
type answerSpec struct {
	question *Question
	expect   any
	value    *Expr
	run      string
	tol      tolerance
	pattern  *regexp.Regexp
	partial  bool
}

func decodeAnswerCheck(f *fields) Spec {
	s := &answerSpec{expect: f.value("expect"), value: f.expr("value", false, false), run: f.str("run", "a step id", false),
		pattern: f.regexp("pattern"), partial: f.boolean("partial")}
	if qid := f.str("question", "a question id", true); qid != "" {
		q, ok := f.lab.Question(qid)
		if !ok {
			var ids []string
			for _, q := range f.lab.Questions {
				ids = append(ids, q.ID)
			}
			f.problem("question", "no question %q in lab.yaml (questions: %s)", qid, strings.Join(ids, ", "))
		}
		s.question = q
	}
	switch {
	case f.has("expect") && f.has("value"):
		f.problem("value", "give expect or value, not both")
	case !f.has("expect") && !f.has("value") && s.pattern == nil:
		f.missing("expect", "the right answer (or value: an expression computing it, or pattern:)")
	}
	if t := f.str("tolerance", "a tolerance such as 0.5 or 10%", false); t != "" {
		x, err := parseNumber(t)
		switch {
		case err != nil || x < 0:
			f.problem("tolerance", "expected a tolerance such as 0.5 or 10%%, found %q", t)
		case strings.HasSuffix(t, "%"):
			s.tol.rel = x
		default:
			s.tol.abs = x
		}
	}
	if s.question != nil {
		qt := s.question.Type
		if (f.has("tolerance")) && qt != QNumber && qt != QInteger {
			f.problem("tolerance", "only numbers have a tolerance; question %s is %s", s.question.ID, qt)
		}
		if s.pattern != nil && qt != QText {
			f.problem("pattern", "only text answers match a pattern; question %s is %s", s.question.ID, qt)
		}
		if s.partial && qt != QLinks && qt != QNodes {
			f.problem("partial", "only list answers get partial credit; question %s is %s", s.question.ID, qt)
		}
		if qt == QChoice && s.expect != nil && !slices.Contains(s.question.Options, fmt.Sprint(s.expect)) {
			f.problem("expect", "%q is not one of question %s's options (%s)", s.expect, s.question.ID, strings.Join(s.question.Options, ", "))
		}
	}
	return s
}

func (s *answerSpec) Evaluate(ctx context.Context, env *Env) Outcome {
	q := s.question
	if p := env.Answers.problemFor(q.ID); p != nil {
		return fail("", p.Error())
	}
	var a *Answer
	if env.Answers != nil {
		a = env.Answers.Values[q.ID]
	}
	if a == nil {
		return fail("no answer", fmt.Sprintf("answer %s in answers.yaml", q.ID))
	}
	want := s.expect
	if s.value != nil {
		var summary any
		if s.run != "" {
			r, o := runFor(env, s.run)
			if o != nil {
				return *o
			}
			summary = r.Summary
		}
		m := exprEnv(env, summary)
		m["answer"] = a.Value
		v, err := s.value.run(m)
		if err != nil {
			return fail("", "cannot compute the expected answer: "+err.Error())
		}
		want = v
	}
	obs := "your answer: " + a.Raw
	switch q.Type {
	case QNumber, QInteger:
		got, _ := toFloat(a.Value)
		w, ok := toFloat(want)
		if !ok {
			return fail(obs, fmt.Sprintf("the expected value is not a number (%v): the lab is wrong, tell your instructor", want))
		}
		o := Outcome{Observed: obs, Expected: fmt.Sprintf("%g (%s)", w, s.tol)}
		if s.tol.within(got, w) {
			o.Status, o.Credit = Pass, 1
			return o
		}
		o.Status, o.Reason = Fail, "not the expected value ("+s.tol.String()+")"
		return o
	case QText, QChoice:
		got, _ := a.Value.(string)
		if s.pattern != nil {
			if s.pattern.MatchString(got) {
				return withExpected(pass(obs), s.pattern.String())
			}
			return withExpected(fail(obs, "not the expected answer"), s.pattern.String())
		}
		w := fmt.Sprint(want)
		if strings.EqualFold(strings.TrimSpace(got), strings.TrimSpace(w)) {
			return withExpected(pass(obs), w)
		}
		return withExpected(fail(obs, "not the expected answer"), w)
	}
	// Lists: compare as sets.
	got, _ := toStrings(a.Value)
	w, ok := toStrings(want)
	if !ok {
		return fail(obs, fmt.Sprintf("the expected value is not a list (%v): the lab is wrong, tell your instructor", want))
	}
	if q.Type == QLinks {
		for i, x := range w {
			if c, ok := canonicalLink(env.Lab.Topo, x); ok {
				w[i] = c
			}
		}
	}
	right, wrong := 0, 0
	for _, x := range got {
		if slices.Contains(w, x) {
			right++
		} else {
			wrong++
		}
	}
	exp := strings.Join(w, ", ")
	if right == len(w) && wrong == 0 {
		return withExpected(pass(obs), exp)
	}
	o := withExpected(fail(obs, fmt.Sprintf("%d of %d right, %d wrong", right, len(w), wrong)), exp)
	if s.partial && len(w) > 0 {
		o.Credit = math.Max(0, float64(right-wrong)/float64(len(w)))
	}
	return o
}

func withExpected(o Outcome, e string) Outcome {
	o.Expected = e
	return o
}

// KindsTable is docs/labs.md's table of check kinds, written from the
// registry.
func KindsTable() string {
	var b strings.Builder
	b.WriteString("| kind | live | what it checks | fields |\n|---|---|---|---|\n")
	for _, k := range Kinds {
		live := "no"
		if k.Live {
			live = "yes"
		}
		var fs []string
		for _, f := range k.Fields {
			name := "`" + f.Name + "`"
			if f.Required {
				name += " (required)"
			}
			fs = append(fs, name+": "+f.Doc)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", k.Name, live, k.Doc, strings.Join(fs, "; "))
	}
	return b.String()
}
