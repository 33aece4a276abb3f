package capture_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/pcapgo"

	"github.com/ftlab/ftlab/hostagent/agent"
	"github.com/ftlab/ftlab/hostagent/control"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/hostagent/wire"
	"github.com/ftlab/ftlab/internal/testlab"
	"github.com/ftlab/ftlab/orchestrator/capture"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/switchd"
)

const (
	sender, receiver = "h0-0-0", "h1-0-0"
	transferBytes    = 512 << 10
	corruptProb      = 0.03 // of h0-0-0's frames, at e0-0's ingress
)

// TestCaptureTransfer captures a known transfer on every port of the
// sender's edge switch and on the sender itself, in both data-plane
// modes: the frames per port and verdict are exactly what the switch
// counted, the host's and the switch's views of their link agree, and the
// pcapng holds them. With tshark installed, the Wireshark dissector
// decodes every ftlab packet of the capture to the fields the Go wire
// package reads from the same bytes.
func TestCaptureTransfer(t *testing.T) {
	testlab.RequireRoot(t)
	pfldTypes := []wire.Type{wire.TypeData, wire.TypeACK, wire.TypeNACK, wire.TypeTail, wire.TypeRTX}
	for _, tc := range []struct {
		mode, scheme string
		types        []wire.Type // the transfer must send these (its losses see to it)
	}{
		{switchd.ModeLineRate, "rss+pfld", pfldTypes},
		{switchd.ModeShaped, "rss+pfld", pfldTypes},
		{switchd.ModeLineRate, "psnpath", []wire.Type{wire.TypeData, wire.TypeACK}}, // path maps in DATA
	} {
		t.Run(tc.mode+"/"+tc.scheme, func(t *testing.T) { captureTransfer(t, tc.mode, tc.scheme, tc.types) })
	}
}

func captureTransfer(t *testing.T, mode, scheme string, types []wire.Type) {
	store := &lab.Store{Dir: t.TempDir(), Prefix: testlab.Prefix(t)}
	ctx := context.Background()
	st, err := store.Up(ctx, "cap", testlab.Topology(t, "fattree-k4"), lab.UpOptions{DataPlane: switchd.Config{Mode: mode}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := store.Down("cap"); err != nil {
			t.Error(err)
		}
	})
	ctl := store.Control(st)
	hostLink, _, _ := st.Topology.LinkBetween(sender, "e0-0")
	if err := ctl.SetCorruption(hostLink, 0, corruptProb); err != nil {
		t.Fatal(err)
	}
	if err := ctl.ResetStats(); err != nil {
		t.Fatal(err)
	}

	l, err := capture.LabOf(store, st)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "transfer.pcapng")
	out, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	ready := make(chan struct{})
	type result struct {
		res *capture.Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := capture.Run(cctx, l, capture.Options{Targets: []string{"e0-0", sender}, SnapLen: capture.MaxSnapLen,
			Out: out, Ready: func([]capture.Port) { close(ready) }})
		done <- result{res, err}
	}()
	select {
	case <-ready:
	case r := <-done:
		t.Fatalf("capture ended before it started: %v", r.err)
	}

	transfer(t, store, st, scheme)

	// Every frame is in: the agents stopped and nothing else sends. The
	// capture reads what the taps still hold before it returns.
	stats, err := ctl.Stats()
	if err != nil {
		t.Fatal(err)
	}
	stop()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	res := r.res
	if res.Lost != 0 {
		t.Fatalf("capture lost %d frames", res.Lost)
	}
	byPort := map[string]capture.PortStats{}
	for _, p := range res.Ports {
		byPort[p.Port] = p
	}
	var corrupt uint64
	for _, ps := range stats {
		if ps.Switch != "e0-0" {
			continue
		}
		c := ps.Counters
		got := byPort["e0-0:"+ps.Ifname]
		want := map[string]uint64{
			"in":                   c.RxPackets,
			"out forwarded":        c.TxPackets,
			"in dropped corrupt":   c.DropCorrupt,
			"in dropped link_down": c.DropLinkDown,
			"in dropped non_ipv4":  c.DropNonIPv4,
			"out dropped buffer":   c.DropBuffer,
		}
		have := map[string]uint64{"in": got.In}
		for k, v := range got.Verdicts {
			if strings.HasPrefix(k, "out forwarded") { // trimmed or not
				have["out forwarded"] += v
			} else {
				have[k] += v
			}
		}
		for k, w := range want {
			if have[k] != w {
				t.Errorf("%s: %d frames %s, the switch counted %d (verdicts %v)", got.Port, have[k], k, w, got.Verdicts)
			}
		}
		if ps.Port == 0 {
			corrupt = c.DropCorrupt
		}
	}
	if corrupt == 0 {
		t.Errorf("no frame of %s was dropped as corrupt at e0-0: the test's losses did not happen", sender)
	}
	host, edge := byPort[sender+":e0-0"], byPort["e0-0:"+sender]
	if host.Out != edge.In || host.In != edge.Verdicts["out forwarded"] {
		t.Errorf("%s saw %d out, %d in; e0-0 saw %d in from it, %d forwarded to it", sender, host.Out, host.In, edge.In, edge.Verdicts["out forwarded"])
	}
	if host.In == 0 || host.Out < transferBytes/4096 {
		t.Errorf("%s saw %d frames in and %d out: too few for a %d-byte transfer", sender, host.In, host.Out, transferBytes)
	}

	frames := readPcapng(t, file, res)
	checkDissector(t, testlab.Tool(t, "tshark", "the Wireshark dissector is checked on the capture"), file, frames, types)
}

// transfer sends one message from sender to receiver with the scheme and
// waits until it is delivered, verified and acknowledged, then stops both
// agents.
func transfer(t *testing.T, store *lab.Store, st *lab.State, scheme string) {
	t.Helper()
	events := make(chan control.Event, 1024)
	var agents []*agent.Handle
	for _, h := range []string{sender, receiver} {
		ha, err := agent.Start(context.Background(), agent.Options{Namespace: store.NamespaceName(st.Name, h),
			Mark: switchd.HostMark(st.Topology, st.PinRoot, h)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ha.Stop(); _ = ha.Wait() })
		agents = append(agents, ha)
		go func() {
			for ev := range ha.Events() {
				events <- ev
			}
		}()
		cfg := control.Configure{Scheme: scheme, Name: h, Transport: control.Transport{
			HostParams: transport.HostParams{MinRTO: 50 * time.Millisecond, InitialRTO: 50 * time.Millisecond}}}
		if err := ha.Do(&cfg); err != nil {
			t.Fatal(err)
		}
	}
	next := func(what string) control.Event {
		select {
		case ev := <-events:
			if e, ok := ev.(*control.Error); ok {
				t.Fatalf("agent error: %s", e.Error)
			}
			return ev
		case <-time.After(30 * time.Second):
			t.Fatalf("no %s in 30 s", what)
		}
		return nil
	}
	for configured := 0; configured < 2; {
		if _, ok := next("configured").(*control.Configured); ok {
			configured++
		}
	}
	rn, _ := st.Topology.Node(receiver)
	if err := agents[0].Do(&control.Send{Msg: 1, To: rn.Addr.String(), Bytes: transferBytes}); err != nil {
		t.Fatal(err)
	}
	var sent, received bool
	for !sent || !received {
		switch e := next("delivery").(type) {
		case *control.Sent:
			sent = true
		case *control.Received:
			if !e.Record.Verified {
				t.Fatal("delivery not verified")
			}
			received = true
		}
	}
	for _, ha := range agents {
		if err := ha.Stop(); err != nil {
			t.Fatal(err)
		}
		if err := ha.Wait(); err != nil {
			t.Fatal(err)
		}
	}
}

// pcapFrame is one packet of the capture file.
type pcapFrame struct {
	intf    string
	data    []byte
	comment string
}

// readPcapng checks the file against the capture's counts and returns
// its packets.
func readPcapng(t *testing.T, file string, res *capture.Result) []pcapFrame {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewNgReader(f, pcapgo.DefaultNgReaderOptions)
	if err != nil {
		t.Fatal(err)
	}
	var frames []pcapFrame
	per := map[string]uint64{}
	for {
		data, ci, opts, err := r.ReadPacketDataWithOptions()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		intf, err := r.Interface(ci.InterfaceIndex)
		if err != nil {
			t.Fatal(err)
		}
		if len(opts.Comments) != 1 || opts.Flags == nil {
			t.Fatalf("packet %d on %s has comments %q and flags %v, want one comment and a direction", len(frames)+1, intf.Name, opts.Comments, opts.Flags)
		}
		frames = append(frames, pcapFrame{intf.Name, data, opts.Comments[0]})
		per[intf.Name]++
	}
	for _, p := range res.Ports {
		if per[p.Port] != p.Written || p.Written != p.Seen {
			t.Errorf("%s: %d packets in the file, capture wrote %d of %d seen", p.Port, per[p.Port], p.Written, p.Seen)
		}
	}
	return frames
}

// ftFields are the dissector's fields compared, in tshark -e order.
var ftFields = []string{"ftlab.type", "ftlab.flags", "ftlab.sfbits", "ftlab.ev", "ftlab.flow", "ftlab.msg", "ftlab.psn",
	"ftlab.tsval", "ftlab.tsecr", "ftlab.offset", "ftlab.msglen", "ftlab.length", "ftlab.path", "ftlab.path.fpsn", "ftlab.cumack", "ftlab.sack",
	"ftlab.nack.count", "ftlab.nack.psn"}

// wireFields renders a packet as tshark prints those fields.
func wireFields(p *wire.Packet) []string {
	h := p.Header
	out := []string{strconv.Itoa(int(h.Type)), fmt.Sprintf("0x%02x", uint8(h.Flags)), strconv.Itoa(int(h.SubflowBits)),
		fmt.Sprintf("0x%04x", h.EV), fmt.Sprint(h.Flow), fmt.Sprint(h.Msg), fmt.Sprint(h.PSN), fmt.Sprint(h.TSVal), fmt.Sprint(h.TSEcr)}
	blank := func(n int) {
		for range n {
			out = append(out, "")
		}
	}
	switch h.Type {
	case wire.TypeData:
		fpsn := ""
		if p.Path.Paths() > 0 {
			fpsn = fmt.Sprint(p.Path.FPSN(h.PSN))
		}
		out = append(out, fmt.Sprint(p.Offset), fmt.Sprint(p.MsgLen), fmt.Sprint(len(p.Payload)), fmt.Sprintf("0x%04x", uint16(p.Path)), fpsn)
		blank(4)
	case wire.TypeACK:
		blank(5)
		out = append(out, fmt.Sprint(p.CumAck), fmt.Sprintf("0x%016x", p.SACK))
		blank(2)
	case wire.TypeNACK:
		blank(7)
		psns := make([]string, len(p.NACKs))
		for i, n := range p.NACKs {
			psns[i] = fmt.Sprint(n)
		}
		out = append(out, fmt.Sprint(len(p.NACKs)), strings.Join(psns, "|"))
	default:
		blank(9)
	}
	return out
}

// checkDissector runs tshark with tools/wireshark/ftlab.lua over the file
// and compares every packet's fields with wire.Parse of its bytes.
func checkDissector(t *testing.T, tshark, file string, frames []pcapFrame, want []wire.Type) {
	t.Helper()
	lua := filepath.Join(testlab.Root(t), "tools", "wireshark", "ftlab.lua")
	// The EV rides in the UDP source port, so it is often a port another
	// dissector claims (FIND, ...): the heuristic, which checks ftlab's
	// magic, must come first (docs/capture.md says so for Wireshark).
	args := []string{"-X", "lua_script:" + lua, "-o", "udp.try_heuristic_first:TRUE", "-r", file, "-T", "fields", "-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator=|",
		"-e", "_ws.col.Protocol", "-e", "_ws.expert.message"}
	for _, f := range ftFields {
		args = append(args, "-e", f)
	}
	cmd := exec.Command(tshark, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	outb, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark: %v: %s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimRight(string(outb), "\n"), "\n")
	if len(lines) != len(frames) {
		t.Fatalf("tshark printed %d packets, the file has %d", len(lines), len(frames))
	}
	types := map[wire.Type]int{}
	mapped := 0
	var pkt wire.Packet
	for i, line := range lines {
		cols := strings.Split(line, "\t")
		fr := frames[i]
		payload, ok := udpPayload(fr.data)
		if !ok || wire.Parse(payload, &pkt) != nil {
			if cols[0] == "ftlab" {
				t.Errorf("packet %d (%s) is not an ftlab packet to Go, tshark decoded it as one", i+1, fr.comment)
			}
			continue
		}
		types[pkt.Type]++
		if pkt.Path.Paths() > 0 {
			mapped++
		}
		if cols[0] != "ftlab" {
			t.Errorf("packet %d (%s, %s): tshark says protocol %q", i+1, fr.comment, pkt.Type, cols[0])
			continue
		}
		// Expert infos: the packet's comment, the dissector's note on
		// retransmissions, and nothing else (no malformed field, no EV
		// that disagrees with the source port, nothing cut short).
		// Wireshark's own UDP dissector adds one of its own to any
		// datagram whose port lies in traceroute's range (33434-33534),
		// where an agent's ephemeral port can fall: not ftlab's.
		for _, msg := range strings.Split(cols[1], "|") {
			if strings.HasPrefix(msg, "Possible traceroute: ") {
				continue
			}
			if msg != "" && msg != fr.comment && msg != "Retransmission" {
				t.Errorf("packet %d (%s): dissector expert info %q", i+1, pkt.Type, msg)
			}
		}
		want := wireFields(&pkt)
		for j, name := range ftFields {
			if got := cols[2+j]; got != want[j] {
				t.Errorf("packet %d (%s): %s = %q, wire.Parse has %q", i+1, pkt.Type, name, got, want[j])
			}
		}
	}
	t.Logf("dissector checked on %d packets: %v (%d DATA with a path map)", len(lines), types, mapped)
	if strings.Contains(t.Name(), "psnpath") && mapped == 0 {
		t.Error("PSN-PATH sent no DATA with a path map")
	}
	for _, ty := range want {
		if types[ty] == 0 {
			t.Errorf("the transfer sent no %s packet: its losses did not show the dissector every kind", ty)
		}
	}
}

// udpPayload returns the UDP payload of an Ethernet/IPv4 frame.
func udpPayload(b []byte) ([]byte, bool) {
	if len(b) < 14+20 || b[12] != 0x08 || b[13] != 0 || b[23] != 17 {
		return nil, false
	}
	ihl := int(b[14]&0xf) * 4
	if len(b) < 14+ihl+8 {
		return nil, false
	}
	return b[14+ihl+8:], true
}
