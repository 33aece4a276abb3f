package agent_test

import (
	"testing"
	"time"

	"github.com/ftlab/ftlab/hostagent/control"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/hostagent/wire"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/switchd"
)

// TestRetransmissionsAgainstDrops: with corruption 1e-3 on one core link
// (a0-0 -> c0-0), every host of pod 0 sends 16 MiB to a host of pod 2,
// with rss+pfld and then rss+rack (RACK-TLP, Ordered Chaos's key
// baseline). That direction carries only the senders' DATA packets and
// probes (the ACKs and NACKs come back through other links), so every drop
// the switches count is a lost DATA copy or a lost probe, and the agents'
// per-type packet counters say which:
//
//	switch drops             = DATA lost + probes lost   (every loss was counted)
//
// rss+pfld is precise (Ordered Chaos VI: retransmissions exactly equal
// drops, none spurious):
//
//	sender retransmissions   = DATA lost                 (each loss resent once)
//	spurious retransmissions = 0                        (receivers' count)
//
// RACK-TLP infers losses from time and resends on a probe timeout, so it
// may resend what arrived: every lost copy is still resent (retransmissions
// >= DATA lost), and its spurious retransmissions are reported. A lost
// probe causes no retransmission by itself, which is why drops and
// retransmissions are compared through the probe count rather than
// directly.
func TestRetransmissionsAgainstDrops(t *testing.T) {
	for _, scheme := range []string{"rss+pfld", "rss+rack"} {
		t.Run(scheme, func(t *testing.T) { retransmissionsAgainstDrops(t, scheme) })
	}
}

func retransmissionsAgainstDrops(t *testing.T, scheme string) {
	l := newLab(t, switchd.Config{Mode: switchd.ModeLineRate, EdgePolicy: "ecmp", Seed: 5})
	pairs := []transfer{
		{src: "h0-0-0", dst: "h2-0-0"}, {src: "h0-0-1", dst: "h2-0-1"},
		{src: "h0-1-0", dst: "h2-1-0"}, {src: "h0-1-1", dst: "h2-1-1"},
	}
	var hosts []string
	for _, p := range pairs {
		hosts = append(hosts, p.src, p.dst)
	}
	// Unpaced (the window paces), and an RTO far above any RTT: with
	// eight agents and the switches sharing two CPUs (and -race), RTTs
	// reach tens of milliseconds, and a spurious RTO would retransmit
	// packets that were not lost. This test is about the schemes' own
	// detection (PFLD's NACKs, RACK and TLP); PFLD with tail, section-end
	// and RTX probes needs no RTO unless a probe and the packet it speaks
	// for are both lost.
	as := l.startAgents(t, hosts, control.Configure{Scheme: scheme, Transport: control.Transport{
		HostParams: transport.HostParams{Window: 128 << 10, MinRTO: time.Second, InitialRTO: time.Second},
	}})
	link, side, ok := l.topo.LinkBetween("a0-0", "c0-0")
	if !ok || side != topology.SideA {
		t.Fatalf("link a0-0~c0-0: %v %v", ok, side)
	}
	if err := l.ctl.ResetStats(); err != nil {
		t.Fatal(err)
	}
	if err := l.ctl.SetCorruption(link, topology.SideA, 1e-3); err != nil {
		t.Fatal(err)
	}
	out := as.run(l, pairs, mib16, 60*time.Second)
	if err := l.ctl.SetCorruption(link, topology.SideA, 0); err != nil {
		t.Fatal(err)
	}
	final := as.stop()
	checkIntact(t, out, mib16)

	var drops, otherDrops uint64
	stats, err := l.ctl.Stats()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range stats {
		if p.Switch == "c0-0" && p.Link == link.Name {
			drops += p.Counters.DropCorrupt
		} else {
			otherDrops += p.Counters.Drops()
		}
	}
	var dataTx, dataRx, probeTx, probeRx, ctlTx, ctlRx uint64
	for _, p := range pairs {
		s, r := final[p.src].Conn, final[p.dst].Conn
		dataTx += s.TxByType[wire.TypeData]
		dataRx += r.RxByType[wire.TypeData]
		ctlTx += r.TxByType[wire.TypeACK] + r.TxByType[wire.TypeNACK]
		ctlRx += s.RxByType[wire.TypeACK] + s.RxByType[wire.TypeNACK]
		for ty := wire.TypeTail; ty <= wire.TypeRTX; ty++ {
			probeTx += s.TxByType[ty]
			probeRx += r.RxByType[ty]
		}
		if s.TxErrors+r.TxErrors+s.RxDropped+r.RxDropped != 0 {
			t.Errorf("%s->%s: local losses (tx errors %d/%d, socket drops %d/%d)", p.src, p.dst, s.TxErrors, r.TxErrors, s.RxDropped, r.RxDropped)
		}
	}
	dataLost, probesLost := dataTx-dataRx, probeTx-probeRx
	var retx, needed, nacks, rtos, spurious int
	causes := map[transport.Cause]int{}
	for _, tr := range out {
		s := tr.sent.Record
		retx += s.Retransmissions
		needed += s.RetxNeeded
		nacks += s.NACKsAccepted
		rtos += s.RTOs
		spurious += tr.recv.Record.RetxSpurious
		for _, l := range s.Losses {
			causes[l.Cause]++
		}
	}
	for _, p := range pairs {
		spurious += int(final[p.dst].Endpoint.SpuriousRetxLate)
	}
	t.Logf("%s: switch drops %d (other drops %d); DATA lost %d, probes lost %d; retransmissions %d (needed %d, spurious at receivers %d) by cause %v, %d accepted NACKs, %d RTOs",
		scheme, drops, otherDrops, dataLost, probesLost, retx, needed, spurious, causes, nacks, rtos)
	if drops == 0 {
		t.Fatal("the corrupted link dropped nothing")
	}
	if otherDrops != 0 || ctlTx != ctlRx {
		t.Errorf("losses elsewhere: %d switch drops, %d of %d ACKs/NACKs lost", otherDrops, ctlTx-ctlRx, ctlTx)
	}
	if drops != dataLost+probesLost {
		t.Errorf("switches counted %d drops, the agents lost %d DATA copies and %d probes", drops, dataLost, probesLost)
	}
	if scheme == "rss+rack" {
		if probeTx != 0 || uint64(retx) < dataLost {
			t.Errorf("rss+rack: %d probes sent, %d retransmissions for %d DATA copies lost", probeTx, retx, dataLost)
		}
		return
	}
	if uint64(retx) != dataLost || uint64(needed) != dataLost || spurious != 0 {
		for _, tr := range out {
			f := tr.flow.Record
			t.Logf("%s: srtt %v, min RTT %v, RTO %v, %d RTOs", tr.src, time.Duration(f.SRTTNs), time.Duration(f.MinRTTNs), time.Duration(f.RTONs), f.RTOs)
		}
		t.Errorf("retransmissions %d (needed %d, spurious %d), want exactly the %d DATA copies dropped (%d switch drops less %d probes)",
			retx, needed, spurious, dataLost, drops, probesLost)
	}
}
