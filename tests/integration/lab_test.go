package integration

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestLabCommands drives ftlab lab as a student and an instructor do:
// list, show, start (a workspace with the answers template), check with
// nothing answered (failures with hints, exit 3, the report files), an
// answer fixed and checked again (the step done, the next one shown),
// reset (back at step 1, answers kept), stop (nothing left), grade over the
// workspace.
func TestLabCommands(t *testing.T) {
	f := newFtlab(t)
	out := f.mustRun("lab", "list")
	for _, id := range []string{"fattree", "ecmp", "failure", "ofan", "corruption", "breakfix"} {
		if !regexp.MustCompile(`(?m)^` + id + `\s`).MatchString(out) {
			t.Errorf("lab list lacks %s:\n%s", id, out)
		}
	}
	if out := f.mustRun("lab", "show", "breakfix", "--student", "cli"); !strings.Contains(out, "faulty-links") || strings.Contains(out, "~") {
		t.Errorf("lab show breakfix: lists no checks, or gives a faulty link away:\n%s", out)
	}

	ws := filepath.Join(t.TempDir(), "ws")
	out = f.mustRun("lab", "start", "fattree", "--student", "cli", "--workspace", ws)
	m := regexp.MustCompile(`export LAB=(\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("lab start: no lab name:\n%s", out)
	}
	name := m[1]
	defer f.run("down", "-n", name)
	host := regexp.MustCompile(`your host: (\S+)`).FindStringSubmatch(out)[1]

	out, _, code := f.run("lab", "check")
	if code != 3 || !strings.Contains(out, "FAIL         host-address") || !strings.Contains(out, "hint: ftlab exec -n $LAB <your host>") {
		t.Errorf("check with nothing answered: exit %d\n%s", code, out)
	}
	for _, file := range []string{"answers.yaml", "session.json", "report.md", "results.json", "junit.xml"} {
		if _, err := os.Stat(filepath.Join(ws, file)); err != nil {
			t.Error(err)
		}
	}

	// The host's address, as the student reads it in the namespace.
	addr := regexp.MustCompile(`inet (10\.[0-9.]+)/`).FindStringSubmatch(f.mustRun("exec", "-n", name, host, "--", "ip", "-4", "-o", "addr", "show"))[1]
	answers := filepath.Join(ws, "answers.yaml")
	data, err := os.ReadFile(answers)
	if err != nil {
		t.Fatal(err)
	}
	text := regexp.MustCompile(`(?m)^host_addr: `).ReplaceAllString(string(data), "host_addr: "+addr)
	if err := os.WriteFile(answers, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code = f.run("lab", "check")
	if !strings.Contains(out, "PASS         host-address") || !strings.Contains(out, "step explore done.") || !strings.Contains(out, "step 2/4 reach") {
		t.Errorf("check after answering host_addr: exit %d\n%s", code, out)
	}

	// reset: down and up again at step 1, the answer kept.
	out = f.mustRun("lab", "reset")
	if !strings.Contains(out, "is back at step 1") || !strings.Contains(out, "step 1/4 explore") {
		t.Errorf("lab reset:\n%s", out)
	}
	if data, err := os.ReadFile(answers); err != nil || !strings.Contains(string(data), "host_addr: "+addr) {
		t.Errorf("reset lost the answers: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "results.json")); !os.IsNotExist(err) {
		t.Errorf("reset kept results.json: %v", err)
	}
	f.mustRun("status", "-n", name)

	out = f.mustRun("lab", "stop")
	if !strings.Contains(out, "is down") || len(f.remaining()) != 0 {
		t.Errorf("lab stop: %s; left: %v", out, f.remaining())
	}
	grades := filepath.Join(t.TempDir(), "grades")
	out, _, code = f.run("lab", "grade", ws, "--out", grades)
	if code != 0 || !regexp.MustCompile(`\| cli \| \d+ \|`).MatchString(out) {
		t.Errorf("lab grade: exit %d\n%s", code, out)
	}
}
