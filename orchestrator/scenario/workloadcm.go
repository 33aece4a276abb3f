package scenario

import (
	"strings"

	"github.com/ftlab/ftlab/orchestrator/workload"
)

// cmFile finds and reads the htsim connection matrix of a cm workload
// (workload.file), found like a topology file; its problems are reported
// with the matrix file's own lines. It reports whether one was given.
func (d *workloadDecoder) cmFile() bool {
	s, ok := d.scalar("file", "an htsim connection matrix file such as traffic.cm")
	if !ok {
		return d.has("file")
	}
	path, tried := d.l.find(s)
	if path == "" {
		d.problem("file", "cannot find %s (looked for %s)", s, strings.Join(tried, ", "))
	} else if cm, err := workload.ReadConnMatrix(path); err != nil {
		d.problem("file", "%s has problems, listed with their own file name", path)
		d.pr.AddError(d.w.Val("file"), "workload.file", err)
	} else {
		d.spec.CM = cm
	}
	return true
}
