package integration

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestLinkSetStatsSend drives a shaped lab the way a user does: link set
// drops on a host's link, link show and stats list the impairment, a
// transfer through that link is delivered and verified while the edge
// switch counts the drops, bad values name their flag, and down takes
// it all away.
func TestLinkSetStatsSend(t *testing.T) {
	f := newFtlab(t)
	f.mustRun("up", "topologies/fattree-k4.yaml", "--name", "ls", "--mode", "shaped")
	t.Cleanup(func() {
		if _, errOut, code := f.run("down", "--name", "ls"); code != 0 {
			t.Errorf("down: %s", errOut)
		}
		if left := f.remaining(); len(left) != 0 {
			t.Errorf("after down: %v remain", left)
		}
	})
	if out := f.mustRun("link", "set", "h0-0-0", "e0-0", "-n", "ls", "--drop", "5%", "--direction", "up"); !strings.Contains(out, "h0-0-0~e0-0 up (h0-0-0 -> e0-0): drop 5%") {
		t.Errorf("link set said %q", out)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--rate", "fast"}, "--rate: "},
		{[]string{"--drop", "2"}, "--drop: 2 is out of range"},
		{[]string{"--direction", "sideways"}, "--direction: "},
		{[]string{"--delay", "1ms"}, "--delay: a link delay needs the data plane's delay support"},
	} {
		_, errOut, code := f.run(append([]string{"link", "set", "a0-0", "c0-0", "-n", "ls"}, bad.args...)...)
		if code == 0 || !strings.Contains(errOut, bad.want) {
			t.Errorf("link set %v: exit %d, %q; want %q", bad.args, code, errOut, bad.want)
		}
	}
	if _, errOut, code := f.run("link", "set", "h0-0-0", "zz", "-n", "ls", "--drop", "1%"); code == 0 || !strings.Contains(errOut, `no node "zz" (nodes: h0-0-0,`) {
		t.Errorf("unknown node: exit %d, %q", code, errOut)
	}

	var links []struct {
		Name, State string
		Up          struct {
			Drop     float64
			Impaired bool
		}
	}
	if err := json.Unmarshal([]byte(f.mustRun("link", "show", "-n", "ls", "--json", "--impaired")), &links); err != nil {
		t.Fatal(err)
	}
	if len(links) != 1 || links[0].Name != "h0-0-0~e0-0" || links[0].Up.Drop != 0.05 || !links[0].Up.Impaired {
		t.Errorf("link show --impaired: %+v", links)
	}

	var sent struct {
		Status   string
		Messages []struct {
			Delivered       bool
			Retransmissions int
		}
	}
	out := f.mustRun("send", "-n", "ls", "h0-0-0", "h3-1-1", "--size", "512KiB", "--transport", "rss", "--param", "host.window=48KiB", "--json")
	if err := json.Unmarshal([]byte(out), &sent); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if sent.Status != "complete" || len(sent.Messages) != 1 || !sent.Messages[0].Delivered || sent.Messages[0].Retransmissions == 0 {
		t.Errorf("send through a 5%% lossy link: %+v; want delivered, with retransmissions", sent)
	}

	var stats struct {
		Ports []struct {
			Switch, Link string
			Counters     struct{ DropCorrupt uint64 }
		}
		Impairments []struct {
			Link, Direction string
			Drop            float64
		}
	}
	if err := json.Unmarshal([]byte(f.mustRun("stats", "-n", "ls", "--json")), &stats); err != nil {
		t.Fatal(err)
	}
	var corrupt uint64
	for _, p := range stats.Ports {
		if p.Switch == "e0-0" && p.Link == "h0-0-0~e0-0" {
			corrupt = p.Counters.DropCorrupt
		}
	}
	if corrupt == 0 || len(stats.Impairments) != 1 || stats.Impairments[0].Drop != 0.05 {
		t.Errorf("stats: %d corrupt drops at e0-0 from h0-0-0, impairments %+v", corrupt, stats.Impairments)
	}
	if out := f.mustRun("stats", "-n", "ls"); !strings.Contains(out, "IMPAIRMENTS") || !strings.Contains(out, "drop 5%") {
		t.Errorf("stats does not list the impairment:\n%s", out)
	}
	if _, errOut, code := f.run("send", "-n", "ls", "h0-0-0", "e0-0"); code == 0 || !strings.Contains(errOut, `destination "e0-0" is not a host`) {
		t.Errorf("send to a switch: exit %d, %q", code, errOut)
	}
}
