package session_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ftlab/ftlab/internal/testlab"
	"github.com/ftlab/ftlab/orchestrator/capture"
	"github.com/ftlab/ftlab/orchestrator/graph"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/orchestrator/runner"
	"github.com/ftlab/ftlab/orchestrator/teaching"
	"github.com/ftlab/ftlab/orchestrator/teaching/session"
)

// Every shipped lab is run end to end here, on a real fabric, as a student
// would: start, the step's commands (as calls), the solution key's answers,
// ftlab lab check per step and --all. Runs whose fidelity verdict is not
// OK (the machine is shared) make their checks inconclusive, which the
// tests accept, saying so; the same checks are then judged again on the
// same results with the verdict taken as OK, so their logic is tested
// whatever the machine's load.

// student drives one lab for one student.
type student struct {
	t   *testing.T
	ctx context.Context
	m   *session.Manager
	act *session.Active
}

func startLab(t *testing.T, id, name string) *student {
	t.Helper()
	testlab.RequireRoot(t)
	store := &lab.Store{Dir: filepath.Join(t.TempDir(), "run"), Prefix: testlab.Prefix(t)}
	// The features the CLI has (ftlab capture, ftlab graph).
	m := &session.Manager{Store: store, LabsDir: filepath.Join(testlab.Root(t), "labs"), Agents: runner.InProcessAgents,
		Features: map[string]bool{"capture": true, "graph": true}}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	act, err := m.Start(ctx, id, session.Options{Student: name, Workspace: filepath.Join(t.TempDir(), "ws")})
	if err != nil {
		t.Fatalf("start %s: %v", id, err)
	}
	t.Cleanup(func() {
		if err := store.Down(act.Session.LabName); err != nil && !errors.Is(err, lab.ErrNotFound) {
			t.Errorf("down: %v", err)
		}
	})
	return &student{t: t, ctx: ctx, m: m, act: act}
}

func (s *student) name() string { return s.act.Session.LabName }

// run runs a step's scenario.
func (s *student) run(step string) *session.RunResult {
	s.t.Helper()
	res, err := s.m.RunStep(s.ctx, s.act, step)
	if err != nil {
		s.t.Fatalf("lab run %s: %v", step, err)
	}
	if res.Run != nil && res.Run.Verdict != "OK" {
		s.t.Logf("step %s: run verdict %s (%s): its checks may be inconclusive", step, res.Run.Verdict, strings.Join(res.Run.Reasons, "; "))
	}
	return res
}

// link fails or repairs a link, as ftlab link down/up does.
func (s *student) link(a, b string, up bool) {
	s.t.Helper()
	if _, err := s.m.Store.SetLink(s.ctx, s.name(), a, b, up); err != nil {
		s.t.Fatalf("link %s %s: %v", a, b, err)
	}
}

// answer fills the step's questions from the solution key, as computed on
// the lab now.
func (s *student) answer(step string) map[string]any {
	s.t.Helper()
	env, err := s.m.Env(s.act)
	if err != nil {
		s.t.Fatal(err)
	}
	var ids []string
	for _, q := range s.act.Lab.Questions {
		if q.Step == step {
			ids = append(ids, q.ID)
		}
	}
	vals, err := teaching.Solve(s.ctx, env, ids)
	if err != nil {
		s.t.Fatalf("solve %s: %v", step, err)
	}
	if err := teaching.FillAnswers(filepath.Join(s.act.Session.Workspace, teaching.AnswersFile), vals); err != nil {
		s.t.Fatal(err)
	}
	return vals
}

// check checks a step (all for "") and requires every check to pass, or to
// be inconclusive because its run's verdict was not OK, or skipped for a
// feature this build lacks.
func (s *student) check(step string) *session.CheckResult {
	s.t.Helper()
	res, err := s.m.Check(s.ctx, s.act, step, step == "")
	if err != nil {
		s.t.Fatalf("check %s: %v", step, err)
	}
	for _, r := range res.Checked {
		switch {
		case r.Status == teaching.Pass:
		case r.Status == teaching.Inconclusive && strings.Contains(r.Reason, "fidelity verdict"):
			s.t.Logf("%s: inconclusive on this machine: %s", r.Check, r.Reason)
		case r.Status == teaching.Skipped && strings.Contains(r.Reason, "needs ftlab"):
			s.t.Logf("%s: %s", r.Check, r.Reason)
		default:
			s.t.Errorf("check %s (step %s): %s: saw %q, %s", r.Check, r.Step, r.Status, r.Observed, r.Reason)
		}
	}
	return res
}

// offline judges the lab's offline checks (answers, summaries) on the
// student's files with answers and verdicts overridden: verdicts taken as
// OK, so the checks' logic is tested on real results on a loaded machine.
func (s *student) offline(answers map[string]any) map[string]teaching.Result {
	s.t.Helper()
	env, err := s.m.Env(s.act)
	if err != nil {
		s.t.Fatal(err)
	}
	env.Live = nil
	for id, r := range env.Runs {
		c := *r
		c.Verdict = "OK"
		env.Runs[id] = &c
	}
	if answers != nil {
		for id, v := range answers {
			env.Answers.Values[id] = &teaching.Answer{Question: id, Raw: fmt.Sprint(v), Value: v}
		}
	}
	out := map[string]teaching.Result{}
	for _, r := range teaching.Evaluate(s.ctx, env, s.act.Lab.Checks()) {
		if !r.Live {
			out[r.Check] = r
		}
	}
	return out
}

// verify requires the solution to pass every offline check, and the wrong
// answers to fail exactly the checks named, each with its hint.
func (s *student) verify(wrong map[string]any, wantFail []string) {
	s.t.Helper()
	for id, r := range s.offline(nil) {
		if r.Status != teaching.Pass && !(r.Status == teaching.Skipped && strings.Contains(r.Reason, "needs ftlab")) {
			s.t.Errorf("solution: check %s is %s: saw %q, %s", id, r.Status, r.Observed, r.Reason)
		}
	}
	got := s.offline(wrong)
	var failed []string
	for id, r := range got {
		if r.Status == teaching.Fail {
			failed = append(failed, id)
			c := s.checkByID(id)
			if r.Hint == "" || r.Hint != c.Hint {
				s.t.Errorf("wrong answer: check %s failed without its hint (got %q)", id, r.Hint)
			}
		}
	}
	slices.Sort(failed)
	want := slices.Clone(wantFail)
	slices.Sort(want)
	if !slices.Equal(failed, want) {
		s.t.Errorf("wrong answers %v: failed checks %v, want %v", slices.Sorted(maps.Keys(wrong)), failed, want)
	}
}

func (s *student) checkByID(id string) *teaching.Check {
	for _, c := range s.act.Lab.Checks() {
		if c.ID == id {
			return c
		}
	}
	s.t.Fatalf("no check %s", id)
	return nil
}

func requireDone(t *testing.T, res *session.CheckResult) {
	t.Helper()
	inconclusive := false
	for _, r := range res.Checked {
		inconclusive = inconclusive || r.Status == teaching.Inconclusive
	}
	if !res.Done && !inconclusive {
		t.Errorf("step %s not done", res.Step)
	}
}

func TestLabFattree(t *testing.T) {
	s := startLab(t, "fattree", "ref")
	s.answer("explore")
	requireDone(t, s.check("explore"))
	s.answer("reach")
	requireDone(t, s.check("reach"))

	s.run("paths")
	first := s.answer("paths")["agg_first"].(string)
	src := s.act.Facts.Picks["src"]
	edge := "e" + src[1:strings.LastIndex(src, "-")]
	s.link(edge, first, false)
	s.run("paths")
	after := s.answer("paths")["agg_after"].(string)
	if after == first {
		t.Fatalf("the message took %s before and after its link failed", first)
	}
	if err := teaching.FillAnswers(filepath.Join(s.act.Session.Workspace, teaching.AnswersFile), map[string]any{"agg_first": first}); err != nil {
		t.Fatal(err)
	}
	requireDone(t, s.check("paths"))

	s.link(edge, first, true)
	s.run("counters")
	s.answer("counters")
	s.check("counters")
	s.check("")
	s.verify(map[string]any{"hosts": 17.0, "host_addr": "10.9.9.9", "paths_intrapod": 4.0, "up_vs_down": "more-up"},
		[]string{"count-hosts", "host-address", "intrapod-paths", "up-vs-down"})
}

func TestLabECMP(t *testing.T) {
	s := startLab(t, "ecmp", "ref")
	s.answer("predict")
	requireDone(t, s.check("predict"))
	s.run("measure")
	s.answer("measure")
	s.check("measure")
	s.answer("explain")
	s.check("")
	s.verify(map[string]any{"idle_paths": 4.0, "worst_ecmp": 9.5, "more_flows": "collisions-vanish"},
		[]string{"idle-paths", "worst-ecmp", "more-flows"})
}

func TestLabFailure(t *testing.T) {
	s := startLab(t, "failure", "ref")
	s.link("a0-0", "c0-0", false)
	s.answer("fail")
	requireDone(t, s.check("fail"))
	s.link("a0-0", "c0-0", true)
	s.run("downtime")
	s.answer("downtime")
	s.check("downtime")
	s.check("")
	s.verify(map[string]any{"paths_left": 4.0, "core_lost": "yes", "why_more": "more-traffic"},
		[]string{"paths-left", "core-lost", "why-more"})
}

func TestLabOfan(t *testing.T) {
	s := startLab(t, "ofan", "ref")
	s.run("queues")
	s.answer("queues")
	s.check("queues")
	s.answer("balance")
	s.check("")
	s.verify(map[string]any{"ofan_down_share": 3.0, "why_balanced": "larger-buffers"},
		[]string{"ofan-down-share", "why-balanced"})
}

func TestLabCorruption(t *testing.T) {
	s := startLab(t, "corruption", "ref")
	s.run("recover")
	s.answer("recover")
	s.check("recover")
	// As the handout says: capture NACKs at the edge switches of the
	// corrupting link's pod while the traffic runs again.
	s.run("nacks")
	link := s.act.Facts.FaultyLinks()[0]
	agg, _, _ := strings.Cut(link, "~")
	pod := agg[1:strings.Index(agg, "-")]
	s.captureDuring("nacks", "nacks.pcapng", "type nack", 5, "e"+pod+"-0", "e"+pod+"-1")
	vals := s.answer("nacks")
	s.check("nacks")
	s.check("")
	// The variant's corrupting link is where the switches counted
	// corruption drops, and nowhere else.
	if got, want := s.corruptLinks(), s.act.Facts.FaultyLinks(); !slices.Equal(got, want) {
		t.Errorf("corruption drops counted on links %v, the variant corrupts %v", got, want)
	}
	if fmt.Sprint(vals["corrupt_link"]) != fmt.Sprint(s.act.Facts.FaultyLinks()) {
		t.Errorf("solution key: corrupt_link %v", vals["corrupt_link"])
	}
	s.verify(map[string]any{"corrupt_link": []string{otherLink(s.act, s.act.Facts.FaultyLinks())}, "what_spurious": "resent-twice"},
		[]string{"corrupt-link", "what-spurious"})
}

func TestLabBreakfix(t *testing.T) {
	s := startLab(t, "breakfix", "ref")
	s.run("observe")
	s.drawGraph("graph.svg")
	requireDone(t, s.check("observe"))
	var corrupting []string
	for _, im := range s.act.Facts.Faults {
		if im.Kind == "corrupt" {
			corrupting = append(corrupting, im.Link)
		}
	}
	slices.Sort(corrupting)
	if got := s.corruptLinks(); !slices.Equal(got, corrupting) {
		t.Errorf("corruption drops counted on links %v, the variant corrupts %v", got, corrupting)
	}
	s.answer("diagnose")
	requireDone(t, s.check("diagnose"))
	for _, l := range s.act.Facts.FaultyLinks() {
		a, b, _ := strings.Cut(l, "~")
		s.link(a, b, false)
	}
	s.run("drain")
	requireDone(t, s.check("drain"))
	s.check("")
	// Half right: one faulty link named, one healthy one too: partial
	// credit cancels out; a wrong slow link fails.
	faulty := s.act.Facts.FaultyLinks()
	got := s.offline(map[string]any{"faulty_links": []string{faulty[0], otherLink(s.act, faulty)}, "slow_link": []string{otherLink(s.act, faulty)}})
	if r := got["faulty-links"]; r.Status != teaching.Fail || r.Earned != 0 {
		t.Errorf("one right, one wrong: %+v", r)
	}
	got = s.offline(map[string]any{"faulty_links": faulty[:2]})
	if r := got["faulty-links"]; r.Status != teaching.Fail || r.Earned != 8 {
		t.Errorf("two of three right: earned %v of 12, want 8 (%+v)", r.Earned, r)
	}
	s.verify(map[string]any{"slow_link": []string{otherLink(s.act, faulty)}, "slow_signal": "no-traffic"},
		[]string{"slow-link", "slow-signal"})
}

// corruptLinks are the links whose receiving switch ports counted
// corruption drops, sorted.
func (s *student) corruptLinks() []string {
	s.t.Helper()
	st, err := s.m.Store.Get(s.name())
	if err != nil {
		s.t.Fatal(err)
	}
	ports, err := s.m.Store.Control(st).Stats()
	if err != nil {
		s.t.Fatal(err)
	}
	var out []string
	for _, p := range ports {
		if p.Counters.DropCorrupt > 0 && !slices.Contains(out, p.Link) {
			out = append(out, p.Link)
		}
	}
	slices.Sort(out)
	return out
}

// otherLink is an aggregation-core link that is not among links.
func otherLink(a *session.Active, links []string) string {
	for _, l := range a.Lab.Topo.Links {
		if l.Stage == "agg-core" && !slices.Contains(links, l.Name) {
			return l.Name
		}
	}
	return ""
}

// captureDuring runs ftlab capture on targets into the workspace's file
// while the step's traffic runs, as a student does in two terminals: the
// capture is armed first and stops after count frames.
func (s *student) captureDuring(step, file, filter string, count int, targets ...string) {
	s.t.Helper()
	st, err := s.m.Store.Get(s.name())
	if err != nil {
		s.t.Fatal(err)
	}
	cl, err := capture.LabOf(s.m.Store, st)
	if err != nil {
		s.t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(s.act.Session.Workspace, file))
	if err != nil {
		s.t.Fatal(err)
	}
	defer out.Close()
	ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
	defer cancel()
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := capture.Run(ctx, cl, capture.Options{Targets: targets, Filter: filter, Count: count, Format: capture.FormatPcapng,
			Out: out, Ready: func([]capture.Port) { close(ready) }})
		done <- err
	}()
	select {
	case <-ready:
	case err := <-done:
		s.t.Fatalf("capture: %v", err)
	}
	s.run(step)
	if err := <-done; err != nil && !errors.Is(err, context.DeadlineExceeded) {
		s.t.Fatalf("capture: %v", err)
	}
}

// drawGraph writes ftlab graph's SVG of the lab into the workspace.
func (s *student) drawGraph(file string) {
	s.t.Helper()
	st, err := s.m.Store.Get(s.name())
	if err != nil {
		s.t.Fatal(err)
	}
	g, err := graph.FromLab(s.ctx, s.m.Store, st)
	if err != nil {
		s.t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(s.act.Session.Workspace, file))
	if err != nil {
		s.t.Fatal(err)
	}
	defer out.Close()
	if err := graph.SVG(out, g); err != nil {
		s.t.Fatal(err)
	}
}
