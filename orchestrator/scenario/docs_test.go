package scenario

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ftlab/ftlab/internal/params"
	"github.com/ftlab/ftlab/orchestrator/workload"
	"github.com/google/go-cmp/cmp"
)

func readDocs(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "scenarios.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestDocsListEverything: docs/scenarios.md names every field, every
// value of every enumeration, and every parameter with its default in a
// table row, so the documentation cannot fall behind the decoder.
func TestDocsListEverything(t *testing.T) {
	doc := readDocs(t)
	lines := strings.Split(doc, "\n")
	row := func(cells ...string) bool {
		for _, l := range lines {
			ok := strings.HasPrefix(l, "|")
			for _, c := range cells {
				ok = ok && strings.Contains(l, c)
			}
			if ok {
				return true
			}
		}
		return false
	}
	for _, f := range topFields {
		if !strings.Contains(doc, "`"+f+"`") {
			t.Errorf("top-level field %s is not documented", f)
		}
	}
	for _, b := range blocks {
		for _, f := range b.Fields() {
			if !row("| `"+b.Key+"` | `"+f.Key+"` |", "| `"+f.Default+"` |") {
				t.Errorf("%s.%s is not in a table row with its default `%s`", b.Key, f.Key, f.Default)
			}
		}
	}
	for _, f := range workloadFields {
		if !row("| `" + f + "` |") {
			t.Errorf("workload field %s has no table row", f)
		}
	}
	for _, f := range faultFields {
		if !row("| `" + f + "` |") {
			t.Errorf("fault field %s has no table row", f)
		}
	}
	var names []string
	for _, v := range DataPlanes {
		names = append(names, string(v))
	}
	for _, v := range Policies {
		names = append(names, string(v))
	}
	for _, v := range Transports {
		names = append(names, string(v))
	}
	for _, v := range CCs {
		names = append(names, string(v))
	}
	for _, v := range FaultKinds {
		names = append(names, string(v))
	}
	for _, v := range workload.Kinds {
		names = append(names, string(v))
	}
	for _, n := range names {
		if !row("| `" + n + "` |") {
			t.Errorf("%s has no table row of its own", n)
		}
	}
	for _, def := range []string{
		"| `dataplane` | `shaped` or `linerate` | `shaped` |",
		"| `policy` | a switch policy, or one per layer | `ecmp` |",
		"| `transport` | a transport scheme | `ecmp` |",
		"| `cc` | a congestion control | `none` |",
		"| `repetitions` | 1 to 1000 | `1` |",
		"`" + DefaultSize + "` |",
	} {
		if !strings.Contains(doc, def) {
			t.Errorf("docs do not contain %q", def)
		}
	}
	if DefaultTimeout.String() != "1m0s" || !strings.Contains(doc, "`60s` |") {
		t.Errorf("the documented default timeout is not %v", DefaultTimeout)
	}
}

// TestDocsErrorExample runs the error example of docs/scenarios.md and
// compares the output with what the documentation shows.
func TestDocsErrorExample(t *testing.T) {
	doc := readDocs(t)
	m := regexp.MustCompile("(?s)This file\n\n```yaml\n(.*?)```\n\nis reported as\n\n```\n(.*?)```").FindStringSubmatch(doc)
	if m == nil {
		t.Fatal("the error example is missing")
	}
	t.Chdir(filepath.Join("..", ".."))
	_, err := Parse("scenarios/bad.yaml", []byte(m[1]))
	if err == nil {
		t.Fatal("the example loads without errors")
	}
	if diff := cmp.Diff(strings.TrimSpace(m[2]), err.Error()); diff != "" {
		t.Errorf("documented errors (-docs +got):\n%s", diff)
	}
}

// TestDocsMatchStructTags: default tags must parse and satisfy their own
// bounds; a mistake here would only show up when a block is left out.
func TestDocsMatchStructTags(t *testing.T) {
	for _, b := range blocks {
		if err := b.CheckDefaults(params.Env{RTT: fallbackRTT}); err != nil {
			t.Error(err)
		}
	}
}

var update = flag.Bool("update", false, "rewrite the generated sections of docs/scenarios.md")

// TestDocsGenerated: the sections of docs/scenarios.md written from the
// registries are what the registries say now.
func TestDocsGenerated(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "scenarios.md")
	doc := readDocs(t)
	out := doc
	for name, text := range DocSections() {
		begin := "<!-- generated: " + name + " -->\n"
		i := strings.Index(out, begin)
		j := strings.Index(out[max(i, 0):], "<!-- end generated -->")
		if i < 0 || j < 0 {
			t.Errorf("docs/scenarios.md has no generated section %q", name)
			continue
		}
		out = out[:i+len(begin)] + text + out[i+j:]
	}
	if out == doc {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/scenarios.md is behind the registries: run go test ./orchestrator/scenario -run TestDocsGenerated -update")
}
