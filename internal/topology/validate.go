package topology

import (
	"regexp"
	"slices"
	"strings"

	"github.com/ftlab/ftlab/internal/yamldoc"
)

var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// checkName accepts names that are safe to use in file and namespace
// names, where the lab lifecycle may put them.
func (s *Spec) checkName(pr *yamldoc.Problems) {
	if s.Name != "" && !validName.MatchString(s.Name) {
		pr.Add(s.org.Val("name"), "name", "%q may only contain letters, digits, '.', '_' and '-', and must start with a letter or digit", s.Name)
	}
}

// kindKnown reports whether Kind is valid, reporting it if not.
func (s *Spec) kindKnown(pr *yamldoc.Problems) bool {
	switch {
	case s.org.IsBad("kind"):
		return false
	case s.Kind == "":
		pr.Add(s.org.Pos(), "kind", "missing (valid: %s, %s)", FatTree, LeafSpine)
		return false
	case s.Kind != FatTree && s.Kind != LeafSpine:
		pr.Add(s.org.Val("kind"), "kind", "unknown kind %q (valid: %s, %s)", s.Kind, FatTree, LeafSpine)
		return false
	}
	return true
}

// skeleton checks the sizing fields for the (valid) kind and builds the
// fabric's nodes and links; nil when the size is unusable.
func (s *Spec) skeleton(pr *yamldoc.Problems) *Topology {
	if s.Kind == FatTree {
		for _, f := range []string{"leaves", "spines", "hosts_per_leaf"} {
			if s.has(f) {
				pr.Add(s.org.Key(f), f, "only for kind leafspine; a fattree is sized by k alone")
			}
		}
		if !s.sizeOK(pr, "k", s.K, MinK, MaxK, "an even number") {
			return nil
		}
		if s.K%2 != 0 {
			pr.Add(s.org.Val("k"), "k", "%d is odd; k must be an even number from %d to %d", s.K, MinK, MaxK)
			return nil
		}
		return buildFatTree(s.K)
	}
	if s.has("k") {
		pr.Add(s.org.Key("k"), "k", "only for kind fattree; a leafspine is sized by leaves, spines and hosts_per_leaf")
	}
	ok := s.sizeOK(pr, "leaves", s.Leaves, MinLeaves, MaxLeaves, "a number")
	ok = s.sizeOK(pr, "spines", s.Spines, MinSpines, MaxSpines, "a number") && ok
	ok = s.sizeOK(pr, "hosts_per_leaf", s.HostsPerLeaf, MinHostsPerLeaf, MaxHostsPerLeaf, "a number") && ok
	if !ok {
		return nil
	}
	return buildLeafSpine(s.Leaves, s.Spines, s.HostsPerLeaf)
}

// sizeOK checks that a sizing field is present and within [lo, hi]; what
// says what kind of number it is ("an even number").
func (s *Spec) sizeOK(pr *yamldoc.Problems, field string, v, lo, hi int, what string) bool {
	switch {
	case s.org.IsBad(field):
		return false
	case !s.has(field):
		pr.Add(s.org.Pos(), field, "missing; a %s needs %s, %s from %d to %d", s.Kind, field, what, lo, hi)
		return false
	case v < lo || v > hi:
		pr.Add(s.org.Val(field), field, "%d is out of range; %s must be %s from %d to %d", v, field, what, lo, hi)
		return false
	}
	return true
}

// checkStage reports a stage that does not exist in this kind of fabric.
func (s *Spec) checkStage(st Stage, pr *yamldoc.Problems) bool {
	valid := Stages(s.Kind)
	if slices.Contains(valid, st) {
		return true
	}
	names := make([]string, len(valid))
	for i, v := range valid {
		names[i] = string(v)
	}
	path := "stages." + string(st)
	pr.Add(s.org.Key(path), path, "%q is not a stage of a %s (valid: %s)", st, s.Kind, strings.Join(names, ", "))
	return false
}

// checkSwitch finds the switch a switches: entry names, explaining what
// the valid names are if it does not.
func (s *Spec) checkSwitch(t *Topology, name string, pr *yamldoc.Problems) (*Node, bool) {
	path := "switches." + name
	n, ok := t.Node(name)
	switch {
	case !ok:
		pr.Add(s.org.Key(path), path, "no switch named %q; %s", name, t.inventory(false))
		return nil, false
	case !n.Role.IsSwitch():
		pr.Add(s.org.Key(path), path, "%s is a host, and switches: applies to switches only; to change its link write an override: - between: [%s, %s]",
			name, name, t.Peer(n.Ports[0]).Node)
		return nil, false
	}
	return n, true
}

// stageNames lists the Stages keys in a fixed order: the kind's stages
// from the hosts up, then any others alphabetically.
func (s *Spec) stageNames() []Stage {
	order := Stages(s.Kind)
	rank := func(st Stage) int {
		if i := slices.Index(order, st); i >= 0 {
			return i
		}
		return len(order)
	}
	var names []Stage
	for st := range s.Stages {
		names = append(names, st)
	}
	slices.SortFunc(names, func(a, b Stage) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(string(a), string(b))
	})
	return names
}

// switchNames lists the Switches keys in file order, which decides which
// entry wins on a link between two listed switches; entries added in Go
// follow alphabetically.
func (s *Spec) switchNames() []string {
	var names []string
	for _, n := range s.switchOrder {
		if _, ok := s.Switches[n]; ok && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	var extra []string
	for n := range s.Switches {
		if !slices.Contains(names, n) {
			extra = append(extra, n)
		}
	}
	slices.Sort(extra)
	return append(names, extra...)
}
