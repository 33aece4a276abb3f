package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"

	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/orchestrator/fabric"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/orchestrator/teaching"
	"github.com/ftlab/ftlab/switchd"
)

// live is teaching.Live on a real lab. Each check reads the lab's state
// afresh: the student changes it between checks (a link down, a run).
type live struct {
	store *lab.Store
	name  string
}

var _ teaching.Live = (*live)(nil)

func (l *live) state() (*lab.State, error) {
	st, err := l.store.Get(l.name)
	if err != nil {
		return nil, err
	}
	if st.Phase != lab.PhaseUp {
		return nil, fmt.Errorf("lab %s is %s, not up", l.name, st.Phase)
	}
	return st, nil
}

func (l *live) PingAll(ctx context.Context) (*fabric.PingAllResult, error) {
	st, err := l.state()
	if err != nil {
		return nil, err
	}
	return fabric.PingAll(ctx, st.Topology, l.store.Namer(l.name))
}

func (l *live) Stats(ctx context.Context) (any, error) {
	st, err := l.state()
	if err != nil {
		return nil, err
	}
	ports, err := l.store.Control(st).Stats()
	if err != nil {
		return nil, err
	}
	return teaching.JSONDoc(statsView{Directions: switchd.TotalByDirection(ports), Ports: ports})
}

// statsView is what checks see as stats: the document `ftlab stats
// --json` prints.
type statsView struct {
	Directions []switchd.DirectionTotals `json:"directions"`
	Ports      []switchd.PortStats       `json:"ports"`
}

// labView is what checks see as lab.
type labView struct {
	Name        string         `json:"name"`
	Phase       lab.Phase      `json:"phase"`
	FailedLinks []string       `json:"failed_links"`
	DataPlane   switchd.Config `json:"dataplane"`
}

func (l *live) LabDoc(ctx context.Context) (any, error) {
	st, err := l.state()
	if err != nil {
		return nil, err
	}
	failed := lab.FailedLinks(st)
	if failed == nil {
		failed = []string{}
	}
	return teaching.JSONDoc(labView{Name: st.Name, Phase: st.Phase, FailedLinks: failed, DataPlane: st.DataPlane})
}

// Exec runs argv in the node's namespace: the child is forked from a
// thread inside it, so it starts there; no shell sees the arguments.
func (l *live) Exec(ctx context.Context, node string, argv []string, timeout time.Duration) (teaching.ExecResult, error) {
	st, err := l.state()
	if err != nil {
		return teaching.ExecResult{}, err
	}
	if _, ok := st.Topology.Node(node); !ok {
		return teaching.ExecResult{}, fmt.Errorf("lab %s has no node %q", l.name, node)
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return teaching.ExecResult{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, argv[1:]...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "FTLAB_LAB=" + l.name, "FTLAB_NODE=" + node}
	if err := nsutil.DoNamed(l.store.NamespaceName(l.name, node), cmd.Start); err != nil {
		return teaching.ExecResult{}, fmt.Errorf("node %s: %w", node, err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return teaching.ExecResult{ExitCode: -1, Output: out.String()}, fmt.Errorf("%s did not finish within %s", argv[0], timeout)
	case errors.As(err, &ee):
		return teaching.ExecResult{ExitCode: ee.ExitCode(), Output: out.String()}, nil
	case err != nil:
		return teaching.ExecResult{}, err
	}
	return teaching.ExecResult{Output: out.String()}, nil
}
