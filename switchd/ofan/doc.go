// Package ofan holds the control-plane side of Ofan's per-destination
// round-robin pointers (McClure et al., "Ofan: Optimal Load Balancing for AI
// Training", sections 4.1, 5.1 and appendix F.2): which uplink each pointer
// value maps to, how pointers are numbered, and where they start.
//
// # Port orders
//
// A switch with w uplinks keeps one pointer per (destination, size class).
// The pointer cycles through the values 0..w-1; value i selects uplink
//
//	port(i) = (xor_w(P[i], id1) + id2) mod w
//
// where P is one global basis permutation of 0..w-1 (Basis), b = ceil(log2 w),
// id1 is the low b bits of the pointer's id, id2 the rest, and
// xor_w(v, x) = v^x if that is below w, else v. Each step is a bijection of
// 0..w-1, so every order is a permutation: from any start a pointer visits
// every uplink exactly once per w packets (F.2 requirement 1). Different ids
// give different orders, so pointers active together do not march in step
// (requirement 2). Storing P costs w*b bits; nothing is stored per pointer
// beyond its value.
//
// # Pointer ids (a deviation from the paper)
//
// The paper numbers pointers id = d + N_d*t (d the destination, N_d the
// number of destinations, t the size class: 0 data, 1 ACK). Taken literally
// this gives the data and ACK pointers of a destination the SAME order
// whenever 2^b*w divides N_d, because the class term then changes neither
// id1 nor id2 mod w. That is the common case here: edge switches index
// destination edges globally (N_d = k^2/2 = 2w^2), which hits it for every
// power-of-two w (k = 4, 8, 16), as do k = 4 aggregation switches; and
// carries make it happen for other N_d too (half the destinations at
// k = 6). Data and ACK pointers of one destination are busy at the same
// time (all-to-all), so this breaks F.2's second requirement. ID
// therefore replaces N_d by Stride(N_d, w): N_d rounded up to a multiple of
// 2^b, bumped once more if the quotient is a multiple of w. The class term
// then leaves id1 alone and moves id2 by a nonzero amount mod w, so the ACK
// order is the data order with every port renamed by a fixed nonzero
// offset: always a different sequence, and (the basis being chosen for it,
// see Basis) a different cyclic order for every w except 2, 3 and 5. Where
// the paper's layout already works, Stride equals N_d and nothing changes.
//
// # Starting values
//
// Each data pointer starts at a random value; its ACK pointer starts half a
// rotation further (offset floor(w/2)), as in section 4.1. Starts draws them
// from a per-switch seed so a restart reproduces the same state.
//
// # pOfan
//
// pOfan (section 5.1) keeps one pointer per key in every pipe instead of one
// per switch: "each pipe keeps its own independent RR pointer per key". We
// read the key as unchanged, (destination, class), so every pipe uses the
// same pointer ids and hence the same orders, and make the pipes independent
// through their state only: each pipe draws its own random starts
// (Starts(PipeSeed(seed, pipe), ...)). Reasons: the Tofino implementation in
// 5.2 indexes each pipe's register by destination and size class alone;
// independent uniform starts give the pipes independent uniform phases,
// which is exactly what the N*D/D/1 model behind pOfan's bound assumes; and
// with one pipe pOfan is then exactly Ofan, so comparing them isolates the
// loss of consolidation. The cost: two pipes whose starts happen to
// coincide pick the same uplink on every lockstep packet instead of on
// about 1/w of them — the same expected overlap, with more variance.
//
// Walk and Step simulate a pointer, skipping uplinks that no longer lead to
// the destination, so the data-plane tests can compare the eBPF program
// against this package.
package ofan
