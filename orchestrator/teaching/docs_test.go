package teaching_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ftlab/ftlab/orchestrator/teaching"
)

// TestDocsGenerated: docs/labs.md's table of check kinds is the
// registry's (go test ./orchestrator/teaching -run TestDocsGenerated
// -update rewrites it).
func TestDocsGenerated(t *testing.T) {
	path := filepath.Join(root(t), "docs", "labs.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?s)(<!-- generated: kinds -->\n)(.*?)(<!-- end generated -->)`)
	m := re.FindSubmatch(data)
	if m == nil {
		t.Fatal("docs/labs.md has no generated kinds table")
	}
	want := teaching.KindsTable()
	if *update {
		if err := os.WriteFile(path, re.ReplaceAllLiteral(data, append(append(m[1], want...), m[3]...)), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(want, string(m[2])); diff != "" {
		t.Errorf("docs/labs.md kinds table is stale (-registry +docs); rerun with -update:\n%s", diff)
	}
}
