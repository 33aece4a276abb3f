// Package layers enforces the floors of ftlab's house (docs/ARCHITECTURE.md):
// a ground floor (internal/) that imports nothing of ftlab above it, the
// engines above it with rules between them, and the CLI on top. It reads
// the import graph from `go list`, so a broken rule fails here with the
// offending import named.
package layers

import (
	"bufio"
	"bytes"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/ftlab/ftlab/"

// pkg is one package's imports, as go list reports them.
type pkg struct {
	path        string // relative to the module: "hostagent/scheme"
	imports     []string
	testImports []string // of its _test.go files, both test packages
}

// rule says what a part of the house may not import.
type rule struct {
	name string
	// applies selects the importing packages.
	applies func(p string) bool
	// forbidden reports whether an import breaks the rule (imports are
	// module-relative for ftlab packages, full paths otherwise).
	forbidden func(imp string) bool
	// tests: the rule also holds for test files, but for allowed imports.
	tests   bool
	allowed func(imp string) bool
}

func under(prefixes ...string) func(string) bool {
	return func(p string) bool {
		for _, pre := range prefixes {
			if p == pre || strings.HasPrefix(p, pre+"/") {
				return true
			}
		}
		return false
	}
}

func not(f func(string) bool) func(string) bool { return func(s string) bool { return !f(s) } }

var rules = []rule{
	{
		name:      "the ground floor (internal/) imports nothing of ftlab above it",
		applies:   under("internal"),
		forbidden: func(imp string) bool { return isLocal(imp) && !under("internal")(imp) },
		tests:     true,
	},
	{
		name:      "bpf stands on the ground floor only",
		applies:   under("bpf"),
		forbidden: func(imp string) bool { return isLocal(imp) && !under("internal", "bpf")(imp) },
	},
	{
		name:      "hostagent imports nothing from orchestrator, switchd or the CLI",
		applies:   under("hostagent"),
		forbidden: under("orchestrator", "switchd", "cmd"),
		tests:     true, allowed: under("orchestrator/fabric", "switchd"),
	},
	{
		name:      "switchd imports nothing from orchestrator, hostagent or the CLI",
		applies:   under("switchd"),
		forbidden: under("orchestrator", "hostagent", "cmd"),
		tests:     true, allowed: under("orchestrator/fabric"),
	},
	{
		name:      "nothing below the CLI imports the CLI",
		applies:   not(under("cmd")),
		forbidden: under("cmd"),
		tests:     true,
	},
	{
		name:      "only orchestrator/report draws plots (imports gonum.org/v1/plot)",
		applies:   not(under("orchestrator/report")),
		forbidden: under("gonum.org/v1/plot"),
		tests:     true,
	},
	{
		name:    "reports and the results contract import nothing that runs scenarios",
		applies: under("orchestrator/report", "orchestrator/results"),
		forbidden: under("orchestrator/runner", "orchestrator/lab", "orchestrator/fabric", "orchestrator/check",
			"orchestrator/calibrate", "cmd"),
		tests: true,
	},
}

// isLocal reports whether an import is ftlab's (list makes ftlab's
// module-relative and keeps the others whole, with a dot in their first
// element or none at all for the standard library).
func isLocal(imp string) bool {
	return !strings.HasPrefix(imp, "std:") && !strings.Contains(strings.SplitN(imp, "/", 2)[0], ".")
}

func TestLayers(t *testing.T) {
	pkgs := list(t)
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages; is the module root right?", len(pkgs))
	}
	for _, r := range rules {
		for _, p := range pkgs {
			if !r.applies(p.path) {
				continue
			}
			for _, imp := range p.imports {
				if r.forbidden(imp) {
					t.Errorf("%s: %s imports %s", r.name, p.path, imp)
				}
			}
			if !r.tests {
				continue
			}
			for _, imp := range p.testImports {
				if r.forbidden(imp) && (r.allowed == nil || !r.allowed(imp)) && !under(p.path)(imp) {
					t.Errorf("%s: tests of %s import %s", r.name, p.path, imp)
				}
			}
		}
	}
}

// TestRulesBite: each rule catches the import it is written against, so a
// typo in a rule cannot make it pass vacuously.
func TestRulesBite(t *testing.T) {
	cases := map[string][2]string{ // rule -> an importer and an import it forbids
		rules[0].name: {"internal/topology", "orchestrator/fabric"},
		rules[1].name: {"bpf", "switchd"},
		rules[2].name: {"hostagent/agent", "orchestrator/lab"},
		rules[3].name: {"switchd/routing", "orchestrator/fabric"},
		rules[4].name: {"orchestrator/runner", "cmd/ftlab/cli"},
		rules[5].name: {"orchestrator/runner", "gonum.org/v1/plot/plotter"},
		rules[6].name: {"orchestrator/report", "orchestrator/runner"},
	}
	for _, r := range rules {
		c, ok := cases[r.name]
		if !ok {
			t.Errorf("rule %q has no case here", r.name)
			continue
		}
		if !r.applies(c[0]) || !r.forbidden(c[1]) {
			t.Errorf("rule %q lets %s import %s", r.name, c[0], c[1])
		}
	}
}

// list runs go list over the module and returns its packages.
func list(t *testing.T) []pkg {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{join .TestImports \" \"}} {{join .XTestImports \" \"}}", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	rel := func(fields []string) []string {
		var o []string
		for _, f := range fields {
			if r, ok := strings.CutPrefix(f, module); ok {
				o = append(o, r)
			} else if !strings.Contains(strings.SplitN(f, "/", 2)[0], ".") {
				o = append(o, "std:"+f) // the standard library
			} else {
				o = append(o, f)
			}
		}
		slices.Sort(o)
		return slices.Compact(o)
	}
	var pkgs []pkg
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), "|", 3)
		if len(parts) != 3 {
			continue
		}
		pkgs = append(pkgs, pkg{
			path:        strings.TrimPrefix(parts[0], module),
			imports:     rel(strings.Fields(parts[1])),
			testImports: rel(strings.Fields(parts[2])),
		})
	}
	return pkgs
}
