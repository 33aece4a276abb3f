package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ftlab/ftlab/internal/bpffs"
	"github.com/ftlab/ftlab/internal/testlab"
	"github.com/ftlab/ftlab/orchestrator/fabric"
	"github.com/ftlab/ftlab/switchd"
	"github.com/ftlab/ftlab/switchd/routing"
)

func TestBadFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"send"}, `required flag(s) "to" not set`},
		{[]string{"send", "--to", "h0"}, `--to "h0" is not an IPv4 address`},
		{[]string{"send", "--to", "10.0.0.2", "--size", "1mb"}, "--size"},
		{[]string{"send", "--to", "10.0.0.2", "--param", "sigma"}, "want key=value"},
		{[]string{"send", "--to", "10.0.0.2", "--pacing", "100"}, "--pacing"},
		{[]string{"send", "--to", "10.0.0.2", "--mtu", "100"}, "mtu 100 outside"},
		{[]string{"listen", "--addr", "::1"}, "not an IPv4 address"},
		{[]string{"serve", "extra"}, "unknown command"},
		{[]string{"fly"}, "unknown command"},
	} {
		var out, errb bytes.Buffer
		if code := Run(context.Background(), tt.args, strings.NewReader(""), &out, &errb); code != 1 || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tt.args, code, errb.String(), tt.want)
		}
	}
}

// TestListenSend runs the human commands against each other in a k=4 lab.
func TestListenSend(t *testing.T) {
	testlab.RequireRoot(t)
	topo := testlab.Topology(t, "fattree-k4")
	name := testlab.Namer(testlab.Prefix(t))
	pin := filepath.Join(t.TempDir(), "bpf")
	if err := bpffs.Mount(pin); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bpffs.Unmount(pin) })
	if _, err := fabric.Build(context.Background(), topo, fabric.Options{Namespace: name}); err != nil {
		t.Fatal(err)
	}
	tables, err := routing.Compute(topo, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := switchd.InstallBPF(context.Background(), topo, switchd.Config{}.WithDefaults(), tables, name, pin); err != nil {
		t.Fatal(err)
	}
	dst, _ := topo.Node("h1-0-1")

	ctx, cancel := context.WithCancel(context.Background())
	var lout, lerr testlab.SyncBuffer
	done := make(chan int)
	go func() {
		done <- Run(ctx, []string{"listen", "--netns", name("h1-0-1")}, strings.NewReader(""), &lout, &lerr)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(lout.String(), "listening on") {
		if time.Now().After(deadline) {
			t.Fatalf("listen did not start: %s %s", lout.String(), lerr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	var sout, serr bytes.Buffer
	code := Run(context.Background(), []string{"send", "--netns", name("h0-0-0"), "--to", dst.Addr.String(), "--size", "2MiB", "--count", "2", "--min-rto", "100ms"},
		strings.NewReader(""), &sout, &serr)
	t.Logf("send:\n%s", sout.String())
	if code != 0 {
		t.Fatalf("send exited %d: %s", code, serr.String())
	}
	for _, want := range []string{"message 0: 10.0.0.2 -> " + dst.Addr.String() + ", rss+pfld", "message 1:", "retransmissions", "NACKs", "probes", "RTOs", "reroutes", "srtt"} {
		if !strings.Contains(sout.String(), want) {
			t.Errorf("send output lacks %q", want)
		}
	}
	deadline = time.Now().Add(5 * time.Second)
	for strings.Count(lout.String(), "received 2MiB from 10.0.0.2") < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("listen output:\n%s", lout.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("listen exited %d: %s", code, lerr.String())
	}
	t.Logf("listen:\n%s", lout.String())
	if !strings.Contains(lout.String(), "2 messages received") {
		t.Error("listen did not sum up")
	}
}
