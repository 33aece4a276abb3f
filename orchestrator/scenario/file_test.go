package scenario

import "testing"

func TestSniff(t *testing.T) {
	for _, tt := range []struct {
		yaml string
		want FileKind
	}{
		{"topology: t.yaml\nworkload: {kind: permutation}\n", ScenarioFile},
		{"topology: {kind: fattree, k: 4}\n", ScenarioFile},
		{"kind: fattree\nk: 4\n", TopologyFile},
		{"kind: fattree\nworkload: {kind: incast}\n", ScenarioFile},
		{"name: x\n", UnknownFile},
		{"- a\n- b\n", UnknownFile},
		{"kind: [\n", UnknownFile},
		{"", UnknownFile},
	} {
		if got := Sniff([]byte(tt.yaml)); got != tt.want {
			t.Errorf("%q: %v, want %v", tt.yaml, got, tt.want)
		}
	}
}
