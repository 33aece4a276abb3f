package workload

import "math/rand/v2"

// ringAllReduce is the ring algorithm (Patarasuk and Yuan): n hosts in a
// ring split the buffer into n chunks; in each of 2(n-1) steps every host
// sends one chunk to its successor. The first n-1 steps reduce-scatter
// (host i sends chunk i-s at step s, after adding in what it received),
// the last n-1 all-gather (host i sends chunk i+1-t at step n-1+t). A
// host's step-s message waits for its own step s-1 message and for the
// step s-1 message it received, which carries the data it forwards.
//
// Chunks are size/n bytes; the first size%n chunks carry one byte more,
// so the chunks add up to exactly size. Message IDs are step*n + ring
// position.
func ringAllReduce(hosts []Host, size uint64, order RingOrder, r *rand.Rand) []Message {
	n := len(hosts)
	ring := make([]Host, n)
	copy(ring, hosts)
	if order != RingPlan {
		r.Shuffle(n, func(i, j int) { ring[i], ring[j] = ring[j], ring[i] })
	}
	chunk := func(c int) uint64 {
		b := size / uint64(n)
		if uint64(c) < size%uint64(n) {
			b++
		}
		return b
	}
	mod := func(v int) int { return ((v % n) + n) % n }
	steps := 2 * (n - 1)
	msgs := make([]Message, 0, steps*n)
	for s := range steps {
		for i := range n {
			c := mod(i - s) // reduce-scatter
			if s >= n-1 {
				c = mod(i + 1 - (s - (n - 1))) // all-gather
			}
			m := Message{ID: s*n + i, Src: ring[i].Name, Dst: ring[(i+1)%n].Name, Bytes: chunk(c), Step: s}
			if s > 0 {
				own, recv := (s-1)*n+i, (s-1)*n+mod(i-1)
				m.After = []int{min(own, recv), max(own, recv)}
			}
			msgs = append(msgs, m)
		}
	}
	return msgs
}
