// Package routing computes what every switch of a fabric forwards where,
// given a set of failed links: the state BGP converges to in a Clos fabric
// (RFC 7938) with valley-free forwarding, a packet going up zero or more
// tiers and then down, never up again. switchd programs these tables into
// the data plane; Ofan's per-destination pointers (package ofan) pick among
// each Up route's valid uplinks.
//
// A failed link is down in both directions. A failed switch is the failure
// of all its links. An uplink whose own link is down is never valid.
//
// # Routes
//
// Every switch has its identity address as a Local /32. Switch addresses
// are not routed across the fabric: they are for the switch itself.
//
// Fat tree, edge switch E(p,e):
//   - each host: its /32 Down to its port. Hosts sit on different ports,
//     so the edge's /24 cannot be a single Down route; per-host /32s are
//     what a ToR installs for directly attached hosts anyway;
//   - its own 10.p.e.0/24: NoRoute, so an address of the rack that is not a
//     host is dropped here instead of being sent up and bounced back;
//   - every other edge F(q,f): 10.q.f.0/24 Up, one pointer per destination
//     edge (Pointer = q*k/2+f, its global index), valid uplinks: the
//     aggregation switches a that still reach F (q = p: link a-F up;
//     q != p: some live uplink of a to a core c whose link to a(q,a) is up,
//     and a(q,a)-F up).
//
// Aggregation switch A(p,a):
//   - each edge e of its pod: 10.p.e.0/24 Down to that edge's port;
//   - every other pod q: 10.q.0.0/16 Up, one pointer per destination pod
//     (Pointer = q), valid uplinks: the cores c whose links to A and to
//     a(q,a) are both up;
//   - for an edge f of pod q whose link to a(q,a) is down: 10.q.f.0/24
//     NoRoute. One could instead split the pod's valid set per such edge,
//     keeping the pod's pointer. But a(q,a) is a mandatory waypoint: every
//     core above A leads to pod q through a(q,a) and nothing else (Ofan
//     F.1), so the split set is always either the pod's set (edge link up:
//     no /24 needed) or empty (edge link down: no uplink can deliver). An
//     empty set is written as NoRoute. The edges of pod p, which know this
//     too, stop sending such packets to A at all.
//
// Core switch C(j,i): each pod q: 10.q.0.0/16 Down to port q, and, as at
// the aggregation switches, 10.q.f.0/24 NoRoute for the edges f that
// a(q,j) can no longer reach (BGP tells the core exactly what its pod-q
// neighbour still announces).
//
// Leaf-spine: leaf L has its hosts' /32s Down, its own /24 NoRoute and, for
// every other leaf M, 10.0.M.0/24 Up with one pointer per destination leaf
// (Pointer = M) and the spines whose links to L and to M are up; spine S
// has each leaf's /24 Down.
//
// # Unreachable destinations
//
// A down route whose link is down, or an up route with no valid uplink, is
// NoRoute: the packet is dropped at this switch. Valley-free forwarding
// never sends a packet back up once it has started down, so an aggregation
// switch that lost its link to an edge cannot detour around it; upstream
// switches avoid sending it such packets in the first place. Host links
// are not routed around (there is no other path to a host): routes are per
// rack, so the fabric still carries packets for a host whose link is down
// to its edge switch, which drops them.
//
// # Pointers
//
// Route.Pointer numbers Ofan's destinations globally (edge q*k/2+f, pod q,
// leaf M), so a destination has the same pointer index on every switch and
// Table.Pointers is the N_d to give ofan.ID and ofan.Starts. The switch's own
// index is allocated but never used. A destination keeps its pointer
// whatever fails, only its valid set changes, so reconverging after a
// failure does not disturb the rotation (section 4.1: pointers keep
// cycling and skip invalid ports).
//
// Tables are deterministic: routes are sorted by prefix, valid sets
// numerically, and uplinks in port order.
package routing
