package bpffs_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ftlab/ftlab/internal/bpffs"
	"github.com/ftlab/ftlab/internal/testlab"
)

func TestMountUnmount(t *testing.T) {
	testlab.RequireRoot(t)
	dir := filepath.Join(t.TempDir(), "bpf")
	t.Cleanup(func() { _ = bpffs.Unmount(dir) })
	for i := 0; i < 2; i++ { // the second Mount is a no-op
		if err := bpffs.Mount(dir); err != nil {
			t.Fatal(err)
		}
	}
	if !bpffs.IsMounted(dir) {
		t.Fatal("not a bpffs after Mount")
	}
	if err := os.Mkdir(filepath.Join(dir, "sw"), 0o700); err != nil {
		t.Fatalf("bpffs refuses a directory: %v", err)
	}
	for i := 0; i < 2; i++ {
		if err := bpffs.Unmount(dir); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("mount point still there: %v", err)
	}
}
