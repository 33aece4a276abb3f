package scenario

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/internal/yamldoc"
	"github.com/ftlab/ftlab/orchestrator/workload"
	"gopkg.in/yaml.v3"
)

// workloadFields are the keys of the workload block, in documentation
// order.
var workloadFields = []string{"kind", "size", "hosts", "inter_pod", "senders", "receiver", "order", "max_parallel", "matrix", "file"}

// workloadKinds lists the options each workload kind takes besides kind
// and hosts, in workload.Kinds order; an option given to another kind is
// an error rather than silently ignored.
var workloadKinds = []struct {
	kind    workload.Kind
	options []string
}{
	{workload.Permutation, []string{"size", "inter_pod"}},
	{workload.AllToAll, []string{"size", "max_parallel"}},
	{workload.Incast, []string{"size", "senders", "receiver"}},
	{workload.Tornado, []string{"size"}},
	{workload.RingAllReduce, []string{"size", "order"}},
	{workload.AllToAllV, []string{"matrix"}},
	{workload.HtsimCM, []string{"file"}},
}

// workloadKindsTaking lists the kinds that take an option; nil for the
// options every workload has.
func workloadKindsTaking(option string) []workload.Kind {
	var out []workload.Kind
	for _, k := range workloadKinds {
		if slices.Contains(k.options, option) {
			out = append(out, k.kind)
		}
	}
	return out
}

const wantWorkload = "a workload: a mapping with kind (permutation, all-to-all, incast, tornado, ring-allreduce, all-to-all-v, cm) and its options"

// workloadDecoder decodes the workload block.
type workloadDecoder struct {
	*entry
	l    *loader
	t    *topology.Topology // nil when the topology did not resolve
	f    *workload.Fabric   // likewise
	spec workload.Spec
}

// workload decodes the workload block and checks it against the fabric
// (nil when the topology did not resolve): its kind, the options the kind
// takes, the hosts, a traffic matrix, then the spec as a whole.
func (l *loader) workload(n *yaml.Node, top *yamldoc.Walker, t *topology.Topology, f *workload.Fabric, pr *yamldoc.Problems) workload.Spec {
	if n == nil {
		pr.Add(top.Pos(), "workload", "missing; give %s", wantWorkload)
		return workload.Spec{}
	}
	e, ok := newEntry(n, "workload", wantWorkload, workloadFields, pr)
	defer e.close()
	if !ok {
		return workload.Spec{}
	}
	d := &workloadDecoder{entry: e, l: l, t: t, f: f}
	kindOK := d.kind()
	if kindOK {
		onlyFor(e, workloadFields, workloadKindsTaking, d.spec.Kind, "workload")
	}
	before := pr.Len() // problems with the values below make Check pointless
	d.size()
	d.options()
	hostsOK := d.hosts()
	matrixGiven := d.matrix()
	cmGiven := d.cmFile() // workloadcm.go
	if !kindOK || f == nil || !hostsOK || !e.clean() || pr.Len() > before {
		return d.spec
	}
	if d.spec.Kind == workload.AllToAllV && d.spec.Matrix == nil && matrixGiven ||
		d.spec.Kind == workload.HtsimCM && d.spec.CM == nil && cmGiven {
		return d.spec // already reported
	}
	d.check()
	return d.spec
}

// kind decodes kind:; false when it is missing or unknown.
func (d *workloadDecoder) kind() bool {
	s, ok := d.scalar("kind", "a workload kind such as permutation")
	if !ok {
		if !d.has("kind") {
			d.missing("kind", "missing (valid: %s)", joinNames(workload.Kinds))
		}
		return false
	}
	d.spec.Kind = workload.Kind(s)
	if err := oneOf("workload", d.spec.Kind, workload.Kinds); err != nil {
		d.problem("kind", "%v", err)
		return false
	}
	return true
}

// size decodes the message size, DefaultSize when none is given; a
// traffic matrix gives its own sizes.
func (d *workloadDecoder) size() {
	size := DefaultSize
	if s, ok := d.scalar("size", "a size such as 1MiB or a range such as 256KiB..1MiB"); ok {
		size = s
	}
	if d.spec.Kind == workload.AllToAllV || d.spec.Kind == workload.HtsimCM {
		return
	}
	sz, err := workload.ParseSize(size)
	if err != nil {
		d.problem("size", "%v", err)
	}
	d.spec.Size = sz
}

// options decodes the kinds' own options.
func (d *workloadDecoder) options() {
	if s, ok := d.scalar("inter_pod", "true or false"); ok {
		v, err := parseBool(s)
		if err != nil {
			d.problem("inter_pod", "%v", err)
		}
		d.spec.InterPod = v
	}
	d.spec.Senders, _ = d.integer("senders", "a number of senders such as 8")
	d.spec.Receiver, _ = d.scalar("receiver", "a host name such as h0-0-0")
	if s, ok := d.scalar("order", "random or plan"); ok {
		d.spec.Order = workload.RingOrder(s)
	} else if d.spec.Kind == workload.RingAllReduce {
		d.spec.Order = workload.RingRandom
	}
	d.spec.MaxParallel, _ = d.integer("max_parallel", "a number of messages, or 0 for no limit")
}

// hosts decodes the hosts list, checking each name against the fabric;
// false when a name is not a host.
func (d *workloadDecoder) hosts() bool {
	v := d.nodes["hosts"]
	if v == nil {
		return true
	}
	ok := true
	d.spec.Hosts = []string{}
	d.w.Sequence(v, "hosts", "a list of host names, e.g. [h0-0-0, h1-0-0]", func(i int, item *yaml.Node) {
		field := fmt.Sprintf("hosts[%d]", i)
		name, isScalar := d.w.Scalar(item, field, "a host name such as h0-0-0")
		if !isScalar {
			ok = false
			return
		}
		d.spec.Hosts = append(d.spec.Hosts, name)
		if d.f == nil {
			return
		}
		if _, isHost := d.f.Host(name); !isHost {
			ok = false
			d.pr.Add(yamldoc.PosOf(item), "workload."+field, "%s", notAHost(d.t, name))
		}
	})
	return ok
}

// matrix finds and reads the traffic matrix file; it reports whether one
// was given.
func (d *workloadDecoder) matrix() bool {
	s, ok := d.scalar("matrix", "a traffic matrix file such as moe.csv")
	if !ok {
		return d.has("matrix")
	}
	path, tried := d.l.find(s)
	if path == "" {
		d.problem("matrix", "cannot find %s (looked for %s)", s, strings.Join(tried, ", "))
	} else if m, err := workload.ReadMatrix(path); err != nil {
		d.problem("matrix", "%s has problems, listed with their own file name", path)
		d.pr.AddError(d.w.Val("matrix"), "workload.matrix", err)
	} else {
		d.spec.Matrix = m
	}
	return true
}

// check checks the decoded spec against the fabric, each problem at the
// field it is about where that was written.
func (d *workloadDecoder) check() {
	for _, p := range d.spec.Check(d.f) {
		if d.w.Has(p.Field) {
			d.problem(p.Field, "%s", p.Msg)
		} else {
			d.missing(p.Field, "%s", p.Msg)
		}
	}
}

var roleNoun = map[topology.Role]string{
	topology.RoleEdge: "an edge switch", topology.RoleAgg: "an aggregation switch", topology.RoleCore: "a core switch",
	topology.RoleLeaf: "a leaf", topology.RoleSpine: "a spine",
}

// notAHost explains a name in a host list that is not a host.
func notAHost(t *topology.Topology, name string) string {
	if n, ok := t.Node(name); ok {
		return fmt.Sprintf("%s is %s, not a host; %s", name, roleNoun[n.Role], t.Inventory(true))
	}
	return fmt.Sprintf("no host named %q; %s", name, t.Inventory(true))
}
