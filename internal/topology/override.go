package topology

import (
	"fmt"

	"github.com/ftlab/ftlab/internal/yamldoc"
)

// ApplyOverrides applies link overrides to a resolved topology, in order,
// with the same checks and precedence as the overrides: list of a topology
// file (later entries win). It lets a scenario file change links of the
// topology it runs on. file and field locate the list in error messages:
// ("scenario.yaml", "links") reports "scenario.yaml:12:7: links[0].rate: ...".
// On error t is left unchanged.
func (t *Topology) ApplyOverrides(file, field string, overrides []Override) error {
	var pr yamldoc.Problems
	st := stateOf(t)
	for i := range overrides {
		overrides[i].apply(t, st, fmt.Sprintf("%s[%d]", field, i), i+1, &pr)
	}
	st.check(t, &pr)
	if err := pr.Result(file); err != nil {
		return err
	}
	st.store(t)
	return nil
}

// apply checks o and applies it to st. t and st are nil when the fabric
// could not be built (bad kind or size): o is then checked only for what
// does not depend on node names, so its other mistakes are still reported.
func (o *Override) apply(t *Topology, st state, path string, rank int, pr *yamldoc.Problems) {
	pr.AddAll(path, o.org.Problems())
	pr.AddAll(path, o.Params.org.Problems())
	c := o.Params.compile(path, rank, pr)
	between, ok := o.checkShape(path, pr)
	if !between {
		c.mtu = nil // already reported; never set half a link's MTU
	}
	if !ok || t == nil {
		return
	}
	if between {
		a, b := o.Between[0], o.Between[1]
		okA, okB := o.known(t, a, "between[0]", path, pr), o.known(t, b, "between[1]", path, pr)
		if !okA || !okB {
			return
		}
		if l, _, ok := o.linked(t, a, b, "between", path, pr); ok {
			st[l].apply(c, bothSides...)
		}
		return
	}
	okFrom, okTo := o.known(t, o.From, "from", path, pr), o.known(t, o.To, "to", path, pr)
	if !okFrom || !okTo {
		return
	}
	if l, side, ok := o.linked(t, o.From, o.To, "to", path, pr); ok {
		st[l].apply(c, side) // the direction sent from From's side
	}
}

// checkShape checks that o names one link in one of the two ways and sets
// something. between reports which way; ok is false when the link cannot
// be looked up.
func (o *Override) checkShape(path string, pr *yamldoc.Problems) (between, ok bool) {
	hasBetween := len(o.Between) > 0 || o.org.Has("between")
	hasDir := o.From != "" || o.To != "" || o.org.Has("from") || o.org.Has("to")
	clean := len(o.org.Problems()) == 0 // else the decoding problem explains what is missing
	if clean {
		o.Params.checkSetsSomething(o.org.Pos(), path, pr)
	}
	switch {
	case hasBetween && hasDir:
		pr.Add(o.org.Pos(), path, "give either between: (both directions) or from: and to: (one direction), not both")
		return false, false
	case !hasBetween && !hasDir:
		if clean {
			pr.Add(o.org.Pos(), path, "names no link; give between: [X, Y] for both directions or from: X and to: Y for one direction")
		}
		return false, false
	case hasBetween:
		switch {
		case o.org.IsBad("between"):
			return true, false
		case len(o.Between) != 2:
			pr.Add(o.org.Val("between"), yamldoc.JoinField(path, "between"), "expected two node names, e.g. [e0-0, a0-1], found %d", len(o.Between))
			return true, false
		case o.Between[0] == o.Between[1]:
			pr.Add(o.org.Val("between"), yamldoc.JoinField(path, "between"), "names %s twice; give the two ends of one link", o.Between[0])
			return true, false
		}
		return true, true
	}
	ok = true
	if o.Params.hasMTU() {
		ends := "X, Y"
		if o.From != "" && o.To != "" {
			ends = o.From + ", " + o.To
		}
		pr.Add(o.Params.org.Val("mtu"), yamldoc.JoinField(path, "mtu"), "mtu is per link and cannot be set for one direction (from/to); set it with between: [%s]", ends)
	}
	if o.From == "" && !o.org.IsBad("from") {
		pr.Add(o.org.Pos(), yamldoc.JoinField(path, "from"), "missing; to: %s needs from: naming the sending end of the link", o.To)
		ok = false
	}
	if o.To == "" && !o.org.IsBad("to") {
		pr.Add(o.org.Pos(), yamldoc.JoinField(path, "to"), "missing; from: %s needs to: naming the receiving end of the link", o.From)
		ok = false
	}
	return false, ok && !o.org.IsBad("from") && !o.org.IsBad("to")
}

// known reports whether a node exists, explaining the naming plan if not.
func (o *Override) known(t *Topology, name, field, path string, pr *yamldoc.Problems) bool {
	if _, ok := t.Node(name); ok {
		return true
	}
	pr.Add(o.org.Val(field), yamldoc.JoinField(path, field), "no node named %q; %s", name, t.inventory(true))
	return false
}

// linked finds the link between a and b, listing a's neighbours if none.
func (o *Override) linked(t *Topology, a, b, field, path string, pr *yamldoc.Problems) (link int, aSide Side, ok bool) {
	l, side, ok := t.LinkBetween(a, b)
	if !ok {
		n, _ := t.Node(a)
		pr.Add(o.org.Val(field), yamldoc.JoinField(path, field), "%s and %s are not linked; %s links only to %s", a, b, a, t.peers(n))
		return 0, 0, false
	}
	return l.ID, side, true
}
