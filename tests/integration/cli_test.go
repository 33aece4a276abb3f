// Package integration runs the ftlab binary the way a user does, as root,
// against real namespaces and veths.
package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ftlab/ftlab/internal/testlab"
	"github.com/ftlab/ftlab/internal/topology"
)

// ftlab is one built binary with its own run directory and namespace
// prefix, so the test sees only its own labs.
type ftlab struct {
	t      *testing.T
	bin    string
	runDir string
	prefix string
}

// binary is the ftlab built once for all tests by TestMain.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ftlab-bin-")
	if err != nil {
		panic(err)
	}
	// World-readable, so the non-root test can run the binary too.
	if err := os.Chmod(dir, 0o755); err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "ftlab")
	build := exec.Command("go", "build", "-o", binary, "../../cmd/ftlab")
	if out, err := build.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		panic(fmt.Sprintf("go build: %v\n%s", err, out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func newFtlab(t *testing.T) *ftlab {
	t.Helper()
	testlab.RequireRoot(t)
	f := &ftlab{t: t, bin: binary, runDir: filepath.Join(t.TempDir(), "run"), prefix: testlab.Prefix(t)}
	// Whatever a failing test leaves (labs, their namespaces, pinned
	// programs and bpffs mounts) goes before its run directory does.
	t.Cleanup(func() { _ = f.command("cleanup", "--all").Run() })
	return f
}

func (f *ftlab) command(args ...string) *exec.Cmd {
	cmd := exec.Command(f.bin, args...)
	cmd.Dir = testlab.Root(f.t)
	cmd.Env = append(os.Environ(), "FTLAB_RUN_DIR="+f.runDir, "FTLAB_PREFIX="+f.prefix)
	return cmd
}

// run runs ftlab and returns stdout, stderr and the exit code.
func (f *ftlab) run(args ...string) (string, string, int) {
	f.t.Helper()
	return f.runEnv(nil, args...)
}

// runEnv is run with more environment variables.
func (f *ftlab) runEnv(env []string, args ...string) (string, string, int) {
	f.t.Helper()
	cmd := f.command(args...)
	cmd.Env = append(cmd.Env, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		f.t.Fatalf("ftlab %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

func (f *ftlab) mustRun(args ...string) string {
	f.t.Helper()
	out, errOut, code := f.run(args...)
	if code != 0 {
		f.t.Fatalf("ftlab %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

func (f *ftlab) remaining() []string { return testlab.Remaining(f.t, f.prefix) }

type status struct {
	Lab    string `json:"lab"`
	Phase  string `json:"phase"`
	Health struct {
		Namespaces, NamespacesPresent, Links, LinksUp int
		ProbesOK                                      *int `json:"probes_ok"`
		OK                                            bool `json:"ok"`
	} `json:"health"`
	Nodes []struct {
		Name, Role, Addr, Namespace string
		Present                     bool
	} `json:"nodes"`
	Links []struct {
		Name  string `json:"name"`
		State string `json:"state"`
		A, B  struct {
			Node, Ifname, MAC, State string
		}
	} `json:"links"`
}

func TestLifecycle(t *testing.T) {
	f := newFtlab(t)
	topoFile := "topologies/fattree-k4.yaml"
	want, err := topology.Load(filepath.Join(testlab.Root(t), topoFile))
	if err != nil {
		t.Fatal(err)
	}

	out := f.mustRun("up", topoFile, "--name", "k4")
	if !strings.Contains(out, "lab k4 is up") {
		t.Errorf("up said %q", out)
	}
	if _, errOut, code := f.run("up", topoFile, "--name", "k4"); code == 0 || !strings.Contains(errOut, "already exists") {
		t.Errorf("second up: exit %d, stderr %q; want a refusal saying the lab exists", code, errOut)
	}

	var st status
	if err := json.Unmarshal([]byte(f.mustRun("status", "--name", "k4", "--json", "--probe")), &st); err != nil {
		t.Fatal(err)
	}
	if st.Lab != "k4" || st.Phase != "up" || !st.Health.OK {
		t.Errorf("status: lab %q phase %q health %+v", st.Lab, st.Phase, st.Health)
	}
	if len(st.Nodes) != len(want.Nodes) || len(st.Links) != len(want.Links) {
		t.Fatalf("status has %d nodes, %d links; topology has %d, %d", len(st.Nodes), len(st.Links), len(want.Nodes), len(want.Links))
	}
	for i, n := range want.Nodes {
		got := st.Nodes[i]
		if got.Name != n.Name || got.Role != string(n.Role) || got.Addr != n.Addr.String() || !got.Present ||
			got.Namespace != f.prefix+"k4-"+n.Name {
			t.Errorf("node %d: status %+v, topology %s %s %s", i, got, n.Name, n.Role, n.Addr)
		}
	}
	for i, l := range want.Links {
		got := st.Links[i]
		if got.Name != l.Name || got.State != "up" || got.A.MAC != l.A.MAC.String() || got.B.Ifname != l.B.Ifname {
			t.Errorf("link %d: status %+v, topology %s", i, got, l.Name)
		}
	}
	if st.Health.ProbesOK == nil || *st.Health.ProbesOK != 2*len(want.Links) {
		t.Errorf("probes delivered = %v, want %d", st.Health.ProbesOK, 2*len(want.Links))
	}

	// exec runs inside the node: the host sees its own address and its
	// edge switch as a permanent neighbour.
	host := want.Hosts()[0]
	if out := f.mustRun("exec", "--name", "k4", host.Name, "--", "ip", "-4", "-o", "addr", "show"); !strings.Contains(out, host.Addr.String()+"/32") {
		t.Errorf("exec ip addr in %s: %q lacks %s/32", host.Name, out, host.Addr)
	}
	if out := f.mustRun("exec", "--name", "k4", host.Name, "--", "ip", "neigh"); !strings.Contains(out, "PERMANENT") {
		t.Errorf("exec ip neigh in %s: %q has no permanent entry", host.Name, out)
	}
	if _, _, code := f.run("exec", "--name", "k4", host.Name, "--", "sh", "-c", "exit 7"); code != 7 {
		t.Errorf("exec exit status = %d, want the command's 7", code)
	}
	if _, errOut, code := f.run("exec", "--name", "k4", "nosuch", "--", "true"); code == 0 || !strings.Contains(errOut, `no node "nosuch"`) {
		t.Errorf("exec on unknown node: exit %d, %q", code, errOut)
	}

	// The default data plane, the eBPF switch, forwards between every
	// pair, also with a failed link once the switches reconverged.
	if out := f.mustRun("pingall", "--name", "k4"); !strings.Contains(out, "240/240 pairs answered") {
		t.Errorf("pingall: %q", out)
	}
	if out := f.mustRun("link", "down", "a0-0", "c0-0", "--name", "k4"); !strings.Contains(out, "a0-0~c0-0 is down") {
		t.Errorf("link down: %q", out)
	}
	var failed struct {
		FailedLinks []string `json:"failed_links"`
		Health      struct {
			LinksFailed int  `json:"links_failed"`
			OK          bool `json:"ok"`
		} `json:"health"`
	}
	if err := json.Unmarshal([]byte(f.mustRun("status", "--name", "k4", "--json")), &failed); err != nil {
		t.Fatal(err)
	}
	if len(failed.FailedLinks) != 1 || failed.FailedLinks[0] != "a0-0~c0-0" || failed.Health.LinksFailed != 1 || !failed.Health.OK {
		t.Errorf("status after link down: %+v", failed)
	}
	if out := f.mustRun("pingall", "--name", "k4"); !strings.Contains(out, "240/240 pairs answered") {
		t.Errorf("pingall with a failed link: %q", out)
	}
	var stats struct {
		Directions []struct {
			Direction string `json:"direction"`
			TxPackets uint64 `json:"tx_packets"`
		} `json:"directions"`
	}
	if err := json.Unmarshal([]byte(f.mustRun("stats", "--name", "k4", "--json")), &stats); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, d := range stats.Directions {
		if d.TxPackets > 0 {
			seen[d.Direction] = true
		}
	}
	for _, d := range []string{"E->A", "A->C", "C->A", "A->E", "E->H"} {
		if !seen[d] {
			t.Errorf("stats: no packets sent in direction %s: %+v", d, stats.Directions)
		}
	}
	f.mustRun("link", "up", "a0-0", "c0-0", "--name", "k4")

	f.mustRun("down", "--name", "k4")
	if left := f.remaining(); len(left) != 0 {
		t.Errorf("after down: %v remain", left)
	}
	if _, err := os.Stat(filepath.Join(f.runDir, "k4", "bpf")); !os.IsNotExist(err) {
		t.Errorf("after down: the lab's bpffs remains (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(f.runDir, "k4")); !os.IsNotExist(err) {
		t.Errorf("after down: run directory remains (%v)", err)
	}
	if _, errOut, code := f.run("status", "--name", "k4"); code == 0 || !strings.Contains(errOut, "no such lab") {
		t.Errorf("status after down: exit %d, %q", code, errOut)
	}
}

// TestKilledUpIsCleanedUp kills ftlab with SIGKILL in the middle of building
// a k=8 lab, then checks that cleanup removes everything it left.
func TestKilledUpIsCleanedUp(t *testing.T) {
	f := newFtlab(t)
	cmd := f.command("up", "topologies/fattree-k8.yaml", "--name", "killed", "--workers", "1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(f.remaining()) < 20 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	made := len(f.remaining())
	if made == 0 {
		t.Fatal("up was killed before it made anything: nothing to test")
	}
	t.Logf("killed up after it made %d namespaces", made)
	if _, errOut, code := f.run("up", "topologies/fattree-k4.yaml", "--name", "killed"); code == 0 || !strings.Contains(errOut, "cleanup") {
		t.Errorf("up over a killed lab: exit %d, %q; want a refusal pointing to cleanup", code, errOut)
	}
	out := f.mustRun("cleanup")
	if !strings.Contains(out, "removed lab killed") {
		t.Errorf("cleanup said %q", out)
	}
	if left := f.remaining(); len(left) != 0 {
		t.Errorf("after cleanup: %d namespaces remain", len(left))
	}
	if entries, _ := os.ReadDir(f.runDir); len(entries) != 0 {
		t.Errorf("after cleanup: run directory holds %v", entries)
	}
	// The lab name is free again.
	f.mustRun("up", "topologies/leafspine-4x2.yaml", "--name", "killed")
	f.mustRun("down", "--name", "killed")
}

// TestInterruptRollsBack sends SIGINT (Ctrl-C) during up: ftlab must roll
// back by itself.
func TestInterruptRollsBack(t *testing.T) {
	f := newFtlab(t)
	cmd := f.command("up", "topologies/fattree-k8.yaml", "--name", "intr", "--workers", "1")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(f.remaining()) < 20 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if err == nil {
		t.Skip("up finished before the interrupt arrived")
	}
	if !strings.Contains(errb.String(), "context canceled") {
		t.Errorf("interrupted up said %q", errb.String())
	}
	if left := f.remaining(); len(left) != 0 {
		t.Errorf("after interrupted up: %d namespaces remain", len(left))
	}
	if entries, _ := os.ReadDir(f.runDir); len(entries) != 0 {
		t.Errorf("after interrupted up: run directory holds %v", entries)
	}
}

func TestNonRootGetsOneLine(t *testing.T) {
	f := newFtlab(t)
	cmd := f.command("up", "topologies/fattree-k4.yaml")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err == nil {
		t.Fatal("up as nobody succeeded")
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "must run as root") {
		t.Errorf("non-root up said %q; want one line saying root is needed", out.String())
	}
	if left := f.remaining(); len(left) != 0 {
		t.Errorf("non-root up left %v", left)
	}
}

func TestValidateReportsEveryError(t *testing.T) {
	f := newFtlab(t)
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("kind: fattree\nk: 5\nlinks:\n  rate: fast\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := f.run("validate", bad, "topologies/fattree-k4.yaml")
	if code != 1 {
		t.Errorf("validate exit = %d, want 1", code)
	}
	for _, want := range []string{bad + ":2:", bad + ":4:", "k", "rate"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("validate output %q lacks %q", errOut, want)
		}
	}
}

// TestKilledRunIsCleanedUp kills `ftlab run` with SIGKILL in the middle of
// a cell, its lab up and agents running: the lab belongs to the run, so
// plain cleanup (no --all) removes it, counting the namespaces it had; a
// lab some user brought up stays.
func TestKilledRunIsCleanedUp(t *testing.T) {
	f := newFtlab(t)
	f.mustRun("up", "topologies/leafspine-4x2.yaml", "--name", "mine")
	defer f.run("down", "--name", "mine")
	dir := t.TempDir()
	killRunMidCell(t, f, filepath.Join(dir, "results"))
	var runNS int
	for _, ns := range f.remaining() {
		if strings.HasPrefix(ns, f.prefix+"run-") {
			runNS++
		}
	}
	if runNS != 36 {
		t.Fatalf("the killed run left %d of its lab's 36 namespaces: not killed mid-cell", runNS)
	}
	out := f.mustRun("cleanup")
	if !strings.Contains(out, "removed lab run (36 namespaces): its owner") {
		t.Errorf("cleanup said %q; want the run's lab removed, counting its 36 namespaces", out)
	}
	mine, err := topology.Load(filepath.Join(testlab.Root(t), "topologies", "leafspine-4x2.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("kept    lab mine (%d namespaces): lab is up", len(mine.Nodes)); !strings.Contains(out, want) {
		t.Errorf("cleanup said %q; want %q: the lab brought up by hand kept, with its namespaces counted", out, want)
	}
	for _, ns := range f.remaining() {
		if !strings.HasPrefix(ns, f.prefix+"mine-") {
			t.Errorf("after cleanup: %s remains", ns)
		}
	}
	if _, err := os.Stat(filepath.Join(f.runDir, "run")); !os.IsNotExist(err) {
		t.Errorf("after cleanup the run's lab directory is still there: %v", err)
	}
}

// killRunMidCell starts `ftlab run` of a long one-cell scenario and kills
// it with SIGKILL in the middle of the cell, its lab (run) up and agents
// running.
func killRunMidCell(t *testing.T, f *ftlab, results string) {
	t.Helper()
	scn := filepath.Join(t.TempDir(), "long.yaml")
	// At 2 Mbit/s a permutation of 8 MiB messages takes half a minute: the
	// kill comes long before the cell ends.
	if err := os.WriteFile(scn, []byte(`name: long
topology: {kind: fattree, k: 4, links: {rate: 2Mbit}}
dataplane: shaped
workload: {kind: permutation, size: 8MiB}
timeout: 60s
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := f.command("run", scn, "--results", results)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(f.runDir, "run", "state.json")
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		var st struct{ Phase string }
		if b, err := os.ReadFile(state); err == nil && json.Unmarshal(b, &st) == nil && st.Phase == "up" {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // agents started, messages on the wire
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
}

// shortScenario is a quick scenario of three runs, one line of progress
// each.
func shortScenario(t *testing.T) string {
	t.Helper()
	scn := filepath.Join(t.TempDir(), "short.yaml")
	if err := os.WriteFile(scn, []byte(`name: short
topology: {kind: leafspine, leaves: 2, spines: 1, hosts_per_leaf: 2, links: {rate: 50Mbit}}
workload: {kind: permutation, size: 64KiB}
repetitions: 3
timeout: 20s
`), 0o644); err != nil {
		t.Fatal(err)
	}
	return scn
}

// TestNextRunReclaimsAKilledRunsLab: a run killed with SIGKILL leaves its
// lab; the next run of the same lab name removes that leftover, says so,
// and runs.
func TestNextRunReclaimsAKilledRunsLab(t *testing.T) {
	f := newFtlab(t)
	dir := t.TempDir()
	killRunMidCell(t, f, filepath.Join(dir, "results"))
	if n := len(f.remaining()); n != 36 {
		t.Fatalf("the killed run left %d namespaces, want its lab's 36", n)
	}
	_, errOut, code := f.run("run", shortScenario(t), "--results", filepath.Join(dir, "results"))
	if code != 0 {
		t.Fatalf("the next run: exit %d\n%s", code, errOut)
	}
	if want := "removed the leftover lab run (36 namespaces) before building it again: its owner (pid "; !strings.Contains(errOut, want) {
		t.Errorf("the next run said %q; want %q", errOut, want)
	}
	// Its stderr is not a terminal: a line per finished run, no bar.
	for i := 1; i <= 3; i++ {
		if !regexp.MustCompile(fmt.Sprintf(`short: cell 1/1 \S+ run %d/3: complete, (OK|WARN) \(%d/3 runs, `, i, i)).MatchString(errOut) {
			t.Errorf("stderr lacks run %d's progress line:\n%s", i, errOut)
		}
	}
	if strings.Contains(errOut, "\r") {
		t.Errorf("stderr, not a terminal, has a progress bar's redraws:\n%q", errOut)
	}
	if left := f.remaining(); len(left) != 0 {
		t.Errorf("after the next run: %v remain", left)
	}
}

// TestRunStopsWhenItsReaderGoes: a run whose stderr is a pipe nobody reads
// any more (ftlab run | head; a pager quit) stops as an interrupted run
// does: its lab taken down, the finished runs kept, the scenario marked
// incomplete, instead of dying on SIGPIPE with its lab left up.
func TestRunStopsWhenItsReaderGoes(t *testing.T) {
	f := newFtlab(t)
	results := filepath.Join(t.TempDir(), "results")
	cmd := f.command("run", shortScenario(t), "--results", results)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // the reader is gone before the first progress line
	cmd.Stderr = w
	err = cmd.Run()
	w.Close()
	if err == nil {
		t.Fatal("the run ended well with no one reading it")
	}
	if ee, ok := err.(*exec.ExitError); ok && !ee.Exited() {
		t.Fatalf("the run died of %v instead of stopping", ee.ProcessState)
	}
	if left := f.remaining(); len(left) != 0 {
		t.Errorf("the stopped run left %v", left)
	}
	if entries, _ := os.ReadDir(f.runDir); len(entries) != 0 {
		t.Errorf("the stopped run left labs in its run directory: %v", entries)
	}
	metas, _ := filepath.Glob(filepath.Join(results, "short", "*", "run.json"))
	if len(metas) != 1 {
		t.Fatalf("results: %v, want one run.json", metas)
	}
	var meta struct {
		Complete bool
		Runs     []json.RawMessage
	}
	if b, err := os.ReadFile(metas[0]); err != nil || json.Unmarshal(b, &meta) != nil {
		t.Fatalf("run.json: %v", err)
	}
	if meta.Complete || len(meta.Runs) == 0 || len(meta.Runs) == 3 {
		t.Errorf("run.json: complete %v with %d of 3 runs; want incomplete, with the runs that finished", meta.Complete, len(meta.Runs))
	}
}
