package fabric

import (
	"context"
	"net"
	"sync"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/topology"
)

// Interface is what the kernel says about one lab interface.
type Interface struct {
	Exists    bool   `json:"exists"`
	AdminUp   bool   `json:"admin_up"`
	Carrier   bool   `json:"carrier"`    // IFF_LOWER_UP: both ends of the veth are up
	OperState string `json:"oper_state"` // up, down, ...; the kernel updates it lazily
	MAC       string `json:"mac"`
	MTU       int    `json:"mtu"`
}

// Up reports whether the interface exists, is administratively up and has
// carrier. Carrier, not the operational state, because the kernel's
// linkwatch updates the latter up to a second late.
func (i Interface) Up() bool { return i.Exists && i.AdminUp && i.Carrier }

// NodeState is what the kernel says about one node's namespace.
type NodeState struct {
	Present    bool                 `json:"present"`
	Error      string               `json:"error,omitempty"`
	Interfaces map[string]Interface `json:"interfaces,omitempty"`
}

// Inspect reads the live state of every node's namespace and interfaces.
func Inspect(ctx context.Context, t *topology.Topology, namespace func(node string) string, workers int) map[string]NodeState {
	if workers <= 0 {
		workers = 8
	}
	out := make(map[string]NodeState, len(t.Nodes))
	var mu sync.Mutex
	nodes := make([]*topology.Node, len(t.Nodes))
	for i := range t.Nodes {
		nodes[i] = &t.Nodes[i]
	}
	_ = forEach(ctx, workers, "inspect", nodes, nodeName, func(n *topology.Node) error {
		s := inspectNode(namespace(n.Name))
		mu.Lock()
		out[n.Name] = s
		mu.Unlock()
		return nil
	})
	return out
}

func inspectNode(ns string) NodeState {
	if !nsutil.Exists(ns) {
		return NodeState{}
	}
	st := NodeState{Present: true}
	h, err := nsutil.Open(ns)
	if err != nil {
		st.Error = err.Error()
		return st
	}
	defer h.Close()
	nh, err := netlink.NewHandleAt(h)
	if err != nil {
		st.Error = err.Error()
		return st
	}
	defer nh.Close()
	links, err := nh.LinkList()
	if err != nil {
		st.Error = err.Error()
		return st
	}
	st.Interfaces = make(map[string]Interface, len(links))
	for _, l := range links {
		a := l.Attrs()
		st.Interfaces[a.Name] = Interface{
			Exists:    true,
			AdminUp:   a.Flags&net.FlagUp != 0,
			Carrier:   a.RawFlags&unix.IFF_LOWER_UP != 0,
			OperState: a.OperState.String(),
			MAC:       a.HardwareAddr.String(),
			MTU:       a.MTU,
		}
	}
	return st
}
