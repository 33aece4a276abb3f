package runner

// Mapping a subflow's EV to the path it takes, for cells whose edge switches
// run ECMP: there the EV (the UDP source port) is all that decides the
// first-hop uplink, and the choice is the data plane's hash, mirrored in Go
// (bpf.FlowHash, bpf.NthValid). Other policies pick per packet, so an EV has
// no path.

import (
	"github.com/ftlab/ftlab/bpf"
	"github.com/ftlab/ftlab/hostagent/agent"
	"github.com/ftlab/ftlab/hostagent/netio"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/orchestrator/scenario"
	"github.com/ftlab/ftlab/switchd"
	"github.com/ftlab/ftlab/switchd/routing"
)

const protoUDP = 17

// pathMap maps (host, peer, EV) to the uplink index the host's edge switch
// picks, with every link up.
type pathMap struct {
	topo   *topology.Topology
	tables map[string]*routing.Table
	seed   uint64            // the lab's data-plane seed (switchd.Config.Seed)
	index  map[string]int    // node name -> index in topo.Nodes (the switch seed)
	byAddr map[string]string // address -> node name
}

// newPathMap returns the path map of a cell built with the given data-plane
// seed, or nil when its edge switches do not run ECMP or its topology is
// unknown.
func newPathMap(cfg *scenario.Config, seed uint64) *pathMap {
	if cfg == nil || cfg.Topo() == nil || DataPlaneOf(cfg, seed).EdgePolicy != switchd.ECMP {
		return nil
	}
	t := cfg.Topo()
	tables, err := routing.Compute(t, nil)
	if err != nil {
		return nil
	}
	m := &pathMap{topo: t, tables: tables, seed: seed, index: make(map[string]int, len(t.Nodes)), byAddr: map[string]string{}}
	for i := range t.Nodes {
		m.index[t.Nodes[i].Name] = i
		m.byAddr[t.Nodes[i].Addr.String()] = t.Nodes[i].Name
	}
	return m
}

// uplink returns the uplink index (bit of the edge's valid set) that the
// source host's edge switch sends host's packets to peer with the given EV
// on, and how many uplinks that edge switch has; -1 and 0 when the packets
// do not go up (same edge) or the hosts are unknown.
func (m *pathMap) uplink(host, peer string, ev uint16) (uplink, uplinks int) {
	if m == nil {
		return -1, 0
	}
	// Flow records name peers by address.
	if name, ok := m.byAddr[peer]; ok {
		peer = name
	}
	if name, ok := m.byAddr[host]; ok {
		host = name
	}
	h, ok1 := m.topo.Node(host)
	p, ok2 := m.topo.Node(peer)
	if !ok1 || !ok2 || len(h.Ports) == 0 || !h.Addr.Is4() || !p.Addr.Is4() {
		return -1, 0
	}
	edge := m.topo.Peer(h.Ports[0]).Node
	tab, ok := m.tables[edge]
	idx, ok2 := m.index[edge]
	if !ok || !ok2 {
		return -1, 0
	}
	r, ok := tab.Lookup(p.Addr)
	valid := tab.Valid(r)
	if !ok || valid == 0 {
		return -1, len(tab.Uplinks)
	}
	s, d, ports := bpf.PacketWords(h.Addr.As4(), p.Addr.As4(), netio.EVPort(ev), agent.DefaultPort)
	seed := switchd.SwitchSeed(m.seed, idx)
	return bpf.NthValid(valid, bpf.FlowHash(s, d, ports, protoUDP, seed)), len(tab.Uplinks)
}
