// Package sim is a deterministic, seeded, virtual-time network for testing
// the host agent's transport: N hosts, each with an uplink and a downlink,
// and between every ordered pair of hosts a set of parallel paths chosen by
// hashing the packet's entropy value, as ECMP does.
//
// Every link (host uplink, path, host downlink) is a FIFO server with its
// own rate, propagation delay, buffer (tail drop) and ECN marking threshold
// (CE when the backlog at enqueue is at least the threshold, for
// ECN-capable packets), plus seeded loss models: independent corruption
// drops, Gilbert-Elliott burst loss, duplication, and failure from a time
// (every packet lost). Filters see every packet as it enters a path and may
// drop it: DropNth makes "lose the 2nd retransmission" or "lose the first
// NACK" one line in a test.
//
// Time comes from a clock.Virtual. A FIFO at a fixed rate is computed, not
// stepped: a packet's departure is max(now, busy-until) + size/rate, so
// each hop costs one event. Each link draws from its own PCG stream seeded
// from (Config.Seed, link number), so the same seed gives the same run,
// bit for bit, and a filter or a change on one link does not perturb the
// random draws of another.
package sim
