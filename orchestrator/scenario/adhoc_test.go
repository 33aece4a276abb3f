package scenario

import (
	"strings"
	"testing"
	"time"

	"github.com/ftlab/ftlab/internal/testlab"
	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/switchd"
)

// TestForLab: an ad-hoc cell gets the lab's data plane and every default
// a file would, takes [block.]key=value settings for the transport's
// blocks and the host block, and names every bad one.
func TestForLab(t *testing.T) {
	topo := testlab.Topology(t, "fattree-k4")
	dp := switchd.Config{Mode: switchd.ModeShaped, EdgePolicy: "ofan", AggPolicy: "ecmp"}.WithDefaults()
	cfg, err := ForLab(topo, dp, AdHoc{Transport: "rss+pfld", Params: []string{"sigma=8", "pfld.bitmap_bits=1024", "host.window=64KiB"}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DataPlane != Shaped || cfg.Policy.Edge() != "ofan" || cfg.Policy.Agg() != "ecmp" || cfg.Timeout != DefaultTimeout {
		t.Errorf("cell: data plane %s, policy %v, timeout %v", cfg.DataPlane, cfg.Policy, cfg.Timeout)
	}
	if cfg.RSS == nil || cfg.RSS.Sigma != 8 || cfg.PFLD == nil || cfg.PFLD.BitmapBits != 1024 || cfg.Host.Window != 64*units.KiB {
		t.Errorf("params: rss %+v pfld %+v host %+v", cfg.RSS, cfg.PFLD, cfg.Host)
	}
	if cfg.BaseRTT != BaseRTT(topo) || cfg.Host.MinRTO != 4*cfg.BaseRTT || cfg.Topo() != topo || cfg.Fabric() == nil {
		t.Errorf("base RTT %v, min RTO %v", cfg.BaseRTT, cfg.Host.MinRTO)
	}

	// The congestion control's blocks, by block or by bare name.
	cfg, err = ForLab(topo, dp, AdHoc{Transport: "rss", CC: "swift", Params: []string{"swift.ai=2", "beta=0.5", "sigma=8"}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CC != "swift" || cfg.Swift == nil || cfg.Swift.AI != 2 || cfg.Swift.Beta != 0.5 || cfg.RSS.Sigma != 8 {
		t.Errorf("cc %s swift %+v rss %+v", cfg.CC, cfg.Swift, cfg.RSS)
	}
	if cfg, err := ForLab(topo, dp, AdHoc{Transport: "rss"}); err != nil || cfg.CC != DefaultCC {
		t.Errorf("default cc: %v, %v", cfg, err)
	}
	if _, err := ForLab(topo, dp, AdHoc{Transport: "rss", CC: "cubic"}); err == nil || !strings.Contains(err.Error(), "swift") {
		t.Errorf("unknown cc: %v; want the valid ones", err)
	}
	if _, err := ForLab(topo, dp, AdHoc{Transport: "rss", Params: []string{"swift.ai=2"}}); err == nil {
		t.Errorf("a swift parameter without cc swift was taken")
	}

	_, err = ForLab(topo, dp, AdHoc{Transport: "rss", Params: []string{"sigma=3", "tau", "host.window=0B", "pfld.bitmap_bits=64"}})
	for _, want := range []string{`param "sigma=3"`, `param "tau": want`, `param "host.window=0B"`, `param "pfld.bitmap_bits=64": rss does not take the pfld block`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v; want %q", err, want)
		}
	}
	if _, err := ForLab(topo, dp, AdHoc{Transport: "warp"}); err == nil || !strings.Contains(err.Error(), "rss+pfld") {
		t.Errorf("unknown transport: %v; want the valid ones", err)
	}
	// PFLD's bitmap must cover a window, as in a scenario file.
	if _, err := ForLab(topo, dp, AdHoc{Transport: "rss+pfld", Params: []string{"host.window=16MiB"}, Timeout: time.Second}); err == nil || !strings.Contains(err.Error(), "bitmap_bits") {
		t.Errorf("window beyond the bitmap: %v", err)
	}
}
