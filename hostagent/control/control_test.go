package control_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ftlab/ftlab/hostagent/control"
	"github.com/ftlab/ftlab/hostagent/netio"
	"github.com/ftlab/ftlab/hostagent/scheme"
	"github.com/ftlab/ftlab/hostagent/transport"
)

func TestCommandsRoundTrip(t *testing.T) {
	cmds := []control.Command{
		&control.Configure{Scheme: "rss+pfld", Params: &scheme.Params{RSS: &scheme.RSSParams{Sigma: 8, Tau: 30 * time.Microsecond, Metric: "max-rtt"}, PFLD: &scheme.PFLDParams{BitmapBits: 1024}},
			Name: "h0-0-0", Transport: control.Transport{HostParams: transport.HostParams{Pacing: 1e8, Window: 1 << 18, MinRTO: time.Millisecond}, MTU: 1500}},
		&control.Send{Msg: 17, To: "10.2.0.2", Bytes: 1 << 20},
		&control.Send{Msg: -1, To: "10.0.0.1", Bytes: 0},
		&control.StatsQuery{},
		&control.Stop{},
	}
	for _, c := range cmds {
		line, err := control.AppendCommand(nil, c)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasSuffix(line, []byte("\n")) || bytes.Count(line, []byte("\n")) != 1 {
			t.Fatalf("%q is not one line", line)
		}
		got, err := control.DecodeCommand(line)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if diff := cmp.Diff(c, got); diff != "" {
			t.Errorf("%s: round trip differs:\n%s", line, diff)
		}
	}
	// The documented forms decode.
	for _, s := range []string{
		`{"cmd":"configure","scheme":"rss+pfld","params":{"rss":{"sigma":16,"tau_ns":15000}},"transport":{"pacing_bps":100000000,"window_bytes":262144,"min_rto_ns":1000000,"mtu":1500}}`,
		`{"cmd":"send","msg":17,"to":"10.2.0.2","bytes":1048576}`,
		`{"cmd":"stop"}`, ` {"cmd":"stats"} `,
	} {
		if _, err := control.DecodeCommand([]byte(s)); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
}

func TestDecodeCommandRejects(t *testing.T) {
	for _, tt := range []struct{ line, want string }{
		{``, "not a JSON object"},
		{`not json`, "not a JSON object"},
		{`[1,2]`, "not a JSON object"},
		{`{"msg":1}`, `no "cmd" field`},
		{`{"cmd":7}`, `"cmd" is not a string`},
		{`{"cmd":"fly"}`, `unknown command "fly"`},
		{`{"cmd":"stop","now":true}`, `unknown field "now"`},
		{`{"cmd":"send","msg":1,"to":"10.0.0.1","byte":5}`, `unknown field "byte"`},
		{`{"cmd":"send","msg":1,"to":"10.0.0.1"}`, `missing [bytes]`},
		{`{"cmd":"send","to":"10.0.0.1","bytes":1}`, `missing [msg]`},
		{`{"cmd":"send","msg":1,"to":"::1","bytes":1}`, `not an IPv4 address`},
		{`{"cmd":"send","msg":1,"to":"h0-0-0","bytes":1}`, `not an IPv4 address`},
		{`{"cmd":"send","msg":1,"to":"10.0.0.1","bytes":-1}`, `cannot unmarshal`},
		{`{"cmd":"send","msg":1,"to":"10.0.0.1","bytes":4294967296}`, `above`},
		{`{"cmd":"send","msg":"a","to":"10.0.0.1","bytes":1}`, `cannot unmarshal`},
		{`{"cmd":"stop"} {"cmd":"stop"}`, `not a JSON object`},
		{`{"cmd":"configure","transport":{}}`, `no scheme`},
		{`{"cmd":"configure","scheme":"rss","transport":{"pacing":1}}`, `unknown field "pacing"`},
		{`{"cmd":"configure","scheme":"rss","transport":{"mtu":100}}`, `mtu 100 outside`},
		{`{"cmd":"configure","scheme":"rss","transport":{"min_rto_ns":-5}}`, `negative`},
		{`{"cmd":"configure","scheme":"rss","transport":{"rto":"fixed"}}`, `rto "fixed": want rfc6298 or paper`},
		{`{"cmd":"configure","scheme":"rss","transport":{"rto":"paper","max_rtt_ns":-1}}`, `max_rtt_ns -1 is negative`},
		{`{"cmd":"configure","scheme":"rss","transport":{"segment_bytes":1500}}`, `segment_bytes 1500 exceeds 1424`},
		{`{"cmd":"configure","scheme":"rss","params":{"rss":{"sigma":"16"}},"transport":{}}`, `cannot unmarshal`},
		{`{"cmd":"configure","scheme":"rss","params":{"sigma":16},"transport":{}}`, `unknown field "sigma"`},
	} {
		_, err := control.DecodeCommand([]byte(tt.line))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.line, err, tt.want)
		}
	}
}

func TestEventsRoundTrip(t *testing.T) {
	msgID := int64(3)
	evs := []control.Event{
		&control.Ready{Version: 1, Addr: "10.0.0.2", Port: 4791},
		&control.Configured{Scheme: "rss", Params: &scheme.Params{RSS: &scheme.RSSParams{Sigma: 4}}, Transport: control.Transport{MTU: 1500, HostParams: transport.HostParams{Window: 1 << 18}}, Name: "h"},
		&control.Sent{Msg: 3, Record: transport.MessageRecord{Kind: "message", Flow: 9, Msg: 0, Bytes: 100, Losses: []transport.LossRecord{
			{PSN: 5, Cause: transport.CauseNACK, DelayNs: 1000}, {PSN: 6, Cause: transport.CauseRTO, Retx: true}}}},
		&control.Received{From: "10.0.0.2", Record: transport.ReceiveRecord{Kind: "delivery", Flow: 9, Bytes: 100, Verified: true}},
		&control.Flow{Msg: 3, Done: true, Record: transport.FlowRecord{Kind: "flow", Flow: 9, Subflows: []transport.SubflowRecord{{ID: 1, EVs: []transport.EVChange{{EV: 4, Reason: "initial"}}}}}},
		&control.Stats{Final: true, Sent: 1, Conn: netio.SocketStats{RxByType: [8]uint64{0, 4}}},
		&control.Error{Error: "boom", Msg: &msgID, Input: "x"},
	}
	for _, e := range evs {
		line, err := control.AppendEvent(nil, e)
		if err != nil {
			t.Fatal(err)
		}
		got, err := control.DecodeEvent(line)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if diff := cmp.Diff(e, got); diff != "" {
			t.Errorf("%s: round trip differs:\n%s", line, diff)
		}
	}
	s := evs[2].(*control.Sent)
	r := evs[3].(*control.Received)
	if s.Key("10.0.0.2") != r.Key() {
		t.Errorf("keys differ: %+v %+v", s.Key("10.0.0.2"), r.Key())
	}
	for _, bad := range []string{`{"event":"sent","msg":1,"record":{"losses":[{"cause":"magic"}]}}`, `{"event":"nope"}`, `{"event":"ready","extra":1}`} {
		if _, err := control.DecodeEvent([]byte(bad)); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}

func TestLineReader(t *testing.T) {
	in := "a\n\n  \r\nbb\r\n" + strings.Repeat("x", 50) + "\nccc"
	lr := control.NewLineReader(strings.NewReader(in), 10)
	var got []string
	for {
		line, err := lr.Next()
		if err == io.EOF {
			break
		}
		if errors.Is(err, control.ErrLineTooLong) {
			got = append(got, "TOO LONG")
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(line))
	}
	if diff := cmp.Diff([]string{"a", "bb", "TOO LONG", "ccc"}, got); diff != "" {
		t.Error(diff)
	}
}
