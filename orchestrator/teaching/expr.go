package teaching

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"

	"github.com/ftlab/ftlab/internal/topology"
)

// Predicates and computed answers are expressions of expr-lang/expr
// (https://expr-lang.org) over JSON documents. A check's expression sees
// these names (docs/labs.md lists their fields):
//
//	stats     ftlab stats --json: {directions: [...], ports: [...]} (live checks)
//	lab       the lab: {name, failed_links: [...], dataplane: {...}} (live checks)
//	summary   summary.json of the check's run (checks with run:)
//	runs      summary.json of each step's latest run, by step id
//	answers   the student's answers, by question id
//	answer    the answer a check judges (answer checks)
//	variant   the student's variant: {student, seed, faults: [...], picks: {...}}
//	topology  {name, k, hosts, switches, links}: names, roles, pods, addresses
//
// and these functions besides expr's own (filter, map, sum, max, len, all,
// any, ...):
//
//	cell(summary, "policy=ecmp")    the cell whose labels include all of these
//	queue(cell, "A->C")             a cell's queue summary of one direction
//	fabricmax(cell, "max_backlog_bytes")  the largest value of a queue field over E->A, A->C, C->A, A->E
//	dir(stats, "A->C")              stats totals of one direction
//	port(stats, "e0-0", "a0-0")     the port of switch e0-0 towards a0-0
//	link("a0-0", "e0-0")            the link's name, either end first: "e0-0~a0-0"
//
// fabricStages are a fat tree's switch-to-switch directions.
var fabricStages = []string{"E->A", "A->C", "C->A", "A->E"}

var exprNames = []string{"stats", "lab", "summary", "runs", "answers", "answer", "variant", "topology"}

// exprFunctions are the helpers every expression may call.
func exprFunctions(t *topology.Topology) []expr.Option {
	return []expr.Option{
		expr.Function("cell", func(p ...any) (any, error) { return cellOf(p[0], p[1].(string)) }, new(func(any, string) any)),
		expr.Function("queue", func(p ...any) (any, error) {
			return findBy(field(p[0], "queues"), "direction", p[1].(string), "queue")
		}, new(func(any, string) any)),
		expr.Function("fabricmax", func(p ...any) (any, error) {
			qs, _ := field(p[0], "queues").([]any)
			best, found := 0.0, false
			for _, q := range qs {
				if d, _ := field(q, "direction").(string); slices.Contains(fabricStages, d) {
					if v, ok := toFloat(field(q, p[1].(string))); ok {
						best, found = max(best, v), true
					}
				}
			}
			if !found {
				return nil, fmt.Errorf("the cell has no %s for the fabric stages", p[1])
			}
			return best, nil
		}, new(func(any, string) float64)),
		expr.Function("dir", func(p ...any) (any, error) {
			return findBy(field(p[0], "directions"), "direction", p[1].(string), "direction")
		}, new(func(any, string) any)),
		expr.Function("port", func(p ...any) (any, error) {
			sw, peer := p[1].(string), p[2].(string)
			ports, _ := field(p[0], "ports").([]any)
			for _, x := range ports {
				if field(x, "switch") == sw && field(x, "ifname") == peer {
					return x, nil
				}
			}
			return nil, fmt.Errorf("no port of switch %s towards %s", sw, peer)
		}, new(func(any, string, string) any)),
		expr.Function("link", func(p ...any) (any, error) {
			name, ok := canonicalLink(t, p[0].(string)+"~"+p[1].(string))
			if !ok {
				return nil, fmt.Errorf("no link between %s and %s", p[0], p[1])
			}
			return name, nil
		}, new(func(string, string) string)),
	}
}

// Expr is a compiled expression and its source.
type Expr struct {
	Src  string
	prog *vm.Program
}

// compileExpr compiles src against the names above; asBool makes it a
// predicate. Errors carry expr's column and a caret under the source.
func compileExpr(src string, asBool bool, t *topology.Topology) (*Expr, error) {
	env := map[string]any{}
	for _, n := range exprNames {
		env[n] = map[string]any{}
	}
	opts := append([]expr.Option{expr.Env(env)}, exprFunctions(t)...)
	if asBool {
		opts = append(opts, expr.AsBool())
	}
	p, err := expr.Compile(src, opts...)
	if err != nil {
		return nil, err
	}
	return &Expr{Src: src, prog: p}, nil
}

// run evaluates the expression in env.
func (e *Expr) run(env map[string]any) (any, error) {
	out, err := expr.Run(e.prog, env)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.Src, flatten(err))
	}
	return out, nil
}

// flatten puts expr's multi-line error (message, source, caret) on one line.
func flatten(err error) error {
	first, _, _ := strings.Cut(err.Error(), "\n")
	return fmt.Errorf("%s", strings.TrimSpace(first))
}

// JSONDoc turns a Go value into the generic JSON document an expression
// sees: the same field names a user sees in ftlab's JSON output.
func JSONDoc(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func field(v any, name string) any {
	if m, ok := v.(map[string]any); ok {
		return m[name]
	}
	return nil
}

func findBy(list any, key, want, what string) (any, error) {
	items, _ := list.([]any)
	var have []string
	for _, x := range items {
		s, _ := field(x, key).(string)
		if s == want {
			return x, nil
		}
		have = append(have, s)
	}
	return nil, fmt.Errorf("no %s %q (there are: %s)", what, want, strings.Join(have, ", "))
}

// cellOf finds the cell of a summary whose name's labels include every
// label of want ("policy=ecmp,workload.size=1MiB"; "base" for a scenario
// without compare).
func cellOf(summary any, want string) (any, error) {
	cells, _ := field(summary, "cells").([]any)
	labels := func(name string) map[string]string {
		m := map[string]string{}
		for _, part := range strings.Split(name, ",") {
			if k, v, ok := strings.Cut(part, "="); ok {
				m[k] = v
			} else {
				m[part] = ""
			}
		}
		return m
	}
	w := labels(want)
	var names []string
	for _, c := range cells {
		name, _ := field(c, "cell").(string)
		names = append(names, name)
		have := labels(name)
		ok := true
		for k, v := range w {
			if hv, found := have[k]; !found || hv != v {
				ok = false
				break
			}
		}
		if ok {
			return c, nil
		}
	}
	if cells == nil {
		return nil, fmt.Errorf("no run summary here: the check needs a run")
	}
	return nil, fmt.Errorf("no cell %q (cells: %s)", want, strings.Join(names, "; "))
}

// canonicalLink turns "X~Y" (either end first) into the topology's name
// of that link.
func canonicalLink(t *topology.Topology, s string) (string, bool) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "~")
	if !ok || t == nil {
		return "", false
	}
	l, _, ok := t.LinkBetween(strings.TrimSpace(a), strings.TrimSpace(b))
	if !ok {
		return "", false
	}
	return l.Name, true
}

// topologyDoc is what expressions see as topology.
func topologyDoc(t *topology.Topology) any {
	if t == nil {
		return map[string]any{}
	}
	node := func(n *topology.Node) map[string]any {
		return map[string]any{"name": n.Name, "role": string(n.Role), "pod": n.Pod, "edge": n.Edge, "group": n.Group,
			"index": n.Index, "addr": n.Addr.String()}
	}
	var hosts, switches, links []any
	for _, n := range t.Hosts() {
		hosts = append(hosts, node(n))
	}
	for _, n := range t.Switches() {
		switches = append(switches, node(n))
	}
	for _, l := range t.Links {
		links = append(links, map[string]any{"name": l.Name, "a": l.A.Node, "b": l.B.Node, "stage": string(l.Stage)})
	}
	return map[string]any{"name": t.Name, "kind": string(t.Kind), "k": t.K, "hosts": hosts, "switches": switches, "links": links}
}

// equalValues compares two JSON-ish values: numbers by value whatever
// their Go type, strings exactly, lists element by element.
func equalValues(a, b any) bool {
	if x, ok := toFloat(a); ok {
		y, ok := toFloat(b)
		return ok && x == y
	}
	ra, rb := reflect.ValueOf(a), reflect.ValueOf(b)
	if ra.Kind() == reflect.Slice && rb.Kind() == reflect.Slice {
		if ra.Len() != rb.Len() {
			return false
		}
		for i := range ra.Len() {
			if !equalValues(ra.Index(i).Interface(), rb.Index(i).Interface()) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, true
	case float32:
		return float64(x), true
	}
	return 0, false
}

// toStrings turns a list value into strings.
func toStrings(v any) ([]string, bool) {
	switch x := v.(type) {
	case []string:
		return slices.Clone(x), true
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	case string:
		return []string{x}, true
	}
	return nil, false
}
