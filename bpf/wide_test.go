package bpf

import (
	"fmt"
	"maps"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The uplink choice on wide valid sets: 64 uplinks (every bit of the u64
// bitmap) and a width that is not a power of two, against the Go mirrors
// of the policies. The fixture tables use 4 uplinks; these cover the bit
// search, the pointer skip scan and the ar scan over the whole range.

// wideFixture is the fixture with uplinks 0..63 on ports 4..67.
func wideFixture(t *testing.T, c Config) *fixture {
	f := newFixture(t, c)
	for p := nPorts; p < nDown+MaxUplinks; p++ {
		f.must(f.s.SetPort(p, basePort(p)))
	}
	return f
}

// wideUplinks makes uplinks 0..w-1 exist (n_uplinks = w).
func (f *fixture) wideUplinks(w int) {
	f.t.Helper()
	ports := make([]int, w)
	for u := range ports {
		ports[u] = uplinkPort(u)
	}
	f.must(f.s.SetUplinks(ports))
}

// wideSets are valid sets with bits everywhere in the word.
func wideSets(rng *rand.Rand) []uint64 {
	sets := []uint64{^uint64(0), 1, 1 << 63, 1<<63 | 1, 0x8000_0001_8000_0001, 0x5555_5555_5555_5555,
		0xaaaa_aaaa_aaaa_aaaa, 0x00ff_0000_0000_ff00, 0xffff_ffff_0000_0000}
	for range 12 {
		sets = append(sets, rng.Uint64()&rng.Uint64()) // about 16 bits
	}
	return sets
}

func widthMask(w int) uint64 {
	if w >= 64 {
		return ^uint64(0)
	}
	return 1<<w - 1
}

func TestWideECMP(t *testing.T) {
	c := baseConfig()
	f := wideFixture(t, c)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, w := range []int{64, 37} {
		f.wideUplinks(w)
		for _, valid := range wideSets(rng) {
			eff := valid & widthMask(w)
			if eff == 0 {
				continue
			}
			f.must(f.s.SetGroupValid(1, valid))
			for sport := uint16(1); sport <= 48; sport++ {
				in := upFrame(sport, false)
				if u, want := f.sendUp(in), ecmpUplink(in, c.Seed, eff); u != want {
					t.Fatalf("w %d, valid %#x, sport %d: uplink %d, want %d", w, valid, sport, u, want)
				}
			}
		}
	}
}

func TestWideRandom(t *testing.T) {
	c := baseConfig()
	c.Policy = PolicyRandom
	f := wideFixture(t, c)
	f.wideUplinks(64)
	valid := uint64(1 | 1<<31 | 1<<63)
	f.must(f.s.SetGroupValid(1, valid))
	seen := map[int]int{}
	for i := range 300 {
		seen[f.sendUp(upFrame(uint16(i+1), false))]++
	}
	for u, n := range seen {
		if valid>>u&1 == 0 {
			t.Errorf("random picked invalid uplink %d (%d times)", u, n)
		}
	}
	for _, u := range []int{0, 31, 63} {
		if seen[u] < 50 {
			t.Errorf("uplink %d picked %d times of 300, want about 100 (%v)", u, seen[u], seen)
		}
	}
}

// TestWidePointers: ofan (a random order) and rr (identity) skip invalid
// entries over up to 63 positions, consume them, and wrap the counter.
func TestWidePointers(t *testing.T) {
	requireRoot(t)
	data := PointerKey{Group: 1, Class: ClassData}
	for _, pol := range []Policy{PolicyOfan, PolicyRR} {
		for _, w := range []int{64, 37} {
			t.Run(fmt.Sprintf("%s w=%d", pol, w), func(t *testing.T) {
				c := baseConfig()
				c.Policy = pol
				f := wideFixture(t, c)
				f.wideUplinks(w)
				rng := rand.New(rand.NewPCG(uint64(w), uint64(pol)))
				for k, valid := range wideSets(rng) {
					eff := valid & widthMask(w)
					if eff == 0 {
						continue
					}
					f.must(f.s.SetGroupValid(1, valid))
					order := make([]int, w)
					for i := range order {
						order[i] = i
					}
					start := rng.Uint32()
					if k%3 == 0 {
						start = ^uint32(0) - 5 // wraps during the run
					}
					if pol == PolicyRR {
						f.must(f.s.SetRRCounter(start))
					} else {
						rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
						f.must(f.s.SetPointer(data, start, order))
					}
					sim := start
					var got, want []int
					for i := range 2*bits.OnesCount64(eff) + 3 {
						got = append(got, f.sendUp(upFrame(uint16(i+1), false)))
						want = append(want, pickSim(&sim, order, eff))
					}
					if d := cmp.Diff(want, got); d != "" {
						t.Fatalf("valid %#x, start %d (-want +got):\n%s", valid, start, d)
					}
					var n uint32
					if pol == PolicyRR {
						n, _ = f.s.RRCounter()
					} else {
						n, _, _ = f.s.Pointer(data)
					}
					if n != sim {
						t.Fatalf("valid %#x, start %d: counter %d, want %d", valid, start, n, sim)
					}
				}
			})
		}
	}
}

// TestWideAR: ar looks at every valid uplink of a 64-bit set and only at
// those.
func TestWideAR(t *testing.T) {
	c := baseConfig()
	c.Mode, c.Policy = ModeShaped, PolicyAR
	f := wideFixture(t, c)
	f.wideUplinks(64)
	// Backlogs in bytes; the least is chosen among the valid ones.
	backlog := map[int]uint64{0: 70_000, 3: 50_000, 17: 40_000, 40: 60_000, 50: 20_000, 63: 30_000}
	for u, b := range backlog {
		f.setBacklog(uplinkPort(u), b)
	}
	var valid uint64
	for u := range backlog {
		valid |= 1 << u
	}
	for _, drop := range [][]int{nil, {50}, {50, 63}, {50, 63, 17}, {3, 17, 40, 50, 63}} {
		v := valid
		for _, u := range drop {
			v &^= 1 << u
		}
		f.must(f.s.SetGroupValid(1, v))
		want, best := -1, uint64(0)
		for u, b := range backlog {
			if v>>u&1 == 1 && (want < 0 || b < best) {
				want, best = u, b
			}
		}
		for i := range 3 {
			if u := f.sendUpTC(upFrame(uint16(i+1), false)); u != want {
				t.Fatalf("valid %#x: uplink %d, want %d (least backlog)", v, u, want)
			}
		}
	}
	// Equal quantized backlogs at both ends of the word: both are used.
	c.ARQuantum = 1 << 20
	f.must(f.s.SetConfig(c))
	f.must(f.s.SetGroupValid(1, 1|1<<63))
	f.setBacklog(uplinkPort(63), 70_000)
	seen := map[int]int{}
	for i := range 200 {
		seen[f.sendUpTC(upFrame(uint16(i+1), true))]++
	}
	if keys := slices.Sorted(maps.Keys(seen)); !slices.Equal(keys, []int{0, 63}) || seen[0] < 40 || seen[63] < 40 {
		t.Errorf("uplinks used %v: want 0 and 63 about equally", seen)
	}
}
