package topology

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ftlab/ftlab/internal/yamldoc"
)

// Resolve checks the spec and builds the fabric it describes. file names
// the file the spec came from in error messages and becomes
// Topology.Source; its base name is the default Topology.Name.
//
// Every problem is reported, not just the first: problems found while
// decoding, bad values, names that do not exist, and parameters that
// contradict each other. The error is then an yamldoc.Errors sorted by position.
//
// Link parameters are layered, each layer overriding the ones before it:
// built-in defaults, links:, stages:, switches: (in file order), then
// overrides: (in list order).
func (s *Spec) Resolve(file string) (*Topology, error) {
	var pr yamldoc.Problems
	pr.AddAll("", s.org.Problems())
	if s.org.NotMapping() { // nothing else can be checked
		return nil, pr.Result(file)
	}
	s.checkName(&pr)
	kindOK := s.kindKnown(&pr)
	var t *Topology
	if kindOK {
		t = s.skeleton(&pr)
	}
	// st stays nil when the fabric could not be built; values are then
	// still parsed so that their mistakes are reported in the same run.
	var st state
	if t != nil {
		st = newState(len(t.Links), defaults())
	}
	rank := 0
	next := func() int { rank++; return rank }

	pr.AddAll("links", s.Links.org.Problems())
	if c := s.Links.compile("links", next(), &pr); st != nil {
		for i := range st {
			st[i].apply(c, bothSides...)
		}
	}

	for _, name := range s.stageNames() {
		p, path := s.Stages[name], "stages."+string(name)
		pr.AddAll(path, p.org.Problems())
		c := p.compile(path, next(), &pr)
		p.checkSetsSomething(s.org.Key(path), path, &pr)
		if !kindOK || !s.checkStage(name, &pr) || st == nil {
			continue
		}
		for i := range t.Links {
			if t.Links[i].Stage == name {
				st[i].apply(c, bothSides...)
			}
		}
	}

	for _, name := range s.switchNames() {
		p, path := s.Switches[name], "switches."+name
		pr.AddAll(path, p.org.Problems())
		c := p.compile(path, next(), &pr)
		p.checkSetsSomething(s.org.Key(path), path, &pr)
		if t == nil {
			continue
		}
		if n, ok := s.checkSwitch(t, name, &pr); ok {
			for _, port := range n.Ports {
				st[port.Link].apply(c, bothSides...)
			}
		}
	}

	for i := range s.Overrides {
		s.Overrides[i].apply(t, st, fmt.Sprintf("overrides[%d]", i), next(), &pr)
	}

	if st != nil {
		st.check(t, &pr)
	}
	if err := pr.Result(file); err != nil {
		return nil, err
	}
	st.store(t)
	t.Name = s.defaultName(file)
	t.Source = file
	t.index() // built now so that concurrent readers never race to build it
	return t, nil
}

// defaultName is Name, else the file's base name without extension, else
// a name made from the shape (for specs built in Go).
func (s *Spec) defaultName(file string) string {
	if s.Name != "" {
		return s.Name
	}
	if base := filepath.Base(file); file != "" {
		if name := strings.TrimSuffix(base, filepath.Ext(base)); name != "" {
			return name
		}
	}
	if s.Kind == FatTree {
		return fmt.Sprintf("fattree-k%d", s.K)
	}
	return fmt.Sprintf("leafspine-%dx%d", s.Leaves, s.Spines)
}

// NewFatTree resolves a k-ary fat tree with default link parameters.
func NewFatTree(k int) (*Topology, error) {
	return (&Spec{Kind: FatTree, K: k}).Resolve("")
}

// NewLeafSpine resolves a leaf-spine fabric with default link parameters.
func NewLeafSpine(leaves, spines, hostsPerLeaf int) (*Topology, error) {
	return (&Spec{Kind: LeafSpine, Leaves: leaves, Spines: spines, HostsPerLeaf: hostsPerLeaf}).Resolve("")
}
