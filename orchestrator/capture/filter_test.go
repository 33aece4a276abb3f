package capture

import (
	"strings"
	"testing"

	"github.com/ftlab/ftlab/bpf"
	"github.com/ftlab/ftlab/hostagent/wire"
	"github.com/ftlab/ftlab/internal/testlab"
)

func TestFilter(t *testing.T) {
	topo := testlab.Topology(t, "fattree-k4")
	h0, _ := topo.Node("h0-0-0")
	h1, _ := topo.Node("h1-0-0")
	sw := &Port{Node: "e0-0", Switch: true, Port: 2, Ifname: "a0-0", Peer: "a0-0"}
	data := &Frame{Port: sw, Dir: bpf.TapIn, Verdict: bpf.TapForward, Len: 1500, IPv4: true, UDP: true, TTL: 63,
		Src: h0.Addr, Dst: h1.Addr, SrcPort: 0x1234, DstPort: 4791, FT: true,
		Header: wire.Header{Type: wire.TypeData, Flags: wire.FlagRetx, EV: 0x1234, Flow: 7, Msg: 3, PSN: 150}}
	nack := &Frame{Port: sw, Dir: bpf.TapOut, Verdict: bpf.TapDrop, Cause: bpf.TapCauseBuffer, Len: 78, IPv4: true, UDP: true,
		Src: h1.Addr, Dst: h0.Addr, FT: true, Header: wire.Header{Type: wire.TypeNACK, EV: 0x12, Flow: 9, PSN: 250}}
	tail := &Frame{Port: &Port{Node: "h0-0-0", Ifname: "e0-0", Peer: "e0-0"}, Dir: bpf.TapOut, Len: 70, IPv4: true, UDP: true,
		Src: h0.Addr, Dst: h1.Addr, FT: true, Header: wire.Header{Type: wire.TypeTail, PSN: 151}}
	arp := &Frame{Port: sw, Dir: bpf.TapIn, Verdict: bpf.TapDrop, Cause: bpf.TapCauseNonIPv4, Len: 42}
	frames := map[string]*Frame{"data": data, "nack": nack, "tail": tail, "arp": arp}

	for _, tc := range []struct {
		expr string
		want string // names of the frames it keeps, sorted
	}{
		{"", "arp data nack tail"},
		{"type data", "data"},
		{"type DATA,nack", "data nack"},
		{"type probe", "tail"},
		{"flow 7", "data"},
		{"flow 7 or flow 9", "data nack"},
		{"flow 7,9", "data nack"},
		{"psn 100-200", "data tail"},
		{"psn 100..151 and not type data", "tail"},
		{"psn >= 200", "nack"},
		{"psn > 250", ""},
		{"psn < 151", "data"},
		{"ev 0x12", "nack"},
		{"ev 0x1234 && flag retx", "data"},
		{"src h0-0-0", "data tail"},
		{"dst " + h0.Addr.String(), "nack"},
		{"host 10.1.0.0/16", "data nack tail"},
		{"in", "arp data"},
		{"out and dropped", "nack"},
		{"cause buffer", "nack"},
		{"cause non_ipv4,buffer", "arp nack"},
		{"dropped", "arp nack"},
		{"forwarded", "data"},
		{"!ftlab", "arp"},
		{"ip and not (type ack or type data)", "nack tail"},
		{"port 2", "arp data nack"},
		{"iface e0-0", "tail"},
		{"len > 1000", "data"},
		{"ttl 63", "data"},
		{"dport 4791", "data"},
	} {
		f, err := ParseFilter(tc.expr, topo)
		if err != nil {
			t.Errorf("%q: %v", tc.expr, err)
			continue
		}
		var got []string
		for _, name := range []string{"arp", "data", "nack", "tail"} {
			if f.Match(frames[name]) {
				got = append(got, name)
			}
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("%q keeps %q, want %q", tc.expr, g, tc.want)
		}
	}
}

func TestFilterErrors(t *testing.T) {
	topo := testlab.Topology(t, "fattree-k4")
	for _, tc := range []struct{ expr, want string }{
		{"type dat", `column 6: unknown packet type "dat"`},
		{"flow", "ends where a number"},
		{"flow x", `column 6: flow: "x" is not a number`},
		{"psn 200-100", "runs backwards"},
		{"src h9-9-9", "neither a node"},
		{"type data flow 7", `unexpected "flow"`},
		{"(type data", `")"`},
		{"cause fire", `unknown drop cause "fire"`},
		{"bogus", `unknown primitive "bogus"`},
		{"flag retx,,dup", "empty item"},
	} {
		_, err := ParseFilter(tc.expr, topo)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.expr, err, tc.want)
		}
	}
}

func TestResolveTargets(t *testing.T) {
	topo := testlab.Topology(t, "fattree-k4")
	ports, err := ResolveTargets(topo, []string{"e0-0", "a0-0:e0-0", "a0-0:2", "h0-0-0", "e0-0:1"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range ports {
		names = append(names, p.String())
	}
	want := "e0-0:h0-0-0 e0-0:h0-0-1 e0-0:a0-0 e0-0:a0-1 a0-0:e0-0 a0-0:c0-0 h0-0-0:e0-0"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("ports %s, want %s", got, want)
	}
	_, err = ResolveTargets(topo, []string{"x9", "e0-0:9", "e0-0:c0-0"})
	for _, w := range []string{`"x9": no node`, `"e0-0:9": e0-0 has ports 0..3`, `"e0-0:c0-0": e0-0 has no port "c0-0"`} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error %v, want it to say %q", err, w)
		}
	}
}

func TestComment(t *testing.T) {
	in := &Port{Node: "e0-0", Switch: true, Port: 2, Peer: "a0-0"}
	out := &Port{Node: "e0-0", Switch: true, Port: 0, Peer: "h0-0-0"}
	for _, tc := range []struct {
		f    Frame
		want string
	}{
		{Frame{Port: in, Dir: bpf.TapIn, Verdict: bpf.TapForward, Peer: out, Flags: bpf.TapCE},
			"e0-0 port 2 (from a0-0) in: forwarded to port 0 (h0-0-0), CE marked"},
		{Frame{Port: out, Dir: bpf.TapOut, Verdict: bpf.TapForward, Peer: in, Flags: bpf.TapTrimmed},
			"e0-0 port 0 (to h0-0-0) out: forwarded, from port 2 (a0-0), trimmed"},
		{Frame{Port: in, Dir: bpf.TapIn, Verdict: bpf.TapDrop, Cause: bpf.TapCauseBuffer, Peer: out},
			"e0-0 port 2 (from a0-0) in: dropped (buffer) at port 0 (h0-0-0)"},
		{Frame{Port: in, Dir: bpf.TapIn, Verdict: bpf.TapDrop, Cause: bpf.TapCauseCorrupt},
			"e0-0 port 2 (from a0-0) in: dropped (corrupt)"},
		{Frame{Port: in, Dir: bpf.TapIn, Verdict: bpf.TapLocal}, "e0-0 port 2 (from a0-0) in: to the switch itself"},
		{Frame{Port: &Port{Node: "h0-0-0", Peer: "e0-0"}, Dir: bpf.TapOut}, "h0-0-0 port 0 (to e0-0) out"},
	} {
		if got := tc.f.Comment(); got != tc.want {
			t.Errorf("comment %q, want %q", got, tc.want)
		}
	}
}
