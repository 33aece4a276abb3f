package workload

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestConnMatrixShipped: the shipped htsim example runs on a k=4 fat tree
// as its connections say: node i is the i-th host, the answers wait for
// the four incast senders (barrier 1), start times in microseconds.
func TestConnMatrixShipped(t *testing.T) {
	cm, err := ReadConnMatrix(filepath.Join("..", "..", "scenarios", "htsim-incast.cm"))
	if err != nil {
		t.Fatal(err)
	}
	f := fatTree(t, 4)
	msgs := generate(t, Spec{Kind: HtsimCM, CM: cm}, f, 1)
	want := []Message{
		{ID: 0, Src: "h0-0-0", Dst: "h1-0-1", Bytes: 262144},
		{ID: 1, Src: "h2-0-0", Dst: "h1-0-1", Bytes: 262144, Start: 10 * time.Microsecond},
		{ID: 2, Src: "h3-0-0", Dst: "h1-0-1", Bytes: 262144, Start: 20 * time.Microsecond},
		{ID: 3, Src: "h1-1-0", Dst: "h1-0-1", Bytes: 262144, Start: 30500 * time.Nanosecond},
		{ID: 4, Src: "h1-0-1", Dst: "h0-0-0", Bytes: 65536, After: []int{0, 1, 2, 3}},
		{ID: 5, Src: "h1-0-1", Dst: "h2-0-0", Bytes: 65536, After: []int{0, 1, 2, 3}},
		{ID: 6, Src: "h1-0-1", Dst: "h3-0-0", Bytes: 65536, After: []int{0, 1, 2, 3}},
		{ID: 7, Src: "h1-0-1", Dst: "h1-1-0", Bytes: 65536, After: []int{0, 1, 2, 3}},
		{ID: 8, Src: "h0-1-1", Dst: "h3-1-0", Bytes: 524288},
		{ID: 9, Src: "h3-1-0", Dst: "h0-1-1", Bytes: 524288},
	}
	if d := cmp.Diff(want, msgs); d != "" {
		t.Errorf("messages (-want +got):\n%s", d)
	}
	if err := CheckOrder(msgs); err != nil {
		t.Error(err)
	}
	// A host list maps the nodes elsewhere.
	hosts := make([]string, 16)
	for i, h := range f.Hosts {
		hosts[15-i] = h.Name
	}
	rev := generate(t, Spec{Kind: HtsimCM, CM: cm, Hosts: hosts}, f, 1)
	if rev[0].Src != "h3-1-1" || rev[0].Dst != "h2-1-0" {
		t.Errorf("node 0 -> 5 with reversed hosts is %s -> %s, want h3-1-1 -> h2-1-0", rev[0].Src, rev[0].Dst)
	}
}

// TestConnMatrixOrder: a connection that waits comes after what it waits
// for, however the file orders them; oneshot with one activator and
// recv_done_trigger are waits too.
func TestConnMatrixOrder(t *testing.T) {
	cm, err := ParseConnMatrix("x.cm", []byte(`Nodes 4
Connections 3
Triggers 2
2->3 trigger 2 size 10
1->2 id 7 trigger 1 size 20 recv_done_trigger 2
0->1 start 1 size 30 send_done_trigger 1
trigger id 1 oneshot
trigger id 2 multishot
`))
	if err != nil {
		t.Fatal(err)
	}
	msgs := generate(t, Spec{Kind: HtsimCM, CM: cm}, fatTree(t, 4), 1)
	if got := pairs(msgs); strings.Join(got, " ") != "h0-0-0>h0-0-1 h0-0-1>h0-1-0 h0-1-0>h0-1-1" {
		t.Errorf("order %v", got)
	}
	if !cmp.Equal(msgs[1].After, []int{0}) || !cmp.Equal(msgs[2].After, []int{1}) {
		t.Errorf("waits %v %v", msgs[1].After, msgs[2].After)
	}
}

func TestConnMatrixErrors(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       []string
	}{
		{"header counts", "Nodes 4\nConnections 2\n0->1 start 0 size 5\n", []string{
			"x.cm:2: Connections: says 2, but the file has 1 connections"}},
		{"no header", "0->1 start 0 size 5\n", []string{
			"x.cm:1: Nodes: missing", "x.cm:1: Connections: missing"}},
		{"bad connection", "Nodes 4\nConnections 4\n0->x start 0 size 5\n1->1 start 0 size 5\n2->3 size 0 start -1\n3->0 size 5 colour red\n", []string{
			`x.cm:3:1: "0->x": the destination "x" is not a node index`,
			"x.cm:4:1: 1->1 sends to itself",
			"x.cm:5:11: size: 0: an htsim flow without a size",
			`x.cm:5:19: start: "-1" is not a start time in microseconds`,
			`x.cm:6:13: colour: unknown attribute "colour"`,
		}},
		{"start and trigger", "Nodes 4\nConnections 2\nTriggers 1\n0->1 start 0 trigger 1 size 5\n1->2 size 5\ntrigger id 1 oneshot\n", []string{
			"x.cm:4:1: both start and trigger",
			"x.cm:5:1: no start and no trigger",
		}},
		{"node out of range", "Nodes 2\nConnections 1\n0->3 start 0 size 5\n", []string{
			"x.cm:3:1: 0->3: the header says Nodes 2 (0..1)"}},
		{"undefined trigger", "Nodes 4\nConnections 1\n0->1 start 0 size 5 send_done_trigger 9\n", []string{
			"x.cm:3: send_done_trigger: trigger 9 is not defined"}},
		{"first of several", "Nodes 4\nConnections 3\nTriggers 1\n0->2 start 0 size 5 send_done_trigger 1\n1->2 start 0 size 5 send_done_trigger 1\n2->3 trigger 1 size 5\ntrigger id 1 oneshot\n", []string{
			"x.cm:7:1: type: oneshot trigger 1 fires when the first of 2 connections (lines 4, 5) completes; ftlab starts a message when all it waits for have completed: use barrier count 2"}},
		{"early barrier", "Nodes 4\nConnections 3\nTriggers 1\n0->2 start 0 size 5 send_done_trigger 1\n1->2 start 0 size 5 send_done_trigger 1\n2->3 trigger 1 size 5\ntrigger id 1 barrier count 1\n", []string{
			"x.cm:7:1: count: barrier 1 fires after 1 of the 2 connections"}},
		{"never", "Nodes 4\nConnections 1\nTriggers 1\n0->1 trigger 1 size 5\ntrigger id 1 barrier count 2\n", []string{
			"x.cm:5:1: trigger 1 starts 1 connection but no connection activates it"}},
		{"cycle", "Nodes 4\nConnections 2\nTriggers 2\n0->1 trigger 1 size 5 send_done_trigger 2\n1->0 trigger 2 size 5 send_done_trigger 1\ntrigger id 1 oneshot\ntrigger id 2 oneshot\n", []string{
			"x.cm:4:1: the connections at lines 4, 5 wait for each other"}},
		{"failure and junk", "Nodes 4\nConnections 1\n0->1 start 0 size 5\nfailure switch_type CORE switch_id 0 link_id 1\nbogus\n", []string{
			"x.cm:4:1: failure: link failures are not part of an ftlab workload",
			`x.cm:5:1: unknown line "bogus"`}},
		{"trigger syntax", "Nodes 4\nConnections 1\nTriggers 2\n0->1 start 0 size 5\ntrigger oneshot\ntrigger id 2 barrier\n", []string{
			"x.cm:5:1: id: missing", "x.cm:6:1: count: missing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConnMatrix("x.cm", []byte(tc.file))
			if err == nil {
				t.Fatal("parsed")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\nlacks %q", err, w)
				}
			}
		})
	}
}

// TestConnMatrixHosts: a node beyond the workload's hosts is a Check
// problem naming the file and line.
func TestConnMatrixHosts(t *testing.T) {
	cm, err := ParseConnMatrix("x.cm", []byte("Nodes 32\nConnections 1\n0->20 start 0 size 5\n"))
	if err != nil {
		t.Fatal(err)
	}
	ps := (&Spec{Kind: HtsimCM, CM: cm}).Check(fatTree(t, 4))
	if len(ps) != 1 || ps[0].Field != "file" || !strings.HasPrefix(ps[0].Msg, "x.cm:3: 0->20, but the workload maps htsim nodes 0..15 to its 16 hosts") {
		t.Errorf("problems %+v", ps)
	}
}
