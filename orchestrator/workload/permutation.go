package workload

import (
	"math/rand/v2"
	"slices"
)

// permutation sends one message from every host to another, every host
// receiving exactly one: a derangement of the hosts.
func permutation(hosts []Host, size Size, interPod bool, r *rand.Rand) []Message {
	var dst []int
	if interPod {
		dst = interPodPermutation(hosts, r)
	} else {
		dst = derangement(len(hosts), r)
	}
	msgs := make([]Message, len(hosts))
	for i, h := range hosts {
		msgs[i] = Message{ID: i, Src: h.Name, Dst: hosts[dst[i]].Name, Bytes: size.draw(r)}
	}
	return msgs
}

// derangement returns a permutation of 0..n-1 without fixed points, drawn
// uniformly: shuffle until no element stays in place. About 1/e of the
// shuffles qualify, so this takes e tries on average, for any n >= 2.
func derangement(n int, r *rand.Rand) []int {
	p := make([]int, n)
	for {
		for i := range p {
			p[i] = i
		}
		r.Shuffle(n, func(i, j int) { p[i], p[j] = p[j], p[i] })
		fixed := false
		for i, v := range p {
			if v == i {
				fixed = true
				break
			}
		}
		if !fixed {
			return p
		}
	}
}

// interPodPermutation returns a permutation sending every host to a host
// of another pod. Rejection would almost never succeed on large fabrics
// (the chance that no host of k pods stays home is about e^-(n/k)), so a
// random permutation is repaired instead: while some host i maps into its
// own pod P, swap its target with that of a random host j outside P whose
// target is outside P too. Afterwards i leaves P and j (outside P) enters
// P, so the number of stay-at-home hosts drops by one or two. Such a j
// exists whenever P holds at most half of the hosts (Check ensures that):
// of the n-|P| hosts outside P at most |P|-1 target P, because i does.
func interPodPermutation(hosts []Host, r *rand.Rand) []int {
	n := len(hosts)
	p := r.Perm(n)
	var bad, cand []int
	for {
		bad = bad[:0]
		for i := range p {
			if hosts[p[i]].Pod == hosts[i].Pod {
				bad = append(bad, i)
			}
		}
		if len(bad) == 0 {
			return p
		}
		i := bad[r.IntN(len(bad))]
		pod := hosts[i].Pod
		cand = cand[:0]
		for j := range p {
			if hosts[j].Pod != pod && hosts[p[j]].Pod != pod {
				cand = append(cand, j)
			}
		}
		j := cand[r.IntN(len(cand))]
		p[i], p[j] = p[j], p[i]
	}
}

// allToAll sends a message from every host to every other in n-1 rounds:
// in round s (from 1) host i sends to host i+s, so every round is itself a
// permutation. With maxParallel > 0 a host's message of round s waits for
// its message of round s-maxParallel, so at most maxParallel are in flight.
func allToAll(hosts []Host, size Size, maxParallel int, r *rand.Rand) []Message {
	n := len(hosts)
	msgs := make([]Message, 0, n*(n-1))
	for s := 1; s < n; s++ {
		for i, h := range hosts {
			m := Message{ID: len(msgs), Src: h.Name, Dst: hosts[(i+s)%n].Name, Bytes: size.draw(r), Step: s - 1}
			if maxParallel > 0 && s > maxParallel {
				m.After = []int{m.ID - maxParallel*n}
			}
			msgs = append(msgs, m)
		}
	}
	return msgs
}

// incast sends one message from each of `senders` distinct hosts, chosen
// uniformly from the seed, to one receiver (given, or chosen first).
// Senders are listed in host order.
func incast(hosts []Host, size Size, senders int, receiver string, r *rand.Rand) []Message {
	recv := -1
	for i, h := range hosts {
		if h.Name == receiver {
			recv = i
		}
	}
	if recv < 0 {
		recv = r.IntN(len(hosts))
	}
	others := make([]int, 0, len(hosts)-1)
	for i := range hosts {
		if i != recv {
			others = append(others, i)
		}
	}
	// A partial Fisher-Yates shuffle: the first `senders` slots are a
	// uniform sample without replacement.
	for i := range senders {
		j := i + r.IntN(len(others)-i)
		others[i], others[j] = others[j], others[i]
	}
	chosen := others[:senders]
	slices.Sort(chosen)
	msgs := make([]Message, senders)
	for i, s := range chosen {
		msgs[i] = Message{ID: i, Src: hosts[s].Name, Dst: hosts[recv].Name, Bytes: size.draw(r)}
	}
	return msgs
}

// tornado sends from every host to its mirror: host i of n to host n-1-i.
// In a fat tree the first half of the hosts (in plan order) is the first
// half of the pods, so every message crosses the core.
func tornado(hosts []Host, size Size, r *rand.Rand) []Message {
	n := len(hosts)
	msgs := make([]Message, n)
	for i, h := range hosts {
		msgs[i] = Message{ID: i, Src: h.Name, Dst: hosts[n-1-i].Name, Bytes: size.draw(r)}
	}
	return msgs
}
