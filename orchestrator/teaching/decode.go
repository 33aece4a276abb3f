package teaching

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/internal/yamldoc"
	"github.com/ftlab/ftlab/orchestrator/scenario"
	"github.com/ftlab/ftlab/switchd"
)

// The keys of lab.yaml, of its parts, and of a check, in documentation
// order.
var (
	labFields      = []string{"id", "title", "summary", "time", "goals", "references", "topology", "dataplane", "variant", "questions", "steps", "points"}
	dataPlaneField = []string{"mode", "policy", "convergence_delay"}
	variantFields  = []string{"faults", "picks"}
	faultFields    = []string{"kind", "count", "stages", "direction", "drop", "rate"}
	pickFields     = []string{"name", "from", "other_pod_than"}
	questionFields = []string{"id", "step", "text", "type", "options", "unit"}
	stepFields     = []string{"id", "title", "do", "run", "checks"}
	runFields      = []string{"scenario", "mode", "seed"}
	checkCommon    = []string{"id", "kind", "description", "hint", "priority", "points", "requires", "wait"}
)

// Features are the optional ftlab features a check may require.
var Features = []string{"capture", "graph", "cc", "delay"}

var validID = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// Load reads a lab directory: lab.yaml, its check files, and every file
// they refer to (topology, scenarios, handout, answers template). The
// error is a yamldoc.Errors with every problem of every file at once.
func Load(dir string) (*Lab, error) {
	file := filepath.Join(dir, LabFile)
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("load lab: %w", err)
	}
	return Parse(dir, data)
}

// Parse checks a lab given its lab.yaml's bytes; its other files are read
// from dir.
func Parse(dir string, data []byte) (*Lab, error) {
	file := filepath.Join(dir, LabFile)
	root, err := yamldoc.ParseDocument(file, data, "the file is empty; a lab needs an id, a title, a topology and steps")
	if err != nil {
		return nil, err
	}
	l := &Lab{Dir: dir, File: file}
	var pr yamldoc.Problems
	w := yamldoc.NewWalker(root)
	nodes := map[string]*yaml.Node{}
	w.Fields(root, "a lab: a mapping with id, title, topology and steps", labFields, nil, func(k string, v *yaml.Node) { nodes[k] = v })
	f := &fields{w: w, nodes: nodes, lab: l}
	if !w.NotMapping() {
		l.decodeTop(f, &pr)
	}
	pr.AddAll("", w.Problems())
	if pr.Len() == 0 {
		l.validate(&pr)
	}
	if err := pr.Result(file); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *Lab) decodeTop(f *fields, pr *yamldoc.Problems) {
	w := f.w
	l.ID = f.str("id", "the lab's id (its directory's name)", true)
	if l.ID != "" && !validID.MatchString(l.ID) {
		f.problem("id", "%q is not a valid id: lowercase letters, digits and '-', starting with a letter", l.ID)
	}
	if base := filepath.Base(filepath.Clean(l.Dir)); l.ID != "" && base != l.ID {
		f.problem("id", "%q differs from the lab's directory name %q", l.ID, base)
	}
	l.Title = f.str("title", "the lab's title", true)
	l.Summary = f.str("summary", "a paragraph", false)
	l.Time = f.str("time", "how long the lab takes, such as 45m", false)
	l.Goals = f.strs("goals", "a learning goal")
	if len(l.Goals) == 0 {
		f.missing("goals", "the lab's learning goals, a list")
	}
	l.References = f.strs("references", "a reference")
	if t := f.str("topology", "a topology file", true); t != "" {
		path, tried := scenario.FindFile(l.Dir, t)
		if path == "" {
			f.problem("topology", "topology file %q not found (looked at %s)", t, strings.Join(tried, ", "))
		} else if topo, err := topology.Load(path); err != nil {
			pr.AddError(w.Val("topology"), "topology", err)
		} else {
			l.TopologyFile, l.Topo = path, topo
		}
	}
	l.DataPlane = DataPlane{Mode: switchd.ModeShaped, Policy: "ecmp", ConvergenceDelay: switchd.DefaultConvergenceDelay}
	sub(f, "dataplane", "a mapping with mode, policy, convergence_delay", dataPlaneField, func(g *fields) {
		if m := g.str("mode", "linerate or shaped", false); m != "" && g.oneOf("mode", m, []string{switchd.ModeLineRate, switchd.ModeShaped}) {
			l.DataPlane.Mode = m
		}
		if p := g.str("policy", "a switch policy", false); p != "" {
			if _, _, err := switchd.ParsePolicyFlag(p); err != nil {
				g.problem("policy", "%v", err)
			} else {
				l.DataPlane.Policy = p
			}
		}
		l.DataPlane.ConvergenceDelay = g.duration("convergence_delay", l.DataPlane.ConvergenceDelay)
	})
	sub(f, "variant", "a mapping with faults and picks", variantFields, func(g *fields) {
		list(g, "faults", "a list of fault rules", faultFields, func(h *fields) { l.decodeFaultRule(h) })
		list(g, "picks", "a list of picks", pickFields, func(h *fields) { l.decodePick(h) })
	})
	list(f, "questions", "a list of questions", questionFields, func(g *fields) { l.decodeQuestion(g) })
	if l.Topo == nil {
		return // checks and scenarios need the topology
	}
	list(f, "steps", "a list of steps", stepFields, func(g *fields) { l.decodeStep(g, pr) })
	if len(l.Steps) == 0 && !f.w.IsBad("steps") {
		f.missing("steps", "the lab's steps, a list")
	}
	for _, s := range l.Steps {
		l.Points += s.Points
	}
	if f.has("points") {
		if p := f.integer("points", "the lab's total points", 0, 0, 100000); p != l.Points {
			f.problem("points", "says %d, but the checks' points add up to %d", p, l.Points)
		}
	}
}

// sub decodes a nested mapping with its own known keys; problems get the
// key as prefix.
func sub(f *fields, key, want string, known []string, fn func(*fields)) {
	n := f.nodes[key]
	if n == nil {
		return
	}
	w := yamldoc.NewWalker(n)
	nodes := map[string]*yaml.Node{}
	w.Fields(n, want, known, nil, func(k string, v *yaml.Node) { nodes[k] = v })
	if !w.NotMapping() {
		fn(&fields{w: w, nodes: nodes, lab: f.lab})
	}
	for _, p := range w.Problems() {
		c := *p
		c.Field = yamldoc.JoinField(key, p.Field)
		f.w.Append(&c)
	}
}

// list decodes a list of mappings.
func list(f *fields, key, want string, known []string, fn func(*fields)) {
	n := f.nodes[key]
	if n == nil {
		return
	}
	f.w.Sequence(n, key, want, func(i int, item *yaml.Node) {
		w := yamldoc.NewWalker(item)
		nodes := map[string]*yaml.Node{}
		w.Fields(item, "a mapping", known, nil, func(k string, v *yaml.Node) { nodes[k] = v })
		if !w.NotMapping() {
			fn(&fields{w: w, nodes: nodes, lab: f.lab})
		}
		for _, p := range w.Problems() {
			c := *p
			c.Field = yamldoc.JoinField(fmt.Sprintf("%s[%d]", key, i), p.Field)
			f.w.Append(&c)
		}
	})
}

func (l *Lab) decodeFaultRule(f *fields) {
	r := FaultRule{Kind: f.str("kind", "corrupt or degrade", true), Count: f.integer("count", "how many links", 1, 1, 64),
		Stages: f.strs("stages", "a stage"), Direction: f.str("direction", "up, down, both or random", false)}
	if r.Kind != "" {
		f.oneOf("kind", r.Kind, []string{"corrupt", "degrade"})
	}
	if len(r.Stages) == 0 {
		r.Stages = []string{string(topology.StageEdgeAgg), string(topology.StageAggCore)}
	}
	for _, s := range r.Stages {
		f.oneOf("stages", s, []string{string(topology.StageEdgeAgg), string(topology.StageAggCore), string(topology.StageLeafSpine)})
	}
	if r.Direction == "" {
		r.Direction = "both"
	} else {
		f.oneOf("direction", r.Direction, []string{"up", "down", "both", "random"})
	}
	switch r.Kind {
	case "corrupt":
		s := f.str("drop", "a probability such as 1e-2 or 2%", true)
		if s != "" {
			p, err := parseNumber(s)
			if err != nil || p <= 0 || p > 1 {
				f.problem("drop", "expected a probability above 0 and at most 1, such as 1e-2 or 2%%, found %q", s)
			}
			r.Drop = p
		}
		if f.has("rate") {
			f.problem("rate", "a corrupt fault drops packets; rate is for degrade")
		}
	case "degrade":
		s := f.str("rate", "a fraction of the link's rate, such as 25%", true)
		if s != "" {
			p, err := parseNumber(s)
			if err != nil || !strings.HasSuffix(s, "%") || p <= 0 || p >= 1 {
				f.problem("rate", "expected a fraction of the link's rate below 100%%, such as 25%%, found %q", s)
			}
			r.RateFraction = p
		}
		if f.has("drop") {
			f.problem("drop", "a degrade fault slows a link; drop is for corrupt")
		}
	}
	l.Variant.Faults = append(l.Variant.Faults, r)
}

func (l *Lab) decodePick(f *fields) {
	p := PickRule{Name: f.str("name", "a name", true), From: f.str("from", strings.Join(pickPools, ", "), true),
		OtherPodThan: f.str("other_pod_than", "an earlier pick's name", false)}
	if p.Name != "" && !validID.MatchString(p.Name) {
		f.problem("name", "%q is not a valid name: lowercase letters, digits and '-'", p.Name)
	}
	if p.From != "" {
		f.oneOf("from", p.From, pickPools)
	}
	if p.OtherPodThan != "" && !slices.ContainsFunc(l.Variant.Picks, func(q PickRule) bool { return q.Name == p.OtherPodThan }) {
		f.problem("other_pod_than", "no earlier pick %q", p.OtherPodThan)
	}
	for _, q := range l.Variant.Picks {
		if q.Name == p.Name {
			f.problem("name", "pick %q is given twice", p.Name)
		}
	}
	l.Variant.Picks = append(l.Variant.Picks, p)
}

func (l *Lab) decodeQuestion(f *fields) {
	q := &Question{ID: f.str("id", "the question's id", true), Step: f.str("step", "the step it belongs to", true),
		Text: f.str("text", "the question", true), Type: QuestionType(f.str("type", "the answer's type", true)),
		Options: f.strs("options", "an option"), Unit: f.str("unit", "the answer's unit", false), Pos: f.w.Pos()}
	if q.ID != "" && !validID.MatchString(q.ID) && !regexp.MustCompile(`^[a-z][a-z0-9_]*$`).MatchString(q.ID) {
		f.problem("id", "%q is not a valid id: lowercase letters, digits, '-' and '_'", q.ID)
	}
	if q.Type != "" {
		valid := make([]string, len(questionTypes))
		for i, t := range questionTypes {
			valid[i] = string(t)
		}
		f.oneOf("type", string(q.Type), valid)
	}
	if (q.Type == QChoice) != (len(q.Options) > 0) {
		if q.Type == QChoice {
			f.missing("options", "the choices, a list")
		} else {
			f.problem("options", "only choice questions have options")
		}
	}
	if _, dup := l.Question(q.ID); dup && q.ID != "" {
		f.problem("id", "question %q is given twice", q.ID)
	}
	l.Questions = append(l.Questions, q)
}

func (l *Lab) decodeStep(f *fields, pr *yamldoc.Problems) {
	s := &Step{ID: f.str("id", "the step's id", true), Title: f.str("title", "the step's title", true), Do: f.strs("do", "a command")}
	if s.ID != "" && !validID.MatchString(s.ID) {
		f.problem("id", "%q is not a valid id: lowercase letters, digits and '-', starting with a letter", s.ID)
	}
	if _, _, dup := l.Step(s.ID); dup && s.ID != "" {
		f.problem("id", "step %q is given twice", s.ID)
	}
	sub(f, "run", "a mapping with scenario, mode, seed", runFields, func(g *fields) {
		r := &StepRun{Mode: RunMeasure, VariantSeed: true}
		sc := g.str("scenario", "a scenario file", true)
		if m := g.str("mode", "measure or traffic", false); m != "" && g.oneOf("mode", m, []string{string(RunMeasure), string(RunTraffic)}) {
			r.Mode = RunMode(m)
		}
		if sd := g.str("seed", "variant (the student's) or scenario (the file's)", false); sd != "" && g.oneOf("seed", sd, []string{"variant", "scenario"}) {
			r.VariantSeed = sd == "variant"
		}
		if sc == "" {
			return
		}
		path := filepath.Join(l.Dir, sc)
		raw, err := os.ReadFile(path)
		if err != nil {
			g.problem("scenario", "%v", err)
			return
		}
		// Picks are filled in per student; any student's do to check it.
		loaded, err := scenario.Parse(path, []byte(l.Draw("lab-validation").Expand("", string(raw))))
		if err != nil {
			pr.AddError(g.w.Val("scenario"), "run.scenario", err)
			return
		}
		if err := sameFabric(l.Topo, loaded); err != nil {
			g.problem("scenario", "%s: %v", sc, err)
		}
		r.Scenario = path
		s.Run = r
	})
	cf := f.str("checks", "the step's check file", true)
	if cf != "" {
		s.ChecksFile = filepath.Join(l.Dir, cf)
		checks, err := l.loadChecks(s.ChecksFile, s.ID)
		if err != nil {
			pr.AddError(f.w.Val("checks"), "checks", err)
		}
		s.Checks = checks
	}
	for _, c := range s.Checks {
		s.Points += c.Points
	}
	l.Steps = append(l.Steps, s)
}

// sameFabric says how a scenario's fabric differs from the lab's, if it
// does: a scenario can only run on a lab of its own shape.
func sameFabric(t *topology.Topology, sc *scenario.Scenario) error {
	for _, c := range sc.Cells {
		st := c.Config.Topo()
		if st == nil {
			continue
		}
		if len(st.Nodes) != len(t.Nodes) || len(st.Links) != len(t.Links) {
			return fmt.Errorf("its fabric has %d nodes and %d links, the lab's %d and %d", len(st.Nodes), len(st.Links), len(t.Nodes), len(t.Links))
		}
		for i := range st.Links {
			if st.Links[i].Name != t.Links[i].Name || st.Links[i].MTU != t.Links[i].MTU {
				return fmt.Errorf("its link %d is %s, the lab's %s", i, st.Links[i].Name, t.Links[i].Name)
			}
		}
	}
	return nil
}

// loadChecks reads one step's check file.
func (l *Lab) loadChecks(file, step string) ([]*Check, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	root, err := yamldoc.ParseDocument(file, data, "the file is empty; a check file needs checks:")
	if err != nil {
		return nil, err
	}
	w := yamldoc.NewWalker(root)
	nodes := map[string]*yaml.Node{}
	w.Fields(root, "a check file: a mapping with checks", []string{"checks"}, nil, func(k string, v *yaml.Node) { nodes[k] = v })
	var checks []*Check
	f := &fields{w: w, nodes: nodes, lab: l}
	if nodes["checks"] == nil && !w.NotMapping() {
		f.missing("checks", "a list of checks")
	}
	w.Sequence(nodes["checks"], "checks", "a list of checks, each starting with - id:", func(i int, item *yaml.Node) {
		path := fmt.Sprintf("checks[%d]", i)
		if item.Kind != yaml.MappingNode {
			w.Problem(yamldoc.PosOf(item), path, "expected a check (a mapping with id, kind, description), found %s", yamldoc.Describe(item))
			return
		}
		if c := l.decodeCheck(w, path, item, step); c != nil {
			c.File = file
			checks = append(checks, c)
		}
	})
	var pr yamldoc.Problems
	pr.AddAll("", w.Problems())
	return checks, pr.Result(file)
}

// decodeCheck decodes one check: the common fields, then its kind's.
func (l *Lab) decodeCheck(parent *yamldoc.Walker, path string, n *yaml.Node, step string) *Check {
	kindName := ""
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "kind" {
			kindName = yamldoc.Deref(n.Content[i+1]).Value
		}
	}
	kind, known := LookupKind(kindName)
	keys := slices.Clone(checkCommon)
	if known {
		for _, fd := range kind.Fields {
			keys = append(keys, fd.Name)
		}
	}
	w := yamldoc.NewWalker(n)
	nodes := map[string]*yaml.Node{}
	w.Fields(n, "a check", keys, nil, func(k string, v *yaml.Node) { nodes[k] = v })
	f := &fields{w: w, nodes: nodes, lab: l}
	c := &Check{Step: step, Pos: yamldoc.PosOf(n)}
	c.ID = f.str("id", "the check's id", true)
	if c.ID != "" && !validID.MatchString(c.ID) {
		f.problem("id", "%q is not a valid id: lowercase letters, digits and '-', starting with a letter", c.ID)
	}
	c.Kind = f.str("kind", "a check kind: "+strings.Join(KindNames(), ", "), true)
	if c.Kind != "" && !known {
		f.oneOf("kind", c.Kind, KindNames())
	}
	c.Description = f.str("description", "what the check checks, for the student", true)
	c.Hint = f.str("hint", "what to look at when the check fails", false)
	c.Priority = f.integer("priority", "1 (required), 2 or 3", 1, 1, 3)
	c.Points = f.integer("points", "the check's points", 1, 0, 1000)
	c.Requires = f.strs("requires", "a feature")
	for _, r := range c.Requires {
		f.oneOf("requires", r, Features)
	}
	c.Wait = f.duration("wait", 0)
	if known {
		c.Spec = kind.decode(f)
		if kind.Name == "reachability" && !f.has("wait") {
			c.Wait = 5 * time.Second
		}
		if c.Wait > 0 && !kind.Live {
			f.problem("wait", "only live checks (%s) wait for the fabric", strings.Join(liveKinds(), ", "))
		}
	}
	for _, p := range w.Problems() {
		cp := *p
		cp.Field = yamldoc.JoinField(path, p.Field)
		parent.Append(&cp)
	}
	if !w.Clean() {
		return nil
	}
	return c
}

func liveKinds() []string {
	var out []string
	for _, k := range Kinds {
		if k.Live {
			out = append(out, k.Name)
		}
	}
	return out
}

// validate checks what spans files: ids unique across steps, references
// between questions, checks and steps, the handout and answers template.
func (l *Lab) validate(pr *yamldoc.Problems) {
	at := func(c *Check) yamldoc.Pos { return c.Pos }
	seen := map[string]*Check{}
	asked := map[string]bool{}
	for si, s := range l.Steps {
		for _, c := range s.Checks {
			if d, dup := seen[c.ID]; dup {
				pr.Add(at(c), "id", "check %q is also in %s (line %d): check ids are unique in a lab", c.ID, d.File, d.Pos.Line)
				continue
			}
			seen[c.ID] = c
			run := ""
			switch sp := c.Spec.(type) {
			case *predicateSpec:
				run = sp.run
				if sp.expr != nil {
					for _, q := range l.Questions {
						if regexp.MustCompile(`\banswers\.` + regexp.QuoteMeta(q.ID) + `\b`).MatchString(sp.expr.Src) {
							asked[q.ID] = true
						}
					}
				}
			case *answerSpec:
				run = sp.run
				if sp.question != nil {
					asked[sp.question.ID] = true
				}
			}
			if run != "" {
				rs, ri, ok := l.Step(run)
				switch {
				case !ok:
					pr.AddAll("", []*yamldoc.FieldError{{File: c.File, Line: c.Pos.Line, Column: c.Pos.Column, Field: "run", Msg: fmt.Sprintf("no step %q", run)}})
				case ri > si:
					pr.AddAll("", []*yamldoc.FieldError{{File: c.File, Line: c.Pos.Line, Column: c.Pos.Column, Field: "run", Msg: fmt.Sprintf("step %q comes after step %q: a check reads runs of its own step or earlier ones", run, s.ID)}})
				case rs.Run == nil || rs.Run.Mode != RunMeasure:
					pr.AddAll("", []*yamldoc.FieldError{{File: c.File, Line: c.Pos.Line, Column: c.Pos.Column, Field: "run", Msg: fmt.Sprintf("step %q has no measured run (run: with mode measure)", run)}})
				}
			}
		}
	}
	for i, q := range l.Questions {
		if _, _, ok := l.Step(q.Step); !ok {
			pr.Add(q.Pos, fmt.Sprintf("questions[%d].step", i), "no step %q", q.Step)
		}
		if !asked[q.ID] {
			pr.Add(q.Pos, fmt.Sprintf("questions[%d]", i), "question %q has no check (an answer check, or a predicate reading answers.%s): it would never be graded", q.ID, q.ID)
		}
	}
	l.validateKey(pr)
	for _, name := range []string{HandoutFile, AnswersFile} {
		if _, err := os.Stat(filepath.Join(l.Dir, name)); err != nil {
			pr.Add(yamldoc.Pos{Line: 1, Column: 1}, "", "the lab has no %s", name)
		}
	}
	if data, err := os.ReadFile(filepath.Join(l.Dir, AnswersFile)); err == nil {
		a := ParseAnswers(l, filepath.Join(l.Dir, AnswersFile), data)
		for _, p := range a.Problems {
			pr.AddAll("", []*yamldoc.FieldError{p})
		}
		for _, q := range l.Questions {
			if !templateHas(data, q.ID) {
				pr.AddAll("", []*yamldoc.FieldError{{File: a.File, Line: 1, Column: 1, Msg: fmt.Sprintf("the answers template has no key %s:", q.ID)}})
			}
		}
	}
}

func templateHas(data []byte, id string) bool {
	return regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(id) + `:`).Match(data)
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// List loads every lab under a labs directory (one subdirectory each). A
// lab that does not load is returned as its error, next to the others.
func List(labsDir string) ([]*Lab, error) {
	entries, err := os.ReadDir(labsDir)
	if err != nil {
		return nil, fmt.Errorf("list labs: %w", err)
	}
	var labs []*Lab
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !exists(filepath.Join(labsDir, e.Name(), LabFile)) {
			continue
		}
		l, err := Load(filepath.Join(labsDir, e.Name()))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		labs = append(labs, l)
	}
	return labs, errors.Join(errs...)
}
