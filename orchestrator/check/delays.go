package check

import (
	"fmt"
	"strings"
	"time"

	"github.com/ftlab/ftlab/internal/topology"
)

// delays says the emulated propagation delays of a fabric's links, per
// stage from the hosts up: "host-leaf 3ms, leaf-spine 3ms" ("2ms-10ms"
// when a stage's links differ), and their jitter bounds if any; "" for a
// fabric without delays.
func delays(t *topology.Topology) string {
	if t == nil {
		return ""
	}
	type span struct{ lo, hi, jitter time.Duration }
	var order []topology.Stage
	spans := map[topology.Stage]*span{}
	any := false
	for i := range t.Links {
		l := &t.Links[i]
		s := spans[l.Stage]
		if s == nil {
			s = &span{lo: l.Up.Delay, hi: l.Up.Delay}
			spans[l.Stage] = s
			order = append(order, l.Stage)
		}
		for _, p := range []topology.LinkParams{l.Up, l.Down} {
			s.lo, s.hi, s.jitter = min(s.lo, p.Delay), max(s.hi, p.Delay), max(s.jitter, p.Jitter)
			any = any || p.Delay > 0 || p.Jitter > 0
		}
	}
	if !any {
		return ""
	}
	var parts []string
	for _, st := range order {
		s := spans[st]
		d := s.lo.String()
		if s.hi != s.lo {
			d += "-" + s.hi.String()
		}
		if s.jitter > 0 {
			d += fmt.Sprintf(" (jitter up to %s)", s.jitter)
		}
		parts = append(parts, fmt.Sprintf("%s %s", st, d))
	}
	return strings.Join(parts, ", ")
}
