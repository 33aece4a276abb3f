package topology

import (
	"testing"
	"time"

	"github.com/ftlab/ftlab/internal/units"
)

func TestScaleRates(t *testing.T) {
	topo, err := Load("../../topologies/asymmetric-k4.yaml")
	if err != nil {
		t.Fatal(err)
	}
	before := topo.FullRate()
	ratio := map[string]float64{}
	for _, l := range topo.Links {
		ratio[l.Name] = float64(l.Up.RateBps) / float64(before)
	}
	topo.ScaleRates(10 * units.Mbit)
	if got := topo.FullRate(); got != 10*units.Mbit {
		t.Fatalf("FullRate after scaling = %d, want %d", got, 10*units.Mbit)
	}
	slow := 0
	for _, l := range topo.Links {
		want := ratio[l.Name] * float64(10*units.Mbit)
		if d := float64(l.Up.RateBps) - want; d > 1 || d < -1 {
			t.Errorf("%s up: %d bit/s, want %.0f (ratio kept)", l.Name, l.Up.RateBps, want)
		}
		if l.Up.RateBps < 10*units.Mbit {
			slow++
		}
	}
	if slow == 0 {
		t.Error("asymmetric-k4 has no slower links after scaling; the ratio was lost")
	}
}

// TestScaleRatesStretchesDelays: running a fabric 4x slower makes its
// delays 4x longer, so the BDP in packets is the topology's.
func TestScaleRatesStretchesDelays(t *testing.T) {
	topo, err := Parse("d.yaml", []byte("kind: fattree\nk: 4\nlinks: {rate: 40Mbit, delay: 1.5us, jitter: 250ns}\n"))
	if err != nil {
		t.Fatal(err)
	}
	topo.ScaleRates(10 * units.Mbit)
	for _, l := range topo.Links {
		if l.Up.Delay != 6*time.Microsecond || l.Down.Jitter != time.Microsecond {
			t.Fatalf("%s: delay %v, jitter %v after a 4x slowdown, want 6us and 1us", l.Name, l.Up.Delay, l.Down.Jitter)
		}
	}
}
