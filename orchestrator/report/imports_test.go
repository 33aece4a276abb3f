package report

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps rendering apart from running: only this package draws
// plots (imports gonum.org/v1/plot), and neither it nor the results
// contract imports the packages that run scenarios, so `ftlab report` and
// `ftlab compare` need nothing of a lab.
func TestImports(t *testing.T) {
	const module = "github.com/ftlab/ftlab/"
	running := []string{"orchestrator/runner", "orchestrator/lab", "orchestrator/fabric", "orchestrator/check", "orchestrator/calibrate", "cmd/"}
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, "gonum.org/v1/plot") && rel != "orchestrator/report" {
				t.Errorf("%s imports %s: only orchestrator/report draws plots", path, p)
			}
			if rel != "orchestrator/report" && rel != "orchestrator/results" {
				continue
			}
			for _, r := range running {
				if strings.HasPrefix(p, module+r) {
					t.Errorf("%s imports %s: reports and results must not depend on running scenarios", path, p)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
