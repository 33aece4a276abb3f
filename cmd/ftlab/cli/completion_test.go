package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ftlab/ftlab/internal/testlab"
	"github.com/ftlab/ftlab/orchestrator/lab"
)

// recordLab writes the record of a lab that is up into a run directory,
// as ftlab up would: completion reads only records.
func recordLab(t *testing.T, dir, name string) {
	t.Helper()
	st := lab.State{Version: 1, Name: name, Phase: lab.PhaseUp, Topology: testlab.Topology(t, "fattree-k4")}
	data, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name, "state.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// complete runs ftlab's completion for args, as a shell would, and
// returns the candidates.
func complete(t *testing.T, args ...string) []string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := Run(context.Background(), append([]string{"__complete"}, args...), &out, &errb); code != 0 {
		t.Fatalf("__complete %v: exit %d: %s", args, code, errb.String())
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if line != "" && !strings.HasPrefix(line, ":") {
			got = append(got, strings.SplitN(line, "\t", 2)[0])
		}
	}
	return got
}

// TestCompletion: shell completion knows the labs, a lab's nodes (hosts
// where only hosts fit), a node's neighbours and the transports.
func TestCompletion(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("FTLAB_RUN_DIR", dir)
	recordLab(t, dir, "k4")
	recordLab(t, dir, "other")
	hosts := []string{}
	for _, h := range testlab.Topology(t, "fattree-k4").Hosts() {
		hosts = append(hosts, h.Name)
	}
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"stats", "-n", ""}, []string{"k4", "other"}},
		{[]string{"link", "show", "--name", "o"}, []string{"other"}},
		{[]string{"run", "--lab", ""}, []string{"k4", "other"}},
		{[]string{"send", "-n", "k4", ""}, hosts},
		{[]string{"send", "-n", "k4", "h0-0-0", "h3"}, []string{"h3-0-0", "h3-0-1", "h3-1-0", "h3-1-1"}},
		{[]string{"link", "set", "-n", "k4", "e0-0", ""}, []string{"h0-0-0", "h0-0-1", "a0-0", "a0-1"}},
		{[]string{"link", "down", "-n", "k4", "c1"}, []string{"c1-0", "c1-1"}},
		{[]string{"exec", "-n", "k4", "a3"}, []string{"a3-0", "a3-1"}},
		{[]string{"send", "--transport", "rss"}, []string{"rss", "rss+pfld", "rss+rack"}},
		{[]string{"send", "-n", "nosuchlab", ""}, nil},
		{[]string{"up", ""}, []string{"yaml", "yml"}},
		{[]string{"send", "--cc", "s"}, []string{"swift"}},
	} {
		got := complete(t, tt.args...)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("complete %q (-want +got):\n%s", tt.args, diff)
		}
	}
	var out bytes.Buffer
	for _, shell := range []string{"bash", "zsh", "fish"} {
		out.Reset()
		if code := Run(context.Background(), []string{"completion", shell}, &out, &out); code != 0 || !strings.Contains(out.String(), "__complete") {
			t.Errorf("ftlab completion %s: exit %d, %d bytes without the completion call", shell, code, out.Len())
		}
	}
	if got := complete(t, "send", "-n", "k4", "h0-0-0", ""); slices.Contains(got, "h0-0-0") || len(got) != len(hosts)-1 {
		t.Errorf("destinations %v: want every host but the source", got)
	}
}
