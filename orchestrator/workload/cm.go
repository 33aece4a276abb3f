package workload

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ftlab/ftlab/internal/yamldoc"
)

// ConnMatrix is an htsim connection matrix (a .cm file), so that the
// traffic of a simulation runs in ftlab too:
//
//	Nodes 16
//	Connections 3
//	Triggers 1
//	0->5 id 1 start 0 size 1000000 send_done_trigger 1
//	3->9 id 2 start 10.5 size 65536
//	5->0 id 3 trigger 1 size 1000000
//	trigger id 1 oneshot
//
// A connection is SRC->DST (htsim node indexes) and its attributes: size
// in bytes, start in microseconds or trigger (start when that trigger
// fires), send_done_trigger or recv_done_trigger (activate a trigger when
// it completes), id, prio. A trigger is oneshot, multishot or barrier
// (with count). ftlab starts a message when every message it waits for
// has completed, so a trigger must mean exactly that: a barrier whose
// count is the number of connections that activate it, or a oneshot or
// multishot with a single activator. Those that fire on the first of
// several activations cannot be run faithfully and are refused.
type ConnMatrix struct {
	File     string      `json:"file"`
	Nodes    int         `json:"nodes"`
	Conns    []CMConn    `json:"connections"`
	Triggers []CMTrigger `json:"triggers,omitempty"`
}

// CMConn is one connection of a .cm file.
type CMConn struct {
	Line     int           `json:"line"`
	Src      int           `json:"src"`
	Dst      int           `json:"dst"`
	ID       int           `json:"id,omitempty"`
	Size     uint64        `json:"size"`
	Start    time.Duration `json:"start_ns"`
	HasStart bool          `json:"has_start"`
	Trigger  int           `json:"trigger,omitempty"`   // starts when this trigger fires
	SendDone int           `json:"send_done,omitempty"` // activates this trigger when done
	RecvDone int           `json:"recv_done,omitempty"` // likewise (ftlab: the same moment)
}

// CMTrigger is one trigger of a .cm file.
type CMTrigger struct {
	Line  int    `json:"line"`
	ID    int    `json:"id"`
	Type  string `json:"type"` // oneshot, multishot, barrier
	Count int    `json:"count,omitempty"`
}

// ReadConnMatrix reads a .cm file; see ParseConnMatrix.
func ReadConnMatrix(path string) (*ConnMatrix, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseConnMatrix(path, data)
}

// cmTriggerTypes are the trigger types of htsim.
var cmTriggerTypes = []string{"oneshot", "multishot", "barrier"}

// ParseConnMatrix parses a connection matrix. Problems come all at once
// as a yamldoc.Errors naming file, line and column.
func ParseConnMatrix(file string, data []byte) (*ConnMatrix, error) {
	cm := &ConnMatrix{File: file}
	var pr yamldoc.Problems
	header := map[string]int{}
	headerLine := map[string]int{}
	inBody := false
	for ln, raw := range strings.Split(string(data), "\n") {
		line := ln + 1
		text := strings.TrimRight(raw, "\r")
		toks := fields(text)
		if len(toks) == 0 || strings.HasPrefix(toks[0].s, "#") {
			continue
		}
		at := func(t cmTok) yamldoc.Pos { return yamldoc.Pos{Line: line, Column: t.col} }
		head := toks[0].s
		switch {
		case head == "Nodes" || head == "Connections" || head == "Triggers" || head == "Failures":
			if inBody {
				pr.Add(at(toks[0]), head, "%s belongs in the header, before the first connection", head)
			}
			if len(toks) != 2 {
				pr.Add(at(toks[0]), head, "want %q followed by a number", head)
				continue
			}
			n, err := strconv.Atoi(toks[1].s)
			if err != nil || n < 0 {
				pr.Add(at(toks[1]), head, "%q is not a count", toks[1].s)
				continue
			}
			if _, dup := header[head]; dup {
				pr.Add(at(toks[0]), head, "given twice (first at line %d)", headerLine[head])
			}
			header[head], headerLine[head] = n, line
		case strings.Contains(head, "->"):
			inBody = true
			if c, ok := parseCMConn(toks, line, &pr); ok {
				cm.Conns = append(cm.Conns, c)
			}
		case head == "trigger":
			inBody = true
			if t, ok := parseCMTrigger(toks, line, &pr); ok {
				cm.Triggers = append(cm.Triggers, t)
			}
		case head == "failure":
			inBody = true
			pr.Add(at(toks[0]), "failure", "link failures are not part of an ftlab workload: give them as the scenario's faults (kind: link)")
		default:
			pr.Add(at(toks[0]), "", "unknown line %q: want Nodes, Connections, Triggers, SRC->DST ..., or trigger ...", head)
		}
	}
	cm.Nodes = header["Nodes"]
	if _, ok := header["Nodes"]; !ok {
		pr.Add(yamldoc.Pos{Line: 1}, "Nodes", "missing: the header must say how many nodes the matrix spans (Nodes N)")
	}
	if n, ok := header["Connections"]; !ok {
		pr.Add(yamldoc.Pos{Line: 1}, "Connections", "missing: the header must say how many connections follow (Connections %d)", len(cm.Conns))
	} else if n != len(cm.Conns) {
		pr.Add(yamldoc.Pos{Line: headerLine["Connections"]}, "Connections", "says %d, but the file has %d connections", n, len(cm.Conns))
	}
	if n := header["Triggers"]; n != len(cm.Triggers) {
		pr.Add(yamldoc.Pos{Line: max(1, headerLine["Triggers"])}, "Triggers", "says %d, but the file has %d triggers", n, len(cm.Triggers))
	}
	if len(cm.Conns) == 0 && header["Connections"] == 0 {
		pr.Add(yamldoc.Pos{Line: 1}, "", "the connection matrix has no connections")
	}
	ids := map[int]int{}
	for _, c := range cm.Conns {
		if c.Src >= cm.Nodes || c.Dst >= cm.Nodes {
			if _, ok := header["Nodes"]; ok {
				pr.Add(yamldoc.Pos{Line: c.Line, Column: 1}, "", "%d->%d: the header says Nodes %d (0..%d)", c.Src, c.Dst, cm.Nodes, cm.Nodes-1)
			}
		}
		if c.ID != 0 {
			if first, dup := ids[c.ID]; dup {
				pr.Add(yamldoc.Pos{Line: c.Line}, "id", "flow id %d is already the connection at line %d", c.ID, first)
			}
			ids[c.ID] = c.Line
		}
	}
	defined := map[int]int{}
	for _, t := range cm.Triggers {
		if first, dup := defined[t.ID]; dup {
			pr.Add(yamldoc.Pos{Line: t.Line}, "id", "trigger %d is already defined at line %d", t.ID, first)
		}
		defined[t.ID] = t.Line
	}
	for _, c := range cm.Conns {
		for _, ref := range []struct {
			field string
			id    int
		}{{"trigger", c.Trigger}, {"send_done_trigger", c.SendDone}, {"recv_done_trigger", c.RecvDone}} {
			if _, ok := defined[ref.id]; ref.id != 0 && !ok {
				pr.Add(yamldoc.Pos{Line: c.Line}, ref.field, "trigger %d is not defined (add a line: trigger id %d barrier count N)", ref.id, ref.id)
			}
		}
	}
	if pr.Len() == 0 {
		checkCMTriggers(cm, &pr)
	}
	if err := pr.Result(file); err != nil {
		return nil, err
	}
	return cm, nil
}

type cmTok struct {
	s   string
	col int
}

// fields splits a line at spaces and tabs, keeping each word's column.
func fields(s string) []cmTok {
	var out []cmTok
	for i := 0; i < len(s); {
		if s[i] == ' ' || s[i] == '\t' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] != ' ' && s[j] != '\t' {
			j++
		}
		out = append(out, cmTok{s[i:j], i + 1})
		i = j
	}
	return out
}

func parseCMConn(toks []cmTok, line int, pr *yamldoc.Problems) (CMConn, bool) {
	c := CMConn{Line: line}
	before := pr.Len()
	at := func(t cmTok) yamldoc.Pos { return yamldoc.Pos{Line: line, Column: t.col} }
	src, dst, _ := strings.Cut(toks[0].s, "->")
	var err error
	if c.Src, err = strconv.Atoi(src); err != nil || c.Src < 0 {
		pr.Add(at(toks[0]), "", "%q: the source %q is not a node index", toks[0].s, src)
	}
	if c.Dst, err = strconv.Atoi(dst); err != nil || c.Dst < 0 {
		pr.Add(at(toks[0]), "", "%q: the destination %q is not a node index", toks[0].s, dst)
	}
	if pr.Len() == before && c.Src == c.Dst {
		pr.Add(at(toks[0]), "", "%s sends to itself", toks[0].s)
	}
	seen := map[string]bool{}
	hasSize := false
	for i := 1; i < len(toks); i++ {
		key := toks[i]
		if seen[key.s] {
			pr.Add(at(key), key.s, "given twice")
		}
		seen[key.s] = true
		if key.s == "addon" {
			pr.Add(at(key), key.s, "htsim's addon triggers have no ftlab equivalent")
			continue
		}
		if i+1 >= len(toks) {
			pr.Add(at(key), key.s, "%q needs a value", key.s)
			break
		}
		i++
		val := toks[i]
		id := func(what string) int {
			n, err := strconv.Atoi(val.s)
			if err != nil || n <= 0 {
				pr.Add(at(val), key.s, "%q is not a %s (a number from 1)", val.s, what)
			}
			return n
		}
		switch key.s {
		case "size":
			n, err := strconv.ParseUint(val.s, 10, 64)
			switch {
			case err != nil:
				pr.Add(at(val), "size", "%q is not a number of bytes", val.s)
			case n == 0:
				pr.Add(at(val), "size", "0: an htsim flow without a size runs for ever; an ftlab message needs its bytes")
			}
			c.Size, hasSize = n, true
		case "start":
			us, err := strconv.ParseFloat(val.s, 64)
			if err != nil || us < 0 || math.IsInf(us, 0) || us > float64(math.MaxInt64/int64(time.Microsecond)) {
				pr.Add(at(val), "start", "%q is not a start time in microseconds", val.s)
			}
			c.Start, c.HasStart = time.Duration(math.Round(us*float64(time.Microsecond))), true
		case "id":
			c.ID = id("flow id")
		case "trigger":
			c.Trigger = id("trigger id")
		case "send_done_trigger":
			c.SendDone = id("trigger id")
		case "recv_done_trigger":
			c.RecvDone = id("trigger id")
		case "prio":
			// Scheduling priority of some htsim transports; ftlab has
			// one class, and the traffic is the same.
			if _, err := strconv.Atoi(val.s); err != nil {
				pr.Add(at(val), "prio", "%q is not a number", val.s)
			}
		default:
			pr.Add(at(key), key.s, "unknown attribute %q (valid: size, start, id, trigger, send_done_trigger, recv_done_trigger, prio)", key.s)
		}
	}
	pos := yamldoc.Pos{Line: line, Column: 1}
	if !hasSize {
		pr.Add(pos, "size", "missing: every connection needs its size in bytes")
	}
	switch {
	case c.HasStart && c.Trigger != 0:
		pr.Add(pos, "", "both start and trigger: a connection starts at a time or when a trigger fires")
	case !c.HasStart && c.Trigger == 0:
		pr.Add(pos, "", "no start and no trigger: say when the connection starts")
	}
	return c, pr.Len() == before
}

func parseCMTrigger(toks []cmTok, line int, pr *yamldoc.Problems) (CMTrigger, bool) {
	t := CMTrigger{Line: line}
	before := pr.Len()
	at := func(tk cmTok) yamldoc.Pos { return yamldoc.Pos{Line: line, Column: tk.col} }
	for i := 1; i < len(toks); i++ {
		key := toks[i]
		switch {
		case slices.Contains(cmTriggerTypes, key.s):
			if t.Type != "" {
				pr.Add(at(key), "type", "a trigger has one type; this one is already %s", t.Type)
			}
			t.Type = key.s
		case key.s == "id" || key.s == "count":
			if i+1 >= len(toks) {
				pr.Add(at(key), key.s, "%q needs a value", key.s)
				continue
			}
			i++
			n, err := strconv.Atoi(toks[i].s)
			if err != nil || n <= 0 {
				pr.Add(at(toks[i]), key.s, "%q is not a number from 1", toks[i].s)
			}
			if key.s == "id" {
				t.ID = n
			} else {
				t.Count = n
			}
		default:
			pr.Add(at(key), "", "unknown trigger attribute %q (valid: id, oneshot, multishot, barrier, count)", key.s)
		}
	}
	pos := yamldoc.Pos{Line: line, Column: 1}
	if t.ID == 0 && pr.Len() == before {
		pr.Add(pos, "id", "missing: every trigger needs an id")
	}
	if t.Type == "" {
		pr.Add(pos, "type", "missing: oneshot, multishot or barrier")
	}
	if t.Type == "barrier" && t.Count == 0 && pr.Len() == before {
		pr.Add(pos, "count", "missing: a barrier fires after count activations")
	}
	return t, pr.Len() == before
}

// checkCMTriggers refuses triggers whose firing is not "every connection
// that activates it has completed", which is what an ftlab message can
// wait for, and cycles of connections waiting for each other.
func checkCMTriggers(cm *ConnMatrix, pr *yamldoc.Problems) {
	activators := map[int][]int{} // trigger -> connection indexes
	targets := map[int][]int{}
	for i, c := range cm.Conns {
		for _, id := range dedup(c.SendDone, c.RecvDone) {
			activators[id] = append(activators[id], i)
		}
		if c.Trigger != 0 {
			targets[c.Trigger] = append(targets[c.Trigger], i)
		}
	}
	for _, t := range cm.Triggers {
		n := len(activators[t.ID])
		pos := yamldoc.Pos{Line: t.Line, Column: 1}
		lines := connLines(cm, activators[t.ID])
		switch {
		case len(targets[t.ID]) == 0:
			continue // starts nothing: harmless
		case n == 0:
			pr.Add(pos, "", "trigger %d starts %s but no connection activates it (send_done_trigger %d), so they would never start",
				t.ID, plural(len(targets[t.ID]), "connection"), t.ID)
		case t.Type == "barrier" && t.Count > n:
			pr.Add(pos, "count", "barrier %d waits for %d activations but only %d connections activate it (lines %s): it would never fire", t.ID, t.Count, n, lines)
		case t.Type == "barrier" && t.Count < n:
			pr.Add(pos, "count", "barrier %d fires after %d of the %d connections that activate it (lines %s), whichever finish first; ftlab starts a message when all it waits for have completed: make count %d",
				t.ID, t.Count, n, lines, n)
		case t.Type != "barrier" && n > 1:
			pr.Add(pos, "type", "%s trigger %d fires when the first of %d connections (lines %s) completes; ftlab starts a message when all it waits for have completed: use barrier count %d",
				t.Type, t.ID, n, lines, n)
		case t.Type == "multishot" && len(targets[t.ID]) > 1:
			pr.Add(pos, "type", "multishot trigger %d has one activation, which starts only the first of its %d connections; the others would never start",
				t.ID, len(targets[t.ID]))
		}
	}
	if pr.Len() > 0 {
		return
	}
	if _, err := cmOrder(cm); err != nil {
		pr.Add(yamldoc.Pos{Line: err.line, Column: 1}, "", "%s", err.msg)
	}
}

func dedup(a, b int) []int {
	switch {
	case a == 0 && b == 0:
		return nil
	case a == 0:
		return []int{b}
	case b == 0 || a == b:
		return []int{a}
	}
	return []int{a, b}
}

func connLines(cm *ConnMatrix, idx []int) string {
	s := make([]string, len(idx))
	for i, j := range idx {
		s[i] = strconv.Itoa(cm.Conns[j].Line)
	}
	return strings.Join(s, ", ")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

type cmOrderError struct {
	line int
	msg  string
}

// cmOrder returns the connections in an order where every connection
// comes after those it waits for (file order otherwise), and what each
// waits for (indexes into the file's connections).
func cmOrder(cm *ConnMatrix) ([]int, *cmOrderError) {
	activators := map[int][]int{}
	for i, c := range cm.Conns {
		for _, id := range dedup(c.SendDone, c.RecvDone) {
			activators[id] = append(activators[id], i)
		}
	}
	waits := make([][]int, len(cm.Conns))
	for i, c := range cm.Conns {
		if c.Trigger != 0 {
			waits[i] = activators[c.Trigger]
		}
	}
	done := make([]bool, len(cm.Conns))
	var order []int
	for len(order) < len(cm.Conns) {
		progress := false
		for i := range cm.Conns {
			if done[i] {
				continue
			}
			ready := true
			for _, w := range waits[i] {
				ready = ready && done[w]
			}
			if ready {
				done[i] = true
				order = append(order, i)
				progress = true
			}
		}
		if !progress {
			var stuck []string
			first := 0
			for i := range cm.Conns {
				if !done[i] {
					if first == 0 {
						first = cm.Conns[i].Line
					}
					stuck = append(stuck, strconv.Itoa(cm.Conns[i].Line))
				}
			}
			return nil, &cmOrderError{first, fmt.Sprintf("the connections at lines %s wait for each other through their triggers: none could ever start", strings.Join(stuck, ", "))}
		}
	}
	return order, nil
}

// checkHosts reports connections whose nodes have no host.
func (cm *ConnMatrix) checkHosts(n int) []string {
	var out []string
	for _, c := range cm.Conns {
		if c.Src >= n || c.Dst >= n {
			out = append(out, fmt.Sprintf("%s:%d: %d->%d, but the workload maps htsim nodes 0..%d to its %d hosts (list the hosts node i stands for in hosts)",
				cm.File, c.Line, c.Src, c.Dst, n-1, n))
		}
	}
	return out
}

// connMatrixMessages turns the connections into messages: node i is
// hosts[i]; a connection that starts on a trigger waits for every
// connection that activates it.
func connMatrixMessages(hosts []Host, cm *ConnMatrix) []Message {
	order, _ := cmOrder(cm) // ParseConnMatrix checked
	id := make([]int, len(cm.Conns))
	for newID, i := range order {
		id[i] = newID
	}
	activators := map[int][]int{}
	for i, c := range cm.Conns {
		for _, t := range dedup(c.SendDone, c.RecvDone) {
			activators[t] = append(activators[t], i)
		}
	}
	msgs := make([]Message, len(order))
	for newID, i := range order {
		c := cm.Conns[i]
		m := Message{ID: newID, Src: hosts[c.Src].Name, Dst: hosts[c.Dst].Name, Bytes: c.Size, Start: c.Start}
		if c.Trigger != 0 {
			for _, a := range activators[c.Trigger] {
				m.After = append(m.After, id[a])
			}
			slices.Sort(m.After)
		}
		msgs[newID] = m
	}
	return msgs
}
