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

var workloadFields = []string{"kind", "size", "hosts", "inter_pod", "senders", "receiver", "order", "max_parallel", "matrix"}

// workloadOptions says which kinds each option applies to; an option
// given to another kind is an error rather than silently ignored.
var workloadOptions = map[string][]workload.Kind{
	"size":         {workload.Permutation, workload.AllToAll, workload.Incast, workload.Tornado, workload.RingAllReduce},
	"inter_pod":    {workload.Permutation},
	"senders":      {workload.Incast},
	"receiver":     {workload.Incast},
	"order":        {workload.RingAllReduce},
	"max_parallel": {workload.AllToAll},
	"matrix":       {workload.AllToAllV},
}

const wantWorkload = "a workload: a mapping with kind (permutation, all-to-all, incast, tornado, ring-allreduce, all-to-all-v) and its options"

// workload decodes the workload block and checks it against the fabric
// (nil when the topology did not resolve).
func (l *loader) workload(n *yaml.Node, top *yamldoc.Walker, t *topology.Topology, f *workload.Fabric, pr *yamldoc.Problems) workload.Spec {
	var spec workload.Spec
	if n == nil {
		pr.Add(top.Pos(), "workload", "missing; give %s", wantWorkload)
		return spec
	}
	w := yamldoc.NewWalker(n)
	defer func() { pr.AddAll("workload", w.Problems()) }()
	nodes := map[string]*yaml.Node{}
	w.Fields(n, wantWorkload, workloadFields, nil, func(key string, v *yaml.Node) { nodes[key] = v })
	if w.NotMapping() {
		return spec
	}
	problem := func(field, format string, args ...any) {
		pr.Add(w.Val(field), "workload."+field, format, args...)
	}
	scalar := func(key, want string) (string, bool) {
		if v := nodes[key]; v != nil {
			return w.Scalar(v, key, want)
		}
		return "", false
	}

	kindOK := false
	if s, ok := scalar("kind", "a workload kind such as permutation"); ok {
		spec.Kind = workload.Kind(s)
		if err := oneOf("workload", spec.Kind, workload.Kinds); err != nil {
			problem("kind", "%v", err)
		} else {
			kindOK = true
		}
	} else if nodes["kind"] == nil {
		pr.Add(w.Pos(), "workload.kind", "missing (valid: %s)", joinNames(workload.Kinds))
	}
	if kindOK {
		for _, key := range workloadFields {
			if kinds := workloadOptions[key]; nodes[key] != nil && kinds != nil && !slices.Contains(kinds, spec.Kind) {
				pr.Add(w.Key(key), "workload."+key, "only for %s workloads; this one is %s", joinNames(kinds), spec.Kind)
				delete(nodes, key)
			}
		}
	}

	before := pr.Len() // problems with the values below make Check pointless
	size := DefaultSize
	if s, ok := scalar("size", "a size such as 1MiB or a range such as 256KiB..1MiB"); ok {
		size = s
	}
	if spec.Kind != workload.AllToAllV {
		sz, err := workload.ParseSize(size)
		if err != nil {
			problem("size", "%v", err)
		}
		spec.Size = sz
	}
	if s, ok := scalar("inter_pod", "true or false"); ok {
		v, err := parseBool(s)
		if err != nil {
			problem("inter_pod", "%v", err)
		}
		spec.InterPod = v
	}
	if v := nodes["senders"]; v != nil {
		spec.Senders, _ = w.Integer(v, "senders", "a number of senders such as 8")
	}
	spec.Receiver, _ = scalar("receiver", "a host name such as h0-0-0")
	if s, ok := scalar("order", "random or plan"); ok {
		spec.Order = workload.RingOrder(s)
	} else if spec.Kind == workload.RingAllReduce {
		spec.Order = workload.RingRandom
	}
	if v := nodes["max_parallel"]; v != nil {
		spec.MaxParallel, _ = w.Integer(v, "max_parallel", "a number of messages, or 0 for no limit")
	}
	hostsOK := true
	if v := nodes["hosts"]; v != nil {
		spec.Hosts = []string{}
		w.Sequence(v, "hosts", "a list of host names, e.g. [h0-0-0, h1-0-0]", func(i int, item *yaml.Node) {
			field := fmt.Sprintf("hosts[%d]", i)
			name, ok := w.Scalar(item, field, "a host name such as h0-0-0")
			if !ok {
				hostsOK = false
				return
			}
			spec.Hosts = append(spec.Hosts, name)
			if f == nil {
				return
			}
			if _, isHost := f.Host(name); !isHost {
				hostsOK = false
				pr.Add(yamldoc.PosOf(item), "workload."+field, "%s", notAHost(t, name))
			}
		})
	}
	if s, ok := scalar("matrix", "a traffic matrix file such as moe.csv"); ok {
		path, tried := l.find(s)
		if path == "" {
			problem("matrix", "cannot find %s (looked for %s)", s, strings.Join(tried, ", "))
		} else if m, err := workload.ReadMatrix(path); err != nil {
			problem("matrix", "%s has problems, listed with their own file name", path)
			pr.AddError(w.Val("matrix"), "workload.matrix", err)
		} else {
			spec.Matrix = m
		}
	}
	if !kindOK || f == nil || !hostsOK || len(w.Problems()) > 0 || pr.Len() > before {
		return spec
	}
	if spec.Kind == workload.AllToAllV && spec.Matrix == nil && nodes["matrix"] != nil {
		return spec // already reported
	}
	for _, p := range spec.Check(f) {
		if w.Has(p.Field) {
			problem(p.Field, "%s", p.Msg)
		} else {
			pr.Add(w.Pos(), "workload."+p.Field, "%s", p.Msg)
		}
	}
	return spec
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
