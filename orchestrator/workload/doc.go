// Package workload generates the messages of a collective: who sends how
// many bytes to whom, and when. It is the traffic half of a scenario
// (orchestrator/scenario); the runner hands the messages to the host
// agents.
//
// A workload is a list of Messages. Each has a source and a destination
// host, a size in bytes, and either a start offset from the beginning of
// the collective or a list of earlier messages it waits for (After): ring
// all-reduce steps and windowed all-to-all rounds are expressed that way.
// The collective completion time (CCT) is the completion time of the last
// message; LowerBound computes what no load balancer or transport can beat
// on a given fabric.
//
// The kinds follow the evaluations of the papers ftlab reproduces:
//
//   - permutation: a random derangement, every host sends one message and
//     receives one (Ofan section 3.3, "random derangement"); optionally
//     inter-pod only (Ofan Fig. 3);
//   - all-to-all: every host sends to every other host, optionally at most
//     MaxParallel at a time (Ordered Chaos V-C limits parallel connections);
//   - incast: N senders chosen from the seed, one receiver (Ordered Chaos
//     Fig. 7a: 8:1, 1 MiB each);
//   - tornado: every host sends to its mirror in the other half of the
//     fabric, so every message crosses the top tier (Ordered Chaos Fig. 7b);
//   - ring-allreduce: 2(n-1) steps of size/n along a ring, each step
//     waiting for the previous one (Ordered Chaos Fig. 8);
//   - all-to-all-v: byte counts from a traffic matrix, as MoE dispatch
//     (Ofan section 6.6).
//
// Everything random is drawn from a math/rand/v2 PCG generator seeded
// explicitly with the run's seed, so a seed always yields the same
// messages, on any machine and Go version.
package workload
