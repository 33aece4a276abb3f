package capture

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ftlab/ftlab/internal/topology"
)

// Port is one captured port.
type Port struct {
	Node   string `json:"node"`
	Switch bool   `json:"switch"` // a switch port (tap); else a host's (AF_PACKET)
	Port   int    `json:"port"`   // port number on Node
	Ifname string `json:"ifname"` // the interface in Node's namespace
	Peer   string `json:"peer"`   // the node at the other end
	Link   string `json:"link"`
}

// String names the port as targets do: node:ifname.
func (p Port) String() string { return p.Node + ":" + p.Ifname }

// ResolveTargets turns NODE or NODE:PORT targets into ports. NODE alone is
// every port of the node; PORT is a port number or the interface's name,
// which is the peer node's name. Ports named twice are captured once. All
// problems are reported at once.
func ResolveTargets(t *topology.Topology, targets []string) ([]Port, error) {
	var out []Port
	var errs []string
	seen := map[string]bool{}
	add := func(n *topology.Node, i int) {
		p := portOf(t, n, i)
		if !seen[p.String()] {
			seen[p.String()] = true
			out = append(out, p)
		}
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("capture: name at least one NODE or NODE:PORT; %s", t.Inventory(true))
	}
	for _, tg := range targets {
		node, port, hasPort := strings.Cut(tg, ":")
		n, ok := t.Node(node)
		if !ok {
			errs = append(errs, fmt.Sprintf("%q: no node named %q; %s", tg, node, t.Inventory(true)))
			continue
		}
		if !hasPort {
			for i := range n.Ports {
				add(n, i)
			}
			continue
		}
		i, err := portIndex(t, n, port)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%q: %v", tg, err))
			continue
		}
		add(n, i)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("capture: %s", strings.Join(errs, "; "))
	}
	return out, nil
}

func portIndex(t *topology.Topology, n *topology.Node, s string) (int, error) {
	if i, err := strconv.Atoi(s); err == nil {
		if i < 0 || i >= len(n.Ports) {
			return 0, fmt.Errorf("%s has ports 0..%d (to %s)", n.Name, len(n.Ports)-1, t.Neighbors(n))
		}
		return i, nil
	}
	for i, pr := range n.Ports {
		if t.Links[pr.Link].End(pr.Side).Ifname == s || t.Peer(pr).Node == s {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%s has no port %q; its ports are 0..%d, to %s", n.Name, s, len(n.Ports)-1, t.Neighbors(n))
}

func portOf(t *topology.Topology, n *topology.Node, i int) Port {
	pr := n.Ports[i]
	l := &t.Links[pr.Link]
	return Port{Node: n.Name, Switch: n.Role.IsSwitch(), Port: i, Ifname: l.End(pr.Side).Ifname,
		Peer: t.Peer(pr).Node, Link: l.Name}
}
