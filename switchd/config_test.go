package switchd

import (
	"strings"
	"testing"
)

// TestProbeHeadroomConfig: a probe headroom is a small share of the buffer
// and needs the shaped data plane's queues.
func TestProbeHeadroomConfig(t *testing.T) {
	for _, c := range []struct {
		mode     string
		headroom float64
		err      string
	}{
		{ModeShaped, 0.01, ""},
		{ModeShaped, 0, ""},
		{ModeLineRate, 0, ""},
		{ModeLineRate, 0.01, "a probe headroom needs mode shaped"},
		{ModeShaped, 0.6, "probe headroom 0.6 is outside 0..0.5"},
		{ModeShaped, -0.1, "outside"},
	} {
		err := Config{Mode: c.mode, ProbeHeadroom: c.headroom}.WithDefaults().Validate()
		if (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s, headroom %v: error %v, want %q", c.mode, c.headroom, err, c.err)
		}
	}
}
