package workload

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPermutationIsDerangement(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fabric   *Fabric
		interPod bool
	}{
		{"k4", fatTree(t, 4), false},
		{"k8", fatTree(t, 8), false},
		{"k4 inter-pod", fatTree(t, 4), true},
		{"k8 inter-pod", fatTree(t, 8), true},
		{"leafspine inter-leaf", leafSpine(t, 4, 2, 3), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(50) {
				msgs := generate(t, Spec{Kind: Permutation, Size: Fixed(1000), InterPod: tc.interPod}, tc.fabric, seed)
				if len(msgs) != len(tc.fabric.Hosts) {
					t.Fatalf("seed %d: %d messages for %d hosts", seed, len(msgs), len(tc.fabric.Hosts))
				}
				sent, received := counts(msgs)
				for _, h := range tc.fabric.Hosts {
					if sent[h.Name] != 1 || received[h.Name] != 1 {
						t.Fatalf("seed %d: %s sends %d and receives %d messages, want 1 and 1", seed, h.Name, sent[h.Name], received[h.Name])
					}
				}
				for _, m := range msgs {
					src, _ := tc.fabric.Host(m.Src)
					dst, _ := tc.fabric.Host(m.Dst)
					if m.Src == m.Dst {
						t.Fatalf("seed %d: %s sends to itself", seed, m.Src)
					}
					if tc.interPod && src.Pod == dst.Pod {
						t.Fatalf("seed %d: %s -> %s stays in pod %d", seed, m.Src, m.Dst, src.Pod)
					}
					if m.Bytes != 1000 || m.Start != 0 || m.After != nil {
						t.Fatalf("seed %d: unexpected message %+v", seed, m)
					}
				}
			}
		})
	}
}

// TestPermutationNotAlwaysInterPod: without the option, some seed keeps a
// message inside its pod (the option is what makes them leave).
func TestPermutationNotAlwaysInterPod(t *testing.T) {
	f := fatTree(t, 4)
	for seed := range uint64(20) {
		for _, m := range generate(t, Spec{Kind: Permutation, Size: Fixed(1)}, f, seed) {
			src, _ := f.Host(m.Src)
			dst, _ := f.Host(m.Dst)
			if src.Pod == dst.Pod {
				return
			}
		}
	}
	t.Error("20 plain permutations of a k=4 fat tree never stayed inside a pod")
}

func TestReproducible(t *testing.T) {
	f := fatTree(t, 4)
	specs := []Spec{
		{Kind: Permutation, Size: Size{1000, 5000}},
		{Kind: Permutation, Size: Fixed(1000), InterPod: true},
		{Kind: AllToAll, Size: Size{1, 100}},
		{Kind: Incast, Size: Fixed(1000), Senders: 4},
		{Kind: RingAllReduce, Size: Fixed(1 << 20)},
	}
	for _, s := range specs {
		t.Run(string(s.Kind), func(t *testing.T) {
			a, b := generate(t, s, f, 7), generate(t, s, f, 7)
			if diff := cmp.Diff(a, b); diff != "" {
				t.Errorf("same seed, different messages (-first +second):\n%s", diff)
			}
			if c := generate(t, s, f, 8); cmp.Equal(a, c) {
				t.Errorf("seeds 7 and 8 gave the same messages")
			}
		})
	}
}

// TestPermutationGolden pins the output for one seed, so a change in the
// generator (which would silently change every recorded experiment) is
// noticed.
func TestPermutationGolden(t *testing.T) {
	got := pairs(generate(t, Spec{Kind: Permutation, Size: Fixed(1)}, fatTree(t, 4), 1))
	want := []string{
		"h0-0-0>h2-1-1", "h0-0-1>h1-0-0", "h0-1-0>h1-1-1", "h0-1-1>h3-0-0",
		"h1-0-0>h0-1-1", "h1-0-1>h0-0-0", "h1-1-0>h3-1-1", "h1-1-1>h2-0-0",
		"h2-0-0>h2-0-1", "h2-0-1>h3-1-0", "h2-1-0>h0-1-0", "h2-1-1>h2-1-0",
		"h3-0-0>h3-0-1", "h3-0-1>h0-0-1", "h3-1-0>h1-1-0", "h3-1-1>h1-0-1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("seed 1 permutation changed (-want +got):\n%s", diff)
	}
}

func TestSizeRange(t *testing.T) {
	msgs := generate(t, Spec{Kind: AllToAll, Size: Size{100, 103}}, fatTree(t, 4), 3)
	seen := map[uint64]bool{}
	for _, m := range msgs {
		if m.Bytes < 100 || m.Bytes > 103 {
			t.Fatalf("size %d outside 100..103", m.Bytes)
		}
		seen[m.Bytes] = true
	}
	if len(seen) != 4 {
		t.Errorf("240 draws from 100..103 hit only %v", seen)
	}
}

func TestIncast(t *testing.T) {
	f := fatTree(t, 4)
	for seed := range uint64(30) {
		msgs := generate(t, Spec{Kind: Incast, Size: Fixed(1 << 20), Senders: 8}, f, seed)
		if len(msgs) != 8 {
			t.Fatalf("seed %d: %d messages, want 8", seed, len(msgs))
		}
		senders := map[string]bool{}
		for _, m := range msgs {
			if m.Dst != msgs[0].Dst {
				t.Fatalf("seed %d: two receivers %s and %s", seed, msgs[0].Dst, m.Dst)
			}
			if m.Src == m.Dst || senders[m.Src] {
				t.Fatalf("seed %d: sender %s repeated or is the receiver", seed, m.Src)
			}
			senders[m.Src] = true
		}
	}
	msgs := generate(t, Spec{Kind: Incast, Size: Fixed(1), Senders: 15, Receiver: "h2-1-0"}, f, 1)
	var want []string
	for _, h := range f.Hosts {
		if h.Name != "h2-1-0" {
			want = append(want, h.Name+">h2-1-0")
		}
	}
	if diff := cmp.Diff(want, pairs(msgs)); diff != "" {
		t.Errorf("15:1 incast to h2-1-0 (-want +got):\n%s", diff)
	}
}

func TestTornadoMirror(t *testing.T) {
	got := pairs(generate(t, Spec{Kind: Tornado, Size: Fixed(1)}, fatTree(t, 4), 1))
	want := []string{
		"h0-0-0>h3-1-1", "h0-0-1>h3-1-0", "h0-1-0>h3-0-1", "h0-1-1>h3-0-0",
		"h1-0-0>h2-1-1", "h1-0-1>h2-1-0", "h1-1-0>h2-0-1", "h1-1-1>h2-0-0",
		"h2-0-0>h1-1-1", "h2-0-1>h1-1-0", "h2-1-0>h1-0-1", "h2-1-1>h1-0-0",
		"h3-0-0>h0-1-1", "h3-0-1>h0-1-0", "h3-1-0>h0-0-1", "h3-1-1>h0-0-0",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tornado mismatch (-want +got):\n%s", diff)
	}
	f := fatTree(t, 8)
	for _, m := range generate(t, Spec{Kind: Tornado, Size: Fixed(1)}, f, 1) {
		if f.Hops(mustHost(t, f, m.Src), mustHost(t, f, m.Dst)) != 6 {
			t.Errorf("%s -> %s does not cross the core", m.Src, m.Dst)
		}
	}
}

func mustHost(t *testing.T, f *Fabric, name string) Host {
	t.Helper()
	h, ok := f.Host(name)
	if !ok {
		t.Fatalf("no host %s", name)
	}
	return h
}

func TestAllToAll(t *testing.T) {
	f := fatTree(t, 4)
	msgs := generate(t, Spec{Kind: AllToAll, Size: Fixed(10)}, f, 1)
	if len(msgs) != 16*15 {
		t.Fatalf("%d messages, want 240", len(msgs))
	}
	seen := map[string]bool{}
	for _, m := range msgs {
		p := m.Src + ">" + m.Dst
		if m.Src == m.Dst || seen[p] || m.After != nil {
			t.Fatalf("bad message %+v", m)
		}
		seen[p] = true
	}
	// Every round is a permutation.
	for r := range 15 {
		sent, received := counts(msgs[r*16 : (r+1)*16])
		if len(sent) != 16 || len(received) != 16 {
			t.Fatalf("round %d is not a permutation", r)
		}
	}
}

func TestAllToAllMaxParallel(t *testing.T) {
	f := fatTree(t, 4)
	hosts := []string{"h0-0-0", "h1-0-0", "h2-0-0", "h3-0-0"}
	msgs := generate(t, Spec{Kind: AllToAll, Size: Fixed(10), Hosts: hosts, MaxParallel: 1}, f, 1)
	type view struct {
		Pair  string
		Step  int
		After []int
	}
	var got []view
	for _, m := range msgs {
		got = append(got, view{m.Src + ">" + m.Dst, m.Step, m.After})
	}
	want := []view{
		{"h0-0-0>h1-0-0", 0, nil}, {"h1-0-0>h2-0-0", 0, nil}, {"h2-0-0>h3-0-0", 0, nil}, {"h3-0-0>h0-0-0", 0, nil},
		{"h0-0-0>h2-0-0", 1, []int{0}}, {"h1-0-0>h3-0-0", 1, []int{1}}, {"h2-0-0>h0-0-0", 1, []int{2}}, {"h3-0-0>h1-0-0", 1, []int{3}},
		{"h0-0-0>h3-0-0", 2, []int{4}}, {"h1-0-0>h0-0-0", 2, []int{5}}, {"h2-0-0>h1-0-0", 2, []int{6}}, {"h3-0-0>h2-0-0", 2, []int{7}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("windowed all-to-all (-want +got):\n%s", diff)
	}
}

func TestRingAllReduceStructure(t *testing.T) {
	f := fatTree(t, 4)
	hosts := []string{"h0-0-0", "h1-0-0", "h2-0-0", "h3-0-0"}
	// 10 bytes over 4 hosts: chunks 0 and 1 carry 3 bytes, 2 and 3 carry 2.
	msgs := generate(t, Spec{Kind: RingAllReduce, Size: Fixed(10), Hosts: hosts, Order: RingPlan}, f, 1)
	type view struct {
		ID    int
		Pair  string
		Bytes uint64
		Step  int
		After []int
	}
	var got []view
	for _, m := range msgs {
		got = append(got, view{m.ID, m.Src + ">" + m.Dst, m.Bytes, m.Step, m.After})
	}
	a, b, c, d := "h0-0-0>h1-0-0", "h1-0-0>h2-0-0", "h2-0-0>h3-0-0", "h3-0-0>h0-0-0"
	want := []view{
		// Reduce-scatter: host i sends chunk i-s.
		{0, a, 3, 0, nil}, {1, b, 3, 0, nil}, {2, c, 2, 0, nil}, {3, d, 2, 0, nil},
		{4, a, 2, 1, []int{0, 3}}, {5, b, 3, 1, []int{0, 1}}, {6, c, 3, 1, []int{1, 2}}, {7, d, 2, 1, []int{2, 3}},
		{8, a, 2, 2, []int{4, 7}}, {9, b, 2, 2, []int{4, 5}}, {10, c, 3, 2, []int{5, 6}}, {11, d, 3, 2, []int{6, 7}},
		// All-gather: host i sends chunk i+1-t, the one it finished or received last.
		{12, a, 3, 3, []int{8, 11}}, {13, b, 2, 3, []int{8, 9}}, {14, c, 2, 3, []int{9, 10}}, {15, d, 3, 3, []int{10, 11}},
		{16, a, 3, 4, []int{12, 15}}, {17, b, 3, 4, []int{12, 13}}, {18, c, 2, 4, []int{13, 14}}, {19, d, 2, 4, []int{14, 15}},
		{20, a, 2, 5, []int{16, 19}}, {21, b, 3, 5, []int{16, 17}}, {22, c, 3, 5, []int{17, 18}}, {23, d, 2, 5, []int{18, 19}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ring all-reduce (-want +got):\n%s", diff)
	}
}

// TestRingAllReduceChunks: on a random ring of every host, each host sends
// 2(n-1) messages to one successor, each step carries the whole buffer
// once, and every step-s message waits for step s-1.
func TestRingAllReduceChunks(t *testing.T) {
	f := fatTree(t, 4)
	const size = 1<<20 + 5
	msgs := generate(t, Spec{Kind: RingAllReduce, Size: Fixed(size)}, f, 9)
	n := len(f.Hosts)
	if len(msgs) != 2*(n-1)*n {
		t.Fatalf("%d messages, want %d", len(msgs), 2*(n-1)*n)
	}
	succ := map[string]string{}
	for s := range 2 * (n - 1) {
		var total uint64
		for _, m := range msgs[s*n : (s+1)*n] {
			total += m.Bytes
			if m.Step != s {
				t.Fatalf("message %d in step %d says step %d", m.ID, s, m.Step)
			}
			if prev, ok := succ[m.Src]; ok && prev != m.Dst {
				t.Fatalf("%s sends to both %s and %s", m.Src, prev, m.Dst)
			}
			succ[m.Src] = m.Dst
			for _, a := range m.After {
				if msgs[a].Step != s-1 {
					t.Fatalf("message %d (step %d) waits for message %d of step %d", m.ID, s, a, msgs[a].Step)
				}
			}
			if (s == 0) != (len(m.After) == 0) {
				t.Fatalf("message %d of step %d waits for %v", m.ID, s, m.After)
			}
		}
		if total != size {
			t.Errorf("step %d moves %d bytes, want %d", s, total, size)
		}
	}
	// The successors form one cycle through every host.
	at, seen := f.Hosts[0].Name, 0
	for range n {
		at = succ[at]
		seen++
		if at == f.Hosts[0].Name {
			break
		}
	}
	if seen != n {
		t.Errorf("the ring closes after %d hosts, want %d", seen, n)
	}
}

func TestAllToAllVTotals(t *testing.T) {
	f := fatTree(t, 4)
	m := &Matrix{File: "m.csv", Bytes: [][]uint64{
		{5, 100, 0},
		{200, 0, 300},
		{0, 0, 7},
	}}
	hosts := []string{"h1-0-0", "h0-0-0", "h3-1-1"}
	msgs := generate(t, Spec{Kind: AllToAllV, Hosts: hosts, Matrix: m}, f, 1)
	want := []Message{
		{ID: 0, Src: "h1-0-0", Dst: "h0-0-0", Bytes: 100},
		{ID: 1, Src: "h0-0-0", Dst: "h1-0-0", Bytes: 200},
		{ID: 2, Src: "h0-0-0", Dst: "h3-1-1", Bytes: 300},
	}
	if diff := cmp.Diff(want, msgs); diff != "" {
		t.Errorf("all-to-all-v (-want +got):\n%s", diff)
	}
	sent, received := m.Total()
	if diff := cmp.Diff([][]uint64{{100, 500, 0}, {200, 100, 300}}, [][]uint64{sent, received}); diff != "" {
		t.Errorf("totals (-want +got):\n%s", diff)
	}
	// The messages add up to the matrix, per host.
	bySrc := map[string]uint64{}
	for _, msg := range msgs {
		bySrc[msg.Src] += msg.Bytes
	}
	for i, h := range hosts {
		if bySrc[h] != sent[i] {
			t.Errorf("%s sends %d, the matrix says %d", h, bySrc[h], sent[i])
		}
	}
}

func TestCheck(t *testing.T) {
	k4 := fatTree(t, 4)
	sq := func(n int) *Matrix {
		b := make([][]uint64, n)
		for i := range b {
			b[i] = make([]uint64, n)
		}
		return &Matrix{File: "tm.csv", Bytes: b}
	}
	tests := []struct {
		name string
		spec Spec
		want []Problem
	}{
		{"ok", Spec{Kind: Permutation, Size: Fixed(1)}, nil},
		{"unknown kind", Spec{Kind: "shuffle", Size: Fixed(1)}, []Problem{{"kind", `unknown workload "shuffle" (valid: permutation, all-to-all, incast, tornado, ring-allreduce, all-to-all-v, cm)`}}},
		{"no size", Spec{Kind: Tornado}, []Problem{{"size", "missing; a tornado needs a message size"}}},
		{"unknown host", Spec{Kind: Permutation, Size: Fixed(1), Hosts: []string{"h0-0-0", "h9-0-0"}}, []Problem{{"hosts", `no host named "h9-0-0"`}}},
		{"one host", Spec{Kind: Permutation, Size: Fixed(1), Hosts: []string{"h0-0-0"}}, []Problem{{"hosts", "a permutation needs at least 2 hosts, found 1"}}},
		{"repeated host", Spec{Kind: Permutation, Size: Fixed(1), Hosts: []string{"h0-0-0", "h0-0-0"}}, []Problem{{"hosts", "h0-0-0 is listed twice"}}},
		{"inter-pod impossible", Spec{Kind: Permutation, Size: Fixed(1), InterPod: true, Hosts: []string{"h0-0-0", "h0-0-1", "h1-0-0"}},
			[]Problem{{"inter_pod", "impossible: 2 of the 3 hosts are in pod 0, and an inter-pod permutation needs every pod to hold at most half of them"}}},
		{"incast no senders", Spec{Kind: Incast, Size: Fixed(1)}, []Problem{{"senders", "missing; an incast needs the number of senders, 1 to 15"}}},
		{"incast too many", Spec{Kind: Incast, Size: Fixed(1), Senders: 16}, []Problem{{"senders", "16 is too many: with 16 hosts there are at most 15 senders besides the receiver"}}},
		{"incast receiver", Spec{Kind: Incast, Size: Fixed(1), Senders: 1, Receiver: "e0-0"}, []Problem{{"receiver", `no host named "e0-0"`}}},
		{"incast receiver not participating", Spec{Kind: Incast, Size: Fixed(1), Senders: 1, Receiver: "h3-0-0", Hosts: []string{"h0-0-0", "h1-0-0"}},
			[]Problem{{"receiver", "h3-0-0 is not one of the workload's hosts"}}},
		{"tornado odd", Spec{Kind: Tornado, Size: Fixed(1), Hosts: []string{"h0-0-0", "h1-0-0", "h2-0-0"}},
			[]Problem{{"hosts", "a tornado pairs every host with its mirror in the other half, so it needs an even number of hosts, found 3"}}},
		{"ring range", Spec{Kind: RingAllReduce, Size: Size{1, 2}}, []Problem{{"size", "a ring all-reduce reduces one buffer; give one size, not a range"}}},
		{"ring too small", Spec{Kind: RingAllReduce, Size: Fixed(15)}, []Problem{{"size", "15B is smaller than the 16 hosts of the ring; every host needs a chunk of at least 1 byte"}}},
		{"ring order", Spec{Kind: RingAllReduce, Size: Fixed(1 << 20), Order: "zigzag"}, []Problem{{"order", `unknown order "zigzag" (valid: random, plan)`}}},
		{"a2av no matrix", Spec{Kind: AllToAllV}, []Problem{{"matrix", "missing; an all-to-all-v needs a traffic matrix file"}}},
		{"a2av wrong size", Spec{Kind: AllToAllV, Matrix: sq(4)}, []Problem{{"matrix",
			"tm.csv is 4x4 but there are 16 participants (the topology's hosts); the matrix must be 16x16, or list the hosts its rows stand for in hosts"}}},
		{"a2av subset", Spec{Kind: AllToAllV, Matrix: sq(3), Hosts: []string{"h0-0-0", "h1-0-0"}}, []Problem{{"matrix",
			"tm.csv is 3x3 but there are 2 participants (the hosts listed in hosts); the matrix must be 2x2, or list the hosts its rows stand for in hosts"}}},
		{"a2av fits subset", Spec{Kind: AllToAllV, Matrix: sq(2), Hosts: []string{"h0-0-0", "h1-0-0"}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.spec.Check(k4)); diff != "" {
				t.Errorf("Check (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want Size
		err  string
	}{
		{in: "1MiB", want: Fixed(1 << 20)},
		{in: "256KiB..1MiB", want: Size{256 << 10, 1 << 20}},
		{in: "1500", want: Fixed(1500)},
		{in: "1MiB..256KiB", err: `range "1MiB..256KiB" runs backwards; write the smaller size first`},
		{in: "0", err: `"0": a message must carry at least 1 byte`},
		{in: "1Mb", err: `cannot parse "1Mb": unit "Mb" ends in a lowercase b, which usually means bits; sizes are in bytes: write MiB (1048576 bytes) or MB (1000000 bytes)`},
	}
	for _, tc := range tests {
		got, err := ParseSize(tc.in)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if diff := cmp.Diff(tc.err, gotErr); diff != "" {
			t.Errorf("ParseSize(%q) error (-want +got):\n%s", tc.in, diff)
		}
		if diff := cmp.Diff(tc.want, got); err == nil && diff != "" {
			t.Errorf("ParseSize(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
	if s := (Size{256 << 10, 1 << 20}).String(); s != "256KiB..1MiB" {
		t.Errorf("String() = %q", s)
	}
}

func TestHops(t *testing.T) {
	f := fatTree(t, 4)
	ls := leafSpine(t, 3, 2, 2)
	var got []string
	for _, p := range [][2]string{{"h0-0-0", "h0-0-1"}, {"h0-0-0", "h0-1-0"}, {"h0-0-0", "h3-1-1"}} {
		got = append(got, fmt.Sprint(f.Hops(mustHost(t, f, p[0]), mustHost(t, f, p[1]))))
	}
	for _, p := range [][2]string{{"h0-0", "h0-1"}, {"h0-0", "h2-1"}} {
		got = append(got, fmt.Sprint(ls.Hops(mustHost(t, ls, p[0]), mustHost(t, ls, p[1]))))
	}
	if diff := cmp.Diff([]string{"2", "4", "6", "2", "4"}, got); diff != "" {
		t.Errorf("hops (-want +got):\n%s", diff)
	}
	if !slices.Equal([]int{f.Tiers, ls.Tiers}, []int{3, 2}) || f.MTU != 1500 || f.MaxBps != 100_000_000 {
		t.Errorf("fabric summary: tiers %d/%d, mtu %d, max %d", f.Tiers, ls.Tiers, f.MTU, f.MaxBps)
	}
}
