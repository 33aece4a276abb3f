package nsutil_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/testlab"
)

// TestDrainWaitsForCleanup: a namespace deleted before a Drain's Wait has
// had its interfaces unregistered by the kernel when Wait returns: the
// veth peer it had in a namespace that stays is gone.
func TestDrainWaitsForCleanup(t *testing.T) {
	testlab.RequireRoot(t)
	prefix := testlab.Prefix(t)
	gone, kept := prefix+"gone", prefix+"kept"
	hg, err := nsutil.Create(gone, nil)
	if err != nil {
		t.Fatal(err)
	}
	hk, err := nsutil.Create(kept, nil)
	if err != nil {
		hg.Close()
		t.Fatal(err)
	}
	defer hk.Close()
	h, err := netlink.NewHandleAt(hk)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	// A few pairs, so that the cleanup has something to unregister.
	for _, name := range []string{"v0", "v1", "v2", "v3"} {
		if err := h.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: name}, PeerName: name, PeerNamespace: netlink.NsFd(hg)}); err != nil {
			t.Fatal(err)
		}
	}
	hg.Close()

	d, err := nsutil.NewDrain()
	if err != nil {
		t.Fatal(err)
	}
	if err := nsutil.Delete(gone); err != nil {
		t.Fatal(err)
	}
	wait, done, err := d.Wait(context.Background(), 30*time.Second)
	if err != nil || !done {
		t.Fatalf("Wait: %v, %v, %v; want done", wait, done, err)
	}
	for _, name := range []string{"v0", "v1", "v2", "v3"} {
		if _, err := h.LinkByName(name); !errors.As(err, new(netlink.LinkNotFoundError)) {
			t.Errorf("%s still in %s after Wait (%v): the deleted namespace's cleanup had not run", name, kept, err)
		}
	}
	t.Logf("kernel cleanup took %v", wait)

	// A cancelled wait says so and leaves nothing behind.
	d, err = nsutil.NewDrain()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, done, err := d.Wait(ctx, time.Minute); done && err == nil {
		t.Log("the probe was gone before the cancellation was seen") // fine: nothing to wait for
	} else if !errors.Is(err, context.Canceled) && !done {
		t.Errorf("cancelled Wait: done %v, err %v", done, err)
	}
}
