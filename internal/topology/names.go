package topology

// Inventory lists the ranges of node names by role ("this fattree k=4 has
// hosts h0-0-0..h3-1-1, edge switches e0-0..e3-1, ..."), for errors about
// names that do not exist. withHosts includes the hosts.
func (t *Topology) Inventory(withHosts bool) string { return t.inventory(withHosts) }

// Neighbors lists the names of the nodes linked to n, in port order.
func (t *Topology) Neighbors(n *Node) string { return t.peers(n) }
