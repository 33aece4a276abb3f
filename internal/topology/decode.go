package topology

import (
	"fmt"

	"github.com/ftlab/ftlab/internal/yamldoc"
	"gopkg.in/yaml.v3"
)

var (
	specFields     = []string{"name", "kind", "k", "leaves", "spines", "hosts_per_leaf", "links", "stages", "switches", "overrides"}
	paramFields    = []string{"rate", "buffer", "ecn", "mtu", "delay", "jitter"}
	overrideFields = []string{"between", "from", "to", "rate", "buffer", "ecn", "mtu", "delay", "jitter"}

	// specHints explain top-level keys that belong one level down, the
	// most common slip when writing a first topology file.
	specHints = map[string]string{
		"rate":   "link parameters go under links:, stages:, switches: or overrides:",
		"buffer": "link parameters go under links:, stages:, switches: or overrides:",
		"ecn":    "link parameters go under links:, stages:, switches: or overrides:",
		"mtu":    "link parameters go under links:, stages:, switches: or overrides:",
		"delay":  "link parameters go under links:, stages:, switches: or overrides:",
		"jitter": "link parameters go under links:, stages:, switches: or overrides:",
	}
)

const (
	wantParams   = "a mapping of rate, buffer, ecn, mtu, delay and jitter, e.g. {rate: 50Mbit}"
	wantDelay    = "a duration such as 1.5us or 2ms"
	wantRate     = "a rate such as 100Mbit"
	wantSize     = "a size such as 64KiB"
	wantECN      = `a size such as 16KiB, or "off"`
	wantMTU      = "a whole number of bytes such as 1500"
	wantNodeName = "a node name such as e0-0"

	emptyFile = "the file is empty; a topology needs at least kind: fattree with k, or kind: leafspine with leaves, spines and hosts_per_leaf"
)

// UnmarshalYAML decodes a topology spec strictly. It never fails: problems
// (unknown fields, values of the wrong shape) are kept with their positions
// and returned by Resolve together with every other problem.
func (s *Spec) UnmarshalYAML(n *yaml.Node) error {
	*s = Spec{}
	s.decode(n)
	return nil
}

func (s *Spec) decode(n *yaml.Node) {
	n = yamldoc.Deref(n)
	s.org.Start(n)
	if yamldoc.IsNull(n) { // "---" alone, or "topology:" with nothing under it
		return
	}
	s.org.Fields(n, "a topology: a mapping with kind, its size and optional link settings", specFields, specHints, func(key string, v *yaml.Node) {
		switch key {
		case "name":
			s.Name, _ = s.org.Scalar(v, key, "a name such as fattree-k4")
		case "kind":
			k, _ := s.org.Scalar(v, key, "fattree or leafspine")
			s.Kind = Kind(k)
		case "k":
			s.K, _ = s.org.Integer(v, key, fmt.Sprintf("an even number from %d to %d", MinK, MaxK))
		case "leaves":
			s.Leaves, _ = s.org.Integer(v, key, fmt.Sprintf("a number from %d to %d", MinLeaves, MaxLeaves))
		case "spines":
			s.Spines, _ = s.org.Integer(v, key, fmt.Sprintf("a number from %d to %d", MinSpines, MaxSpines))
		case "hosts_per_leaf":
			s.HostsPerLeaf, _ = s.org.Integer(v, key, fmt.Sprintf("a number from %d to %d", MinHostsPerLeaf, MaxHostsPerLeaf))
		case "links":
			s.Links.decode(v)
		case "stages":
			s.org.Mapping(v, key, "a mapping from stage name to "+wantParams, func(name string, k, v *yaml.Node) {
				s.org.Record("stages."+name, yamldoc.PosOf(k), yamldoc.PosOf(v))
				var p Params
				p.decode(v)
				if s.Stages == nil {
					s.Stages = map[Stage]Params{}
				}
				s.Stages[Stage(name)] = p
			})
		case "switches":
			s.org.Mapping(v, key, "a mapping from switch name to "+wantParams, func(name string, k, v *yaml.Node) {
				s.org.Record("switches."+name, yamldoc.PosOf(k), yamldoc.PosOf(v))
				var p Params
				p.decode(v)
				if s.Switches == nil {
					s.Switches = map[string]Params{}
				}
				s.Switches[name] = p
				s.switchOrder = append(s.switchOrder, name)
			})
		case "overrides":
			s.org.Sequence(v, key, "a list of overrides, each starting with - between: or - from:", func(i int, item *yaml.Node) {
				var o Override
				o.decode(item)
				s.Overrides = append(s.Overrides, o)
			})
		}
	})
}

// UnmarshalYAML decodes link parameters strictly; like Spec's, it never
// fails and leaves problems for validation to report.
func (p *Params) UnmarshalYAML(n *yaml.Node) error {
	*p = Params{}
	p.decode(n)
	return nil
}

func (p *Params) decode(n *yaml.Node) {
	n = yamldoc.Deref(n)
	p.org.Start(n)
	p.org.Fields(n, wantParams, paramFields, nil, func(key string, v *yaml.Node) { p.field(key, v) })
}

// field decodes one of rate, buffer, ecn, mtu, delay, jitter. Only the shape is checked
// here; units are parsed during validation.
func (p *Params) field(key string, v *yaml.Node) {
	switch key {
	case "rate":
		p.Rate, _ = p.org.Scalar(v, key, wantRate)
	case "buffer":
		p.Buffer, _ = p.org.Scalar(v, key, wantSize)
	case "ecn":
		p.ECN, _ = p.org.Scalar(v, key, wantECN)
	case "mtu":
		p.MTU, _ = p.org.Integer(v, key, wantMTU)
	case "delay":
		p.Delay, _ = p.org.Scalar(v, key, wantDelay)
	case "jitter":
		p.Jitter, _ = p.org.Scalar(v, key, wantDelay)
	}
}

// UnmarshalYAML decodes one link override strictly; like Spec's, it never
// fails and leaves problems for validation to report.
func (o *Override) UnmarshalYAML(n *yaml.Node) error {
	*o = Override{}
	o.decode(n)
	return nil
}

func (o *Override) decode(n *yaml.Node) {
	n = yamldoc.Deref(n)
	o.org.Start(n)
	o.Params.org.Start(n)
	o.org.Fields(n, "an override: a mapping with between: [X, Y] or from: X and to: Y, and the parameters to set", overrideFields, nil, func(key string, v *yaml.Node) {
		switch key {
		case "between":
			o.org.Sequence(v, key, "two node names, e.g. [e0-0, a0-1]", func(i int, item *yaml.Node) {
				field := fmt.Sprintf("between[%d]", i)
				o.org.Record(field, yamldoc.PosOf(item), yamldoc.PosOf(item))
				name, _ := o.org.Scalar(item, field, wantNodeName)
				o.Between = append(o.Between, name)
			})
		case "from":
			o.From, _ = o.org.Scalar(v, key, wantNodeName)
		case "to":
			o.To, _ = o.org.Scalar(v, key, wantNodeName)
		default:
			o.Params.org.Record(key, o.org.Key(key), o.org.Val(key))
			o.Params.field(key, v)
		}
	})
}
