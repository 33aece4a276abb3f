package nsutil_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/vishvananda/netns"

	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/testlab"
)

func TestCreateDoDelete(t *testing.T) {
	testlab.RequireRoot(t)
	name := testlab.Prefix(t) + "x"
	var inside netns.NsHandle
	h, err := nsutil.Create(name, func() error {
		var err error
		inside, err = netns.Get()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	defer inside.Close()
	if !h.Equal(inside) {
		t.Error("init did not run inside the new namespace")
	}
	if !nsutil.Exists(name) {
		t.Fatal("namespace not visible under /run/netns")
	}
	if _, err := nsutil.Create(name, nil); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second Create: %v, want 'already exists'", err)
	}
	// The calling thread is back in its own namespace after Do, and the
	// sysctl written inside changed the lab namespace only.
	rootForward, err := os.ReadFile("/proc/sys/net/ipv4/ip_forward")
	if err != nil {
		t.Fatal(err)
	}
	before, _ := netns.Get()
	defer before.Close()
	if err := nsutil.DoNamed(name, func() error {
		now, _ := netns.Get()
		defer now.Close()
		if !now.Equal(h) {
			return errors.New("Do ran outside the namespace")
		}
		if err := nsutil.WriteSysctl("net/ipv4/ip_forward", "1"); err != nil {
			return err
		}
		if b, _ := os.ReadFile("/proc/sys/net/ipv4/ip_forward"); string(b) != "1\n" {
			return errors.New("sysctl not visible inside the namespace")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	after, _ := netns.Get()
	defer after.Close()
	if !after.Equal(before) {
		t.Error("thread left in the lab namespace after Do")
	}
	if b, _ := os.ReadFile("/proc/sys/net/ipv4/ip_forward"); string(b) != string(rootForward) {
		t.Errorf("the machine's ip_forward changed from %q to %q", rootForward, b)
	}
	if got, _ := nsutil.List(strings.TrimSuffix(name, "x")); len(got) != 1 || got[0] != name {
		t.Errorf("List = %v, want [%s]", got, name)
	}
	for i := 0; i < 2; i++ {
		if err := nsutil.Delete(name); err != nil {
			t.Fatalf("Delete #%d: %v", i+1, err)
		}
	}
	if nsutil.Exists(name) {
		t.Error("namespace still present after Delete")
	}
}

func TestCreateInitFailureLeavesNothing(t *testing.T) {
	testlab.RequireRoot(t)
	name := testlab.Prefix(t) + "y"
	_, err := nsutil.Create(name, func() error { return errors.New("boom") })
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("Create = %v, want the init error", err)
	}
	if nsutil.Exists(name) {
		t.Error("failed Create left the namespace behind")
	}
}

func TestValidName(t *testing.T) {
	for _, bad := range []string{"", ".", "..", "a/b", "x\x00"} {
		if nsutil.ValidName(bad) == nil {
			t.Errorf("ValidName(%q) accepted", bad)
		}
		if nsutil.Delete(bad) == nil {
			t.Errorf("Delete(%q) accepted", bad)
		}
	}
}
