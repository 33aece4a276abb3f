package bpf

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// upFrame is a packet from host port 0 to group 1 (10.1/16); data packets
// are above the fixture's ack threshold (100), ack packets at or below.
func upFrame(sport uint16, ack bool) []byte {
	payload := 300
	if ack {
		payload = 0
	}
	return frame{src: hostAddr(0), dst: netip.MustParseAddr("10.1.7.7"), sport: sport, payload: payload}.bytes()
}

// sendUp sends a frame through xdp_ingress (line-rate) and returns the
// uplink index it left on.
func (f *fixture) sendUp(in []byte) int {
	f.t.Helper()
	v, out := f.runXDP(in)
	if v != xdpRedirect {
		f.t.Fatalf("verdict %d, want redirect", v)
	}
	return egressOf(out) - nDown
}

// sendUpTC is sendUp through tc_shaped (shaped mode).
func (f *fixture) sendUpTC(in []byte) int {
	f.t.Helper()
	v, out, _ := f.runTC(in)
	if v != tcRedirect {
		f.t.Fatalf("verdict %d, want tc redirect", v)
	}
	return egressOf(out) - nDown
}

func TestECMP(t *testing.T) {
	f := newFixture(t, baseConfig())
	seen := map[int]int{}
	changed := 0
	for sport := uint16(1); sport <= 64; sport++ {
		in := upFrame(sport, false)
		u := f.sendUp(in)
		if want := ecmpUplink(in, 7, 0xf); u != want {
			t.Fatalf("sport %d: uplink %d, want %d (Go mirror of the hash)", sport, u, want)
		}
		for range 3 {
			if again := f.sendUp(in); again != u {
				t.Fatalf("sport %d: same flow went to uplink %d then %d", sport, u, again)
			}
		}
		seen[u]++
		if ecmpUplink(in, 8, 0xf) != u {
			changed++
		}
	}
	for u := range nUp {
		if seen[u] < 6 {
			t.Errorf("64 flows over 4 uplinks: uplink %d got %d flows (%v)", u, seen[u], seen)
		}
	}

	c := baseConfig()
	c.Seed = 8
	f.must(f.s.SetConfig(c))
	moved := 0
	for sport := uint16(1); sport <= 64; sport++ {
		in := upFrame(sport, false)
		if u, want := f.sendUp(in), ecmpUplink(in, 8, 0xf); u != want {
			t.Fatalf("seed 8, sport %d: uplink %d, want %d", sport, u, want)
		}
		if ecmpUplink(in, 7, 0xf) != ecmpUplink(in, 8, 0xf) {
			moved++
		}
	}
	if moved < 24 || moved != changed {
		t.Errorf("changing the seed moved %d of 64 flows, want about 48", moved)
	}

	f.must(f.s.SetGroupValid(1, 0b1010))
	for sport := uint16(1); sport <= 32; sport++ {
		in := upFrame(sport, false)
		u := f.sendUp(in)
		if u != 1 && u != 3 {
			t.Fatalf("valid {1,3}: flow went to invalid uplink %d", u)
		}
		if want := ecmpUplink(in, 8, 0b1010); u != want {
			t.Fatalf("valid {1,3}: uplink %d, want %d", u, want)
		}
	}

	// tc_shaped makes the same choice.
	c.Mode = ModeShaped
	f.must(f.s.SetConfig(c))
	for sport := uint16(1); sport <= 16; sport++ {
		in := upFrame(sport, false)
		if u, want := f.sendUpTC(in), ecmpUplink(in, 8, 0b1010); u != want {
			t.Fatalf("tc: uplink %d, want %d", u, want)
		}
	}
}

// pickSim mirrors pointer_pick: the uplink a pointer gives next.
func pickSim(counter *uint32, order []int, valid uint64) int {
	w := len(order)
	v := *counter
	*counter++
	base := int(v % uint32(w))
	for i := range w {
		u := order[(base+i)%w]
		if valid>>u&1 == 1 {
			*counter += uint32(i)
			return u
		}
	}
	return -1
}

func TestRR(t *testing.T) {
	requireRoot(t)
	c := baseConfig()
	c.Policy = PolicyRR
	for _, start := range []uint32{0, 1, 5, 0xfffffffe} {
		t.Run(fmt.Sprint("start ", start), func(t *testing.T) {
			f := newFixture(t, c)
			f.must(f.s.SetRRCounter(start))
			var got, want []int
			for i := range 8 {
				// One pointer for the switch: groups 1 and 2 share it.
				dst := "10.1.0.9"
				if i%2 == 1 {
					dst = "10.2.0.9"
				}
				in := frame{src: hostAddr(0), dst: netip.MustParseAddr(dst), sport: uint16(i + 1)}.bytes()
				got = append(got, f.sendUp(in))
				want = append(want, int((start+uint32(i))%nUp))
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("rr sequence (-want +got):\n%s", d)
			}
			if n, _ := f.s.RRCounter(); n != start+8 {
				t.Errorf("counter %d, want %d", n, start+8)
			}
		})
	}

	t.Run("invalid uplink skipped", func(t *testing.T) {
		f := newFixture(t, c)
		f.must(f.s.SetGroupValid(1, 0b1011))
		f.must(f.s.SetRRCounter(1))
		var got []int
		for i := range 6 {
			got = append(got, f.sendUp(upFrame(uint16(i+1), false)))
		}
		if d := cmp.Diff([]int{1, 3, 0, 1, 3, 0}, got); d != "" {
			t.Errorf("rr sequence (-want +got):\n%s", d)
		}
		if n, _ := f.s.RRCounter(); n != 1+6+2 {
			t.Errorf("counter %d, want 9 (6 packets, 2 skips)", n)
		}
	})
}

func TestOfan(t *testing.T) {
	requireRoot(t)
	c := baseConfig()
	c.Policy = PolicyOfan
	order := []int{2, 0, 3, 1}
	data := PointerKey{Group: 1, Class: ClassData}
	ack := PointerKey{Group: 1, Class: ClassAck}

	t.Run("follows the written order from any start", func(t *testing.T) {
		f := newFixture(t, c)
		for start := uint32(0); start < 9; start++ {
			f.must(f.s.SetPointer(data, start, order))
			var got, want []int
			for i := range 8 {
				got = append(got, f.sendUp(upFrame(uint16(i+1), false)))
				want = append(want, order[(int(start)+i)%4])
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("start %d (-want +got):\n%s", start, d)
			}
			if n, _, _ := f.s.Pointer(data); n != start+8 {
				t.Fatalf("start %d: counter %d, want %d", start, n, start+8)
			}
		}
	})

	t.Run("skips an invalid uplink, each valid once per round", func(t *testing.T) {
		f := newFixture(t, c)
		const valid = 0b0111 // uplink 3 lost
		f.must(f.s.SetGroupValid(1, valid))
		cyc := []int{2, 0, 1} // the order without 3
		for start := uint32(0); start < 8; start++ {
			f.must(f.s.SetPointer(data, start, order))
			sim := start
			var got, want []int
			for i := range 9 {
				got = append(got, f.sendUp(upFrame(uint16(i+1), false)))
				want = append(want, pickSim(&sim, order, valid))
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("start %d (-want +got):\n%s", start, d)
			}
			for r := range 3 {
				round := slices.Clone(got[3*r : 3*r+3])
				slices.Sort(round)
				if !slices.Equal(round, []int{0, 1, 2}) {
					t.Fatalf("start %d: round %d used %v, want each valid uplink once", start, r, got[3*r:3*r+3])
				}
			}
			i := slices.Index(cyc, got[0])
			for k, u := range got {
				if u != cyc[(i+k)%3] {
					t.Fatalf("start %d: %v does not follow the order %v", start, got, cyc)
				}
			}
			if n, _, _ := f.s.Pointer(data); n != sim {
				t.Fatalf("start %d: counter %d, want %d", start, n, sim)
			}
		}
	})

	t.Run("data and ack pointers are independent", func(t *testing.T) {
		f := newFixture(t, c)
		f.must(f.s.SetPointer(data, 0, []int{0, 1, 2, 3}))
		f.must(f.s.SetPointer(ack, 2, []int{3, 2, 1, 0}))
		var gotD, gotA []int
		for i, isAck := range []bool{false, true, true, false, true, false, false, true} {
			u := f.sendUp(upFrame(uint16(i+1), isAck))
			if isAck {
				gotA = append(gotA, u)
			} else {
				gotD = append(gotD, u)
			}
		}
		if d := cmp.Diff([]int{0, 1, 2, 3}, gotD); d != "" {
			t.Errorf("data (-want +got):\n%s", d)
		}
		if d := cmp.Diff([]int{1, 0, 3, 2}, gotA); d != "" {
			t.Errorf("ack (-want +got):\n%s", d)
		}
	})

	t.Run("groups are independent", func(t *testing.T) {
		f := newFixture(t, c)
		f.must(f.s.SetPointer(data, 0, []int{0, 1, 2, 3}))
		f.must(f.s.SetPointer(PointerKey{Group: 2, Class: ClassData}, 0, []int{3, 2, 1, 0}))
		var g1, g2 []int
		for i := range 8 {
			dst := "10.1.0.9"
			if i%2 == 1 {
				dst = "10.2.0.9"
			}
			u := f.sendUp(frame{src: hostAddr(0), dst: netip.MustParseAddr(dst), payload: 300}.bytes())
			if i%2 == 0 {
				g1 = append(g1, u)
			} else {
				g2 = append(g2, u)
			}
		}
		if d := cmp.Diff([]int{0, 1, 2, 3}, g1); d != "" {
			t.Errorf("group 1 (-want +got):\n%s", d)
		}
		if d := cmp.Diff([]int{3, 2, 1, 0}, g2); d != "" {
			t.Errorf("group 2 (-want +got):\n%s", d)
		}
	})

	t.Run("valid set separate from the group", func(t *testing.T) {
		f := newFixture(t, c)
		f.must(f.s.AddRoute(netip.MustParsePrefix("10.1.0.0/16"), UpSet(1, 5)))
		f.must(f.s.SetGroupValid(5, 0b0101)) // uplinks 0 and 2
		f.must(f.s.SetPointer(data, 0, order))
		var got []int
		for i := range 6 {
			got = append(got, f.sendUp(upFrame(uint16(i+1), false)))
		}
		if d := cmp.Diff([]int{2, 0, 2, 0, 2, 0}, got); d != "" {
			t.Errorf("(-want +got):\n%s", d)
		}
	})

	t.Run("tc uses the same pointers", func(t *testing.T) {
		cs := c
		cs.Mode = ModeShaped
		f := newFixture(t, cs)
		f.must(f.s.SetPointer(data, 1, order))
		var got []int
		for i := range 4 {
			got = append(got, f.sendUpTC(upFrame(uint16(i+1), false)))
		}
		if d := cmp.Diff([]int{0, 3, 1, 2}, got); d != "" {
			t.Errorf("(-want +got):\n%s", d)
		}
	})
}

func TestPofan(t *testing.T) {
	c := baseConfig()
	c.Policy = PolicyPofan
	c.PipeSize, c.Pipes = 2, 2 // ports 0,1: pipe 0; ports 2,3: pipe 1
	f := newFixture(t, c)
	p0 := PointerKey{Group: 1, Class: ClassData, Pipe: 0}
	p1 := PointerKey{Group: 1, Class: ClassData, Pipe: 1}
	f.must(f.s.SetPointer(p0, 0, []int{0, 1, 2, 3}))
	f.must(f.s.SetPointer(p1, 0, []int{3, 2, 1, 0}))
	if i0, _ := f.s.PointerIndex(p0); i0 != 4 {
		t.Errorf("index of %+v = %d, want 4", p0, i0)
	}
	if i1, _ := f.s.PointerIndex(p1); i1 != 5 {
		t.Errorf("index of %+v = %d, want 5", p1, i1)
	}
	got := map[int][]int{}
	for i, in := range []int{0, 2, 1, 3, 3, 0, 2, 1} {
		f.ingress(in)
		got[in/2] = append(got[in/2], f.sendUp(upFrame(uint16(i+1), false)))
	}
	if d := cmp.Diff(map[int][]int{0: {0, 1, 2, 3}, 1: {3, 2, 1, 0}}, got); d != "" {
		t.Errorf("per-pipe sequences (-want +got):\n%s", d)
	}
}

func TestRandom(t *testing.T) {
	c := baseConfig()
	c.Policy = PolicyRandom
	f := newFixture(t, c)
	f.must(f.s.SetGroupValid(1, 0b1101))
	seen := map[int]int{}
	for i := range 300 {
		seen[f.sendUp(upFrame(1, i%2 == 0))]++
	}
	if seen[1] != 0 {
		t.Errorf("random picked the invalid uplink 1 %d times", seen[1])
	}
	for _, u := range []int{0, 2, 3} {
		if seen[u] < 50 {
			t.Errorf("uplink %d picked %d times of 300, want about 100 (%v)", u, seen[u], seen)
		}
	}
}

func TestAR(t *testing.T) {
	requireRoot(t)
	c := baseConfig()
	c.Policy = PolicyAR
	c.Mode = ModeShaped

	t.Run("least backlogged uplink", func(t *testing.T) {
		f := newFixture(t, c)
		f.setBacklog(uplinkPort(0), 50_000)
		f.setBacklog(uplinkPort(1), 10_000)
		f.setBacklog(uplinkPort(2), 30_000)
		f.setBacklog(uplinkPort(3), 80_000)
		for i := range 5 {
			if u := f.sendUpTC(upFrame(uint16(i+1), false)); u != 1 {
				t.Fatalf("packet %d: uplink %d, want 1 (least backlog)", i, u)
			}
		}
		f.must(f.s.SetGroupValid(1, 0b1101))
		if u := f.sendUpTC(upFrame(9, false)); u != 2 {
			t.Fatalf("uplink 1 invalid: uplink %d, want 2 (next least backlog)", u)
		}
	})

	t.Run("quantum makes ties, broken randomly", func(t *testing.T) {
		cq := c
		cq.ARQuantum = 1 << 20
		f := newFixture(t, cq)
		f.setBacklog(uplinkPort(0), 10_000)
		f.setBacklog(uplinkPort(1), 20_000)
		f.setBacklog(uplinkPort(2), 5_000_000)
		f.setBacklog(uplinkPort(3), 6_000_000)
		seen := map[int]int{}
		for i := range 200 {
			seen[f.sendUpTC(upFrame(uint16(i+1), true))]++
		}
		if seen[2]+seen[3] != 0 || seen[0] < 40 || seen[1] < 40 {
			t.Errorf("uplinks used %v: want 0 and 1 about equally (same quantum), never 2 or 3", seen)
		}
	})

	t.Run("line-rate mode falls back to random", func(t *testing.T) {
		cl := c
		cl.Mode = ModeLineRate
		f := newFixture(t, cl)
		f.must(f.s.SetGroupValid(1, 0b0110))
		before := f.counters()
		seen := map[int]int{}
		for i := range 100 {
			seen[f.sendUp(upFrame(uint16(i+1), false))]++
		}
		if seen[0]+seen[3] != 0 || seen[1] < 20 || seen[2] < 20 {
			t.Errorf("uplinks used %v: want 1 and 2 only, about equally", seen)
		}
		if got := delta(before, f.counters())[0].ARFallback; got != 100 {
			t.Errorf("ar_fallback = %d, want 100", got)
		}
	})
}
