package teaching

import (
	"context"
	"time"

	"github.com/ftlab/ftlab/orchestrator/fabric"
)

// Status is a check's verdict.
type Status string

const (
	Pass Status = "pass"
	Fail Status = "fail"
	// Inconclusive: the measurement the check reads cannot be trusted (its
	// run's fidelity verdict is WARN: the machine, not the network, may
	// have set the numbers). Never counted as failed; rerun.
	Inconclusive Status = "inconclusive"
	// Skipped: the check needs a feature this ftlab lacks, or was not
	// evaluated (grading a live check nobody recorded).
	Skipped Status = "skipped"
)

// Outcome is what evaluating one check found.
type Outcome struct {
	Status Status `json:"status"`
	// Observed says what the check saw, in a line.
	Observed string `json:"observed,omitempty"`
	// Reason says why the check failed, is inconclusive or was skipped.
	Reason string `json:"reason,omitempty"`
	// Expected is the right answer, for the instructor's grades; student
	// reports leave it out.
	Expected string `json:"expected,omitempty"`
	// Credit is the share of the check's points earned, 0..1: 1 for a
	// pass, partial for set answers with partial credit.
	Credit float64 `json:"credit"`
}

func pass(observed string) Outcome { return Outcome{Status: Pass, Observed: observed, Credit: 1} }

func fail(observed, reason string) Outcome {
	return Outcome{Status: Fail, Observed: observed, Reason: reason}
}

func inconclusive(reason string) Outcome { return Outcome{Status: Inconclusive, Reason: reason} }

func skipped(reason string) Outcome { return Outcome{Status: Skipped, Reason: reason} }

// Spec is the kind-specific part of a check, able to judge it.
type Spec interface {
	Evaluate(ctx context.Context, env *Env) Outcome
}

// Live is the running lab, for the checks that look at it. The session
// package implements it on a real lab.
type Live interface {
	// PingAll sends a UDP echo between every pair of hosts.
	PingAll(ctx context.Context) (*fabric.PingAllResult, error)
	// Stats is the document `ftlab stats --json` prints.
	Stats(ctx context.Context) (any, error)
	// LabDoc describes the lab's state: name, failed links, data plane.
	LabDoc(ctx context.Context) (any, error)
	// Exec runs argv inside a node's network namespace, no shell.
	Exec(ctx context.Context, node string, argv []string, timeout time.Duration) (ExecResult, error)
}

// ExecResult is what a command inside a node did.
type ExecResult struct {
	ExitCode int    `json:"exit_code"`
	Output   string `json:"output"` // stdout and stderr, interleaved
}

// Run is a step's latest measured run, as the checks see it.
type Run struct {
	Step    string   `json:"step"`
	Dir     string   `json:"dir"`
	Verdict string   `json:"verdict"` // the summary's fidelity verdict
	Reasons []string `json:"reasons,omitempty"`
	// Summary is summary.json, decoded as JSON.
	Summary any `json:"-"`
}

// Env is what checks are evaluated against.
type Env struct {
	Lab     *Lab
	Facts   *Facts
	Answers *Answers
	// Runs holds each step's latest measured run, by step id.
	Runs map[string]*Run
	// Live is the running lab; nil when grading submissions offline.
	Live Live
	// Workspace is the student's workspace (or submission) directory.
	Workspace string
	// Features are the optional ftlab features this build has.
	Features map[string]bool
}
