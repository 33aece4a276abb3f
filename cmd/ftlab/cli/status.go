package cli

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/orchestrator/fabric"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/switchd"
)

// statusView is `ftlab status --json`: the lab's record joined with what the
// kernel says now.
type statusView struct {
	Lab          string               `json:"lab"`
	Phase        lab.Phase            `json:"phase"`
	PID          int                  `json:"pid"`
	Created      time.Time            `json:"created"`
	TopologyFile string               `json:"topology_file,omitempty"`
	Topology     topologySummary      `json:"topology"`
	Health       health               `json:"health"`
	Nodes        []nodeView           `json:"nodes"`
	Links        []linkView           `json:"links"`
	DataPlane    switchd.Config       `json:"dataplane"`
	FailedLinks  []string             `json:"failed_links,omitempty"`
	Probes       []fabric.ProbeResult `json:"probes,omitempty"`
	Timings      *fabric.Timings      `json:"timings,omitempty"`
}

type topologySummary struct {
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

type health struct {
	Namespaces        int  `json:"namespaces"`
	NamespacesPresent int  `json:"namespaces_present"`
	Links             int  `json:"links"`
	LinksUp           int  `json:"links_up"`
	LinksFailed       int  `json:"links_failed"` // failed on purpose (ftlab link down)
	ProbesOK          *int `json:"probes_ok,omitempty"`
	OK                bool `json:"ok"`
}

type nodeView struct {
	Name      string        `json:"name"`
	Role      topology.Role `json:"role"`
	Addr      netip.Addr    `json:"addr"`
	Namespace string        `json:"namespace"`
	Present   bool          `json:"present"`
	Error     string        `json:"error,omitempty"`
}

type endView struct {
	Node   string `json:"node"`
	Ifname string `json:"ifname"`
	MAC    string `json:"mac"`
	State  string `json:"state"` // up, down, missing
}

type linkView struct {
	Name  string              `json:"name"`
	Stage topology.Stage      `json:"stage"`
	MTU   int                 `json:"mtu"`
	A     endView             `json:"a"`
	B     endView             `json:"b"`
	Up    topology.LinkParams `json:"up"`   // A -> B
	Down  topology.LinkParams `json:"down"` // B -> A
	State string              `json:"state"`
}

func endState(live map[string]fabric.NodeState, ep topology.Endpoint) endView {
	v := endView{Node: ep.Node, Ifname: ep.Ifname, MAC: ep.MAC.String(), State: "missing"}
	if i, ok := live[ep.Node].Interfaces[ep.Ifname]; ok {
		v.State = "down"
		if i.Up() {
			v.State = "up"
		}
	}
	return v
}

func buildStatus(st *lab.State, nsName func(string) string, live map[string]fabric.NodeState) statusView {
	t := st.Topology
	v := statusView{
		Lab: st.Name, Phase: st.Phase, PID: st.PID, Created: st.Created,
		TopologyFile: st.TopologyFile, Timings: st.Timings,
		DataPlane: st.DataPlane, FailedLinks: lab.FailedLinks(st),
		Topology: topologySummary{
			Name: t.Name, Kind: t.Kind, K: t.K, Leaves: t.Leaves, Spines: t.Spines, HostsPerLeaf: t.HostsPerLeaf,
			Hosts: t.Count(topology.RoleHost), Switches: len(t.Switches()), Links: len(t.Links),
		},
	}
	for _, n := range t.Nodes {
		s := live[n.Name]
		v.Nodes = append(v.Nodes, nodeView{
			Name: n.Name, Role: n.Role, Addr: n.Addr, Namespace: nsName(n.Name),
			Present: s.Present, Error: s.Error,
		})
		if s.Present {
			v.Health.NamespacesPresent++
		}
	}
	failed := switchd.FailedSet(st.Failed)
	for _, l := range t.Links {
		lv := linkView{Name: l.Name, Stage: l.Stage, MTU: l.MTU, A: endState(live, l.A), B: endState(live, l.B), Up: l.Up, Down: l.Down}
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

func (a *app) statusCommand() *cobra.Command {
	var name string
	var asJSON, probe bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show a lab's nodes, links, addresses and live state",
		Long: `status joins the lab's record with what the kernel says now: whether each
namespace exists and each link is up at both ends. --probe also sends one UDP
datagram across every link in each direction.`,
		Args:        cobra.NoArgs,
		Annotations: rootOnly(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := a.store.Get(name)
			if err != nil {
				return err
			}
			nsName := a.store.Namer(name)
			v := buildStatus(st, nsName, fabric.Inspect(cmd.Context(), st.Topology, nsName, 0))
			if probe {
				v.Probes = fabric.ProbeLinks(cmd.Context(), st.Topology, nsName, 0)
				ok := 0
				for _, p := range v.Probes {
					if p.OK {
						ok++
					}
				}
				v.Health.ProbesOK = &ok
				v.Health.OK = v.Health.OK && ok == len(v.Probes)
			}
			if asJSON {
				if err := a.printJSON(v); err != nil {
					return err
				}
			} else if err := a.printStatus(v); err != nil {
				return err
			}
			if !v.Health.OK {
				return exitError{code: 3}
			}
			return nil
		},
	}
	addNameFlag(cmd, &name)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	cmd.Flags().BoolVar(&probe, "probe", false, "send a datagram across every link in both directions")
	return cmd
}

func (a *app) printStatus(v statusView) error {
	t := v.Topology
	shape := fmt.Sprintf("fat tree k=%d", t.K)
	if t.Kind == topology.LeafSpine {
		shape = fmt.Sprintf("leaf-spine %d leaves x %d spines", t.Leaves, t.Spines)
	}
	fmt.Fprintf(a.stdout, "lab       %s (%s since %s, pid %d)\n", v.Lab, v.Phase, v.Created.Local().Format(time.DateTime), v.PID)
	fmt.Fprintf(a.stdout, "topology  %s: %s, %d hosts, %d switches, %d links", t.Name, shape, t.Hosts, t.Switches, t.Links)
	if v.TopologyFile != "" {
		fmt.Fprintf(a.stdout, " (%s)", v.TopologyFile)
	}
	fmt.Fprintln(a.stdout)
	h := v.Health
	fmt.Fprintf(a.stdout, "dataplane %s\n", describeDataPlane(v.DataPlane))
	fmt.Fprintf(a.stdout, "health    %d/%d namespaces present, %d/%d links up", h.NamespacesPresent, h.Namespaces, h.LinksUp, h.Links)
	if h.LinksFailed > 0 {
		fmt.Fprintf(a.stdout, ", %d failed on purpose (%s)", h.LinksFailed, strings.Join(v.FailedLinks, ", "))
	}
	if h.ProbesOK != nil {
		fmt.Fprintf(a.stdout, ", %d/%d link probes delivered", *h.ProbesOK, len(v.Probes))
	}
	fmt.Fprintln(a.stdout)

	fmt.Fprintln(a.stdout, "\nNODES")
	w := newTable(a.stdout)
	fmt.Fprintln(w, "NAME\tROLE\tADDRESS\tNAMESPACE\tSTATE")
	for _, n := range v.Nodes {
		state := "ok"
		if !n.Present {
			state = "MISSING"
		} else if n.Error != "" {
			state = "error: " + n.Error
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", n.Name, n.Role, n.Addr, n.Namespace, state)
	}
	if err := w.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(a.stdout, "\nLINKS (rate/buffer/ecn per direction: up = towards the core)")
	w = newTable(a.stdout)
	fmt.Fprintln(w, "LINK\tSTAGE\tMTU\tUP\tDOWN\tSTATE")
	for _, l := range v.Links {
		state := l.State
		if state == "down" {
			state = fmt.Sprintf("DOWN (%s %s, %s %s)", l.A.Node, l.A.State, l.B.Node, l.B.State)
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\n", l.Name, l.Stage, l.MTU, params(l.Up), params(l.Down), state)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	var failed []fabric.ProbeResult
	for _, p := range v.Probes {
		if !p.OK {
			failed = append(failed, p)
		}
	}
	if len(failed) > 0 {
		fmt.Fprintln(a.stdout, "\nFAILED PROBES")
		for _, p := range failed {
			fmt.Fprintf(a.stdout, "  %s: %s -> %s: %s\n", p.Link, p.From, p.To, p.Error)
		}
	}
	return nil
}

func params(p topology.LinkParams) string {
	ecn := "off"
	if p.ECNBytes > 0 {
		ecn = units.FormatSize(p.ECNBytes)
	}
	return fmt.Sprintf("%s/%s/%s", units.FormatRate(p.RateBps), units.FormatSize(p.BufferBytes), ecn)
}
