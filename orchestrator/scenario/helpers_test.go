package scenario

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ftlab/ftlab/hostagent/scheme"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/internal/params"
	"github.com/ftlab/ftlab/switchd"
)

// parse loads a scenario given as text, named s.yaml in errors. Relative
// paths in it resolve against dir when given.
func parse(t *testing.T, src string, files map[string]string) (*Scenario, error) {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Run from dir so errors name files relative to it, as a user would see.
	t.Chdir(dir)
	return Parse("s.yaml", []byte(src))
}

func mustParse(t *testing.T, src string, files map[string]string) *Scenario {
	t.Helper()
	s, err := parse(t, src, files)
	if err != nil {
		t.Fatalf("unexpected errors:\n%v", err)
	}
	return s
}

// minimal is the smallest valid scenario; tests append to it.
const minimal = `topology: {kind: fattree, k: 4}
workload: {kind: permutation}
`

// Names of policies and transports the tests use (the registries in
// switchd and hostagent/scheme hold them all).
const (
	ECMP   PolicyName = "ecmp"
	Ofan   PolicyName = "ofan"
	POfan  PolicyName = "pofan"
	AR     PolicyName = "ar"
	RR     PolicyName = "rr"
	Random PolicyName = "random"

	TransportECMP Transport = "ecmp"
	RPS           Transport = "rps"
	RSS           Transport = "rss"
	RSSPFLD       Transport = "rss+pfld"
	RSSRACK       Transport = "rss+rack"
	PSNPath       Transport = "psnpath"
	GapNACK       Transport = "gapnack"
	REPS          Transport = "reps"
	PLB           Transport = "plb"
)

// Parameter blocks under the names the tests use.
type (
	OfanParams    = switchd.OfanParams
	POfanParams   = switchd.POfanParams
	ARParams      = switchd.ARParams
	RSSParams     = scheme.RSSParams
	PFLDParams    = scheme.PFLDParams
	RACKParams    = scheme.RACKParams
	PSNPathParams = scheme.PSNPathParams
	PLBParams     = scheme.PLBParams
	REPSParams    = scheme.REPSParams
	HostParams    = transport.HostParams
)

// psnpathDefaults is the psnpath block with its defaults at base RTT rtt,
// changed by set.
func psnpathDefaults(rtt time.Duration, set func(*PSNPathParams)) *PSNPathParams {
	p := params.Defaults[PSNPathParams](params.Env{RTT: rtt})
	if set != nil {
		set(&p)
	}
	return &p
}
