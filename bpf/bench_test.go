package bpf

import (
	"testing"
	"time"
)

// Benchmarks run the programs in the kernel (BPF_PROG_TEST_RUN) on the
// reference switch and report the kernel's own time per run as ns/pkt:
// the same paths ftlab bench dataplane reports (MeasureProgramCosts). The
// test run reuses the frame across repeats; its TTL of 255 keeps every
// run forwarding.

const benchRepeat = 250

func benchCase(b *testing.B, c costCase, extra func(*Switch) error) {
	requireRoot(b)
	s, frame, err := c.setup()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if extra != nil {
		if err := extra(s); err != nil {
			b.Fatal(err)
		}
	}
	var total time.Duration
	for b.Loop() {
		d, err := c.run(s, frame, benchRepeat, 1)
		if err != nil {
			b.Fatal(err)
		}
		total += d
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns/pkt")
}

func BenchmarkPrograms(b *testing.B) {
	for _, c := range costCases {
		b.Run(c.name, func(b *testing.B) { benchCase(b, c, nil) })
	}
}

// BenchmarkXDPLineRateUpSkip: uplink 3 invalid, so every fourth packet
// of a pointer policy skips an entry (the skip scan) and ecmp/random
// choose among 3.
func BenchmarkXDPLineRateUpSkip(b *testing.B) {
	for _, c := range costCases {
		if c.mode != ModeLineRate || c.dst != costUp {
			continue
		}
		b.Run(c.name, func(b *testing.B) {
			benchCase(b, c, func(s *Switch) error {
				if err := s.SetGroupValid(1, 0b0111); err != nil {
					return err
				}
				return s.SetPointer(PointerKey{Group: 1, Class: ClassData}, 0, []int{3, 2, 1, 0})
			})
		})
	}
}

// TestProgramCosts: every measured path takes its expected verdict and
// some time, and the baseline comes first.
func TestProgramCosts(t *testing.T) {
	requireRoot(t)
	costs, err := MeasureProgramCosts(10, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(costs) != len(costCases) || costs[0].Name != "xdp_pass" {
		t.Fatalf("costs %+v", costs)
	}
	for _, c := range costs {
		if c.NsPerPacket <= 0 {
			t.Errorf("%s: %v ns per packet", c.Name, c.NsPerPacket)
		}
	}
}
