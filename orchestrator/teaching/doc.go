// Package teaching is ftlab's engine for teaching labs: a lab is a
// directory (labs/<id>/) with lab.yaml (title, goals, topology, steps,
// questions, the variant a student's seed draws), a handout for students,
// one check file per step and an answers template; the instructor's
// solution lives apart in solution/.
//
// The package decodes lab and check files strictly (internal/yamldoc:
// every problem at once, as file:line:col), resolves them into typed
// objects and validates them; it evaluates checks through a registry of
// check kinds (reachability, stats and summary predicates, commands inside
// a node, answers with tolerances), writes per-student reports (report.md,
// results.json, JUnit XML) and grades folders of submissions.
//
// Everything here runs without a lab: checks that need the running fabric
// ask a Live, which orchestrator/teaching/session implements on a real lab
// and tests may fake. Predicates are expressions of expr-lang/expr over
// JSON documents (docs/labs.md lists them).
package teaching
