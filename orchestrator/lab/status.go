package lab

import (
	"context"
	"net/netip"
	"time"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/orchestrator/fabric"
	"github.com/ftlab/ftlab/switchd"
)

// Status is `ftlab status --json`: the lab's record joined with what the
// kernel says now.
type Status struct {
	Lab          string               `json:"lab"`
	Phase        Phase                `json:"phase"`
	PID          int                  `json:"pid"`
	Created      time.Time            `json:"created"`
	TopologyFile string               `json:"topology_file,omitempty"`
	Topology     TopologySummary      `json:"topology"`
	Health       Health               `json:"health"`
	Nodes        []NodeStatus         `json:"nodes"`
	Links        []LinkStatus         `json:"links"`
	DataPlane    switchd.Config       `json:"dataplane"`
	FailedLinks  []string             `json:"failed_links,omitempty"`
	Probes       []fabric.ProbeResult `json:"probes,omitempty"`
	Timings      *fabric.Timings      `json:"timings,omitempty"`
}

// TopologySummary is the shape of a lab's fabric.
type TopologySummary struct {
	Name         string        `json:"name"`
	Kind         topology.Kind `json:"kind"`
	K            int           `json:"k,omitempty"`
	Leaves       int           `json:"leaves,omitempty"`
	Spines       int           `json:"spines,omitempty"`
	HostsPerLeaf int           `json:"hosts_per_leaf,omitempty"`
	Hosts        int           `json:"hosts"`
	Switches     int           `json:"switches"`
	Links        int           `json:"links"`
}

// Health counts what is present and up against what the lab records.
type Health struct {
	Namespaces        int  `json:"namespaces"`
	NamespacesPresent int  `json:"namespaces_present"`
	Links             int  `json:"links"`
	LinksUp           int  `json:"links_up"`
	LinksFailed       int  `json:"links_failed"` // failed on purpose (ftlab link down)
	ProbesOK          *int `json:"probes_ok,omitempty"`
	OK                bool `json:"ok"`
}

// NodeStatus is one node and whether its namespace exists.
type NodeStatus struct {
	Name      string        `json:"name"`
	Role      topology.Role `json:"role"`
	Addr      netip.Addr    `json:"addr"`
	Namespace string        `json:"namespace"`
	Present   bool          `json:"present"`
	Error     string        `json:"error,omitempty"`
}

// EndStatus is one end of a link: its interface and whether it is up.
type EndStatus struct {
	Node   string `json:"node"`
	Ifname string `json:"ifname"`
	MAC    string `json:"mac"`
	State  string `json:"state"` // up, down, missing
}

// LinkStatus is one link, its parameters and its state: up, down, or
// failed on purpose.
type LinkStatus struct {
	Name  string              `json:"name"`
	Stage topology.Stage      `json:"stage"`
	MTU   int                 `json:"mtu"`
	A     EndStatus           `json:"a"`
	B     EndStatus           `json:"b"`
	Up    topology.LinkParams `json:"up"`   // A -> B
	Down  topology.LinkParams `json:"down"` // B -> A
	State string              `json:"state"`
}

// endState is ep as the kernel shows it in live.
func endState(live map[string]fabric.NodeState, ep topology.Endpoint) EndStatus {
	v := EndStatus{Node: ep.Node, Ifname: ep.Ifname, MAC: ep.MAC.String(), State: "missing"}
	if i, ok := live[ep.Node].Interfaces[ep.Ifname]; ok {
		v.State = "down"
		if i.Up() {
			v.State = "up"
		}
	}
	return v
}

// statusOf joins st with live, what the kernel says of each node.
func statusOf(st *State, nsName func(string) string, live map[string]fabric.NodeState) Status {
	t := st.Topology
	v := Status{
		Lab: st.Name, Phase: st.Phase, PID: st.PID, Created: st.Created,
		TopologyFile: st.TopologyFile, Timings: st.Timings,
		DataPlane: st.DataPlane, FailedLinks: FailedLinks(st),
		Topology: TopologySummary{
			Name: t.Name, Kind: t.Kind, K: t.K, Leaves: t.Leaves, Spines: t.Spines, HostsPerLeaf: t.HostsPerLeaf,
			Hosts: t.Count(topology.RoleHost), Switches: len(t.Switches()), Links: len(t.Links),
		},
	}
	for _, n := range t.Nodes {
		s := live[n.Name]
		v.Nodes = append(v.Nodes, NodeStatus{
			Name: n.Name, Role: n.Role, Addr: n.Addr, Namespace: nsName(n.Name),
			Present: s.Present, Error: s.Error,
		})
		if s.Present {
			v.Health.NamespacesPresent++
		}
	}
	failed := switchd.FailedSet(st.Failed)
	for _, l := range t.Links {
		lv := LinkStatus{Name: l.Name, Stage: l.Stage, MTU: l.MTU, A: endState(live, l.A), B: endState(live, l.B), Up: l.Up, Down: l.Down}
		switch {
		case failed[l.ID]:
			lv.State = "failed"
			v.Health.LinksFailed++
		case lv.A.State == "up" && lv.B.State == "up":
			lv.State = "up"
			v.Health.LinksUp++
		default:
			lv.State = "down"
		}
		v.Links = append(v.Links, lv)
	}
	v.Health.Namespaces, v.Health.Links = len(t.Nodes), len(t.Links)
	v.Health.OK = v.Health.NamespacesPresent == v.Health.Namespaces && v.Health.LinksUp+v.Health.LinksFailed == v.Health.Links
	return v
}

// Status reads lab name's record and asks the kernel whether each of its
// namespaces exists and each link is up at both ends; with probe it also
// sends one UDP datagram across every link in each direction. Health.OK
// says whether everything is as recorded.
func (s *Store) Status(ctx context.Context, name string, probe bool) (*Status, error) {
	st, err := s.Get(name)
	if err != nil {
		return nil, err
	}
	nsName := s.Namer(name)
	v := statusOf(st, nsName, fabric.Inspect(ctx, st.Topology, nsName, 0))
	if probe {
		v.Probes = fabric.ProbeLinks(ctx, st.Topology, nsName, 0)
		ok := 0
		for _, p := range v.Probes {
			if p.OK {
				ok++
			}
		}
		v.Health.ProbesOK = &ok
		v.Health.OK = v.Health.OK && ok == len(v.Probes)
	}
	return &v, nil
}
