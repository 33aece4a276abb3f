package topology

import (
	"fmt"
	"strings"
)

// roleNames are the plural names of the roles as used in messages.
var roleNames = map[Role]string{
	RoleHost: "hosts", RoleEdge: "edge switches", RoleAgg: "aggregation switches",
	RoleCore: "core switches", RoleLeaf: "leaves", RoleSpine: "spines",
}

// shape describes the fabric in a few words: "fattree k=4", "leafspine
// 4x2 with 4 hosts per leaf".
func (t *Topology) shape() string {
	if t.Kind == FatTree {
		return fmt.Sprintf("fattree k=%d", t.K)
	}
	return fmt.Sprintf("leafspine %dx%d with %d hosts per leaf", t.Leaves, t.Spines, t.HostsPerLeaf)
}

// inventory lists the ranges of node names, e.g. "hosts h0-0-0..h3-1-1,
// edge switches e0-0..e3-1, ...", so that an error about an unknown name
// shows what the valid names look like. Nodes of a role are contiguous
// and ordered, so first..last describes them.
func (t *Topology) inventory(withHosts bool) string {
	var parts []string
	for i := 0; i < len(t.Nodes); {
		r := t.Nodes[i].Role
		j := i
		for j+1 < len(t.Nodes) && t.Nodes[j+1].Role == r {
			j++
		}
		if withHosts || r != RoleHost {
			names := t.Nodes[i].Name
			if j > i {
				names += ".." + t.Nodes[j].Name
			}
			parts = append(parts, roleNames[r]+" "+names)
		}
		i = j + 1
	}
	return fmt.Sprintf("this %s has %s", t.shape(), strings.Join(parts, ", "))
}
