package scenario

import (
	"os"
	"path/filepath"
	"testing"
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
