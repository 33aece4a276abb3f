// Package testlab helps tests that build real fabrics: it skips them without
// root, gives each a unique lab name, and removes whatever the test made,
// also when the test fails.
package testlab

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/topology"
)

// RequireRoot skips the test unless it runs as root (and not in -short mode).
func RequireRoot(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: skipped in -short mode")
	}
	if os.Geteuid() != 0 {
		t.Skip("integration test: needs root to create network namespaces")
	}
}

// Prefix returns a fresh namespace prefix ("ft", 8 hex digits, "-"), unique
// to the test, and registers a cleanup that deletes every namespace with
// that prefix. Tests that use their own prefix never see, or remove, the
// namespaces of other tests or of the machine's real labs.
func Prefix(t testing.TB) string {
	t.Helper()
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	prefix := "ft" + hex.EncodeToString(b[:]) + "-"
	t.Cleanup(func() {
		for _, ns := range Remaining(t, prefix) {
			if err := nsutil.Delete(ns); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
	})
	return prefix
}

// Namer maps node names to namespace names under prefix.
func Namer(prefix string) func(string) string {
	return func(node string) string { return prefix + node }
}

// Root returns the repository root (for shipped topology files).
func Root(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate source")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Topology loads a shipped topology file by base name, e.g. "fattree-k4".
func Topology(t testing.TB, name string) *topology.Topology {
	t.Helper()
	topo, err := topology.Load(filepath.Join(Root(t), "topologies", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

// Remaining lists the namespaces with the prefix that are still present.
func Remaining(t testing.TB, prefix string) []string {
	t.Helper()
	left, err := nsutil.List(prefix)
	if err != nil {
		t.Fatal(err)
	}
	return left
}
