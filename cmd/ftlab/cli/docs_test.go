package cli

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ftlab/ftlab/internal/testlab"
)

var update = flag.Bool("update", false, "rewrite the generated CLI reference (make docs)")

// TestDocsCurrent: docs/cli and docs/man are what the commands generate
// now. make docs (go test ./cmd/ftlab/cli -run TestDocsCurrent -update)
// rewrites them.
func TestDocsCurrent(t *testing.T) {
	root := testlab.Root(t)
	md, man := filepath.Join(root, DocsMarkdownDir), filepath.Join(root, DocsManDir)
	if *update {
		if err := WriteDocs(md, man); err != nil {
			t.Fatal(err)
		}
	}
	tmp := t.TempDir()
	gmd, gman := filepath.Join(tmp, "cli"), filepath.Join(tmp, "man")
	if err := WriteDocs(gmd, gman); err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][2]string{{md, gmd}, {man, gman}} {
		have, want := files(t, pair[0]), files(t, pair[1])
		if !slices.Equal(namesOf(have), namesOf(want)) {
			t.Errorf("%s has %v, the commands generate %v: run make docs", pair[0], namesOf(have), namesOf(want))
			continue
		}
		for name, text := range want {
			if have[name] != text {
				t.Errorf("%s is stale: run make docs", filepath.Join(pair[0], name))
			}
		}
	}
	if _, ok := files(t, gmd)["ftlab_link_set.md"]; !ok {
		t.Errorf("no page for ftlab link set")
	}
}

func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(data)
	}
	return out
}

func namesOf(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
