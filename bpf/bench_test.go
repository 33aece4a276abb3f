package bpf

import (
	"net/netip"
	"testing"
	"time"

	"github.com/cilium/ebpf"
)

// Benchmarks run the programs in the kernel (BPF_PROG_TEST_RUN) and report
// the kernel's own time per run as ns/pkt. The test run reuses the frame
// across repeats, so each call repeats 250 times on a TTL-255 frame: every
// run forwards (TTL 255 -> 5), none falls into the TTL drop.

const benchRepeat = 250

func benchProg(b *testing.B, p *ebpf.Program, in []byte, want uint32) {
	b.Helper()
	var total time.Duration
	for b.Loop() {
		v, d, err := p.Benchmark(in, benchRepeat, nil)
		if err != nil {
			b.Fatal(err)
		}
		if v != want {
			b.Fatalf("verdict %d, want %d", v, want)
		}
		total += d
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns/pkt")
}

func benchFrame(dst string) []byte {
	return frame{src: hostAddr(0), dst: netip.MustParseAddr(dst), ttl: 255, payload: 458}.bytes()
}

func benchFixture(b *testing.B, c Config) *fixture {
	f := newFixture(b, c)
	for p := range nPorts {
		pc := basePort(p)
		pc.RateBps, pc.BufferBytes, pc.ECNBytes = 100_000_000_000, 1<<30, 1<<29
		f.must(f.s.SetPort(p, pc))
	}
	f.ingress(4)
	return f
}

func BenchmarkXDPLineRateDown(b *testing.B) {
	f := benchFixture(b, baseConfig())
	benchProg(b, f.s.xdp, benchFrame("10.0.0.3"), xdpRedirect)
}

func BenchmarkXDPLineRateUp(b *testing.B) {
	for _, pol := range []Policy{PolicyECMP, PolicyOfan, PolicyRR, PolicyRandom} {
		b.Run(pol.String(), func(b *testing.B) {
			c := baseConfig()
			c.Policy = pol
			f := benchFixture(b, c)
			f.ingress(0)
			f.must(f.s.SetPointer(PointerKey{Group: 1, Class: ClassData}, 0, []int{0, 1, 2, 3}))
			benchProg(b, f.s.xdp, benchFrame("10.1.0.9"), xdpRedirect)
		})
	}
}

// BenchmarkXDPLineRateUpSkip: uplink 3 invalid, so every fourth packet
// of a pointer policy skips an entry (the skip scan) and ecmp/random
// choose among 3.
func BenchmarkXDPLineRateUpSkip(b *testing.B) {
	for _, pol := range []Policy{PolicyECMP, PolicyOfan, PolicyRR, PolicyRandom} {
		b.Run(pol.String(), func(b *testing.B) {
			c := baseConfig()
			c.Policy = pol
			f := benchFixture(b, c)
			f.ingress(0)
			f.must(f.s.SetGroupValid(1, 0b0111))
			f.must(f.s.SetPointer(PointerKey{Group: 1, Class: ClassData}, 0, []int{3, 2, 1, 0}))
			benchProg(b, f.s.xdp, benchFrame("10.1.0.9"), xdpRedirect)
		})
	}
}

func BenchmarkXDPShapedPass(b *testing.B) {
	c := baseConfig()
	c.Mode = ModeShaped
	f := benchFixture(b, c)
	benchProg(b, f.s.xdp, benchFrame("10.0.0.3"), xdpPass)
}

func BenchmarkTCShapedDown(b *testing.B) {
	c := baseConfig()
	c.Mode = ModeShaped
	f := benchFixture(b, c)
	benchProg(b, f.s.tc, benchFrame("10.0.0.3"), tcRedirect)
}

func BenchmarkTCShapedUp(b *testing.B) {
	for _, pol := range []Policy{PolicyECMP, PolicyOfan, PolicyAR} {
		b.Run(pol.String(), func(b *testing.B) {
			c := baseConfig()
			c.Mode, c.Policy = ModeShaped, pol
			f := benchFixture(b, c)
			f.ingress(0)
			f.must(f.s.SetPointer(PointerKey{Group: 1, Class: ClassData}, 0, []int{0, 1, 2, 3}))
			benchProg(b, f.s.tc, benchFrame("10.1.0.9"), tcRedirect)
		})
	}
}

func BenchmarkXDPPass(b *testing.B) {
	f := newFixture(b, baseConfig())
	benchProg(b, f.s.pass, benchFrame("10.0.0.3"), xdpPass)
}
