package bench

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/ftlab/ftlab/hostagent/netio"
	"github.com/ftlab/ftlab/hostagent/scheme"
	"github.com/ftlab/ftlab/hostagent/sim"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/internal/params"
)

// flowMsg is the size of the one message every measured flow carries.
const flowMsg = 4 << 10

// heapFlows is how many flows FlowHeap opens for the section.
const heapFlows = 1000

// flowSim is the two-host simulator network and the transport
// configuration that FlowState and FlowHeap measure flows on.
func flowSim(sch transport.Scheme) (sim.Config, transport.Config) {
	const rate = 100e9
	return sim.Config{Seed: 1, Hosts: 2, Paths: 8,
			Host: sim.LinkConfig{Rate: rate, Delay: 500 * time.Nanosecond, Buffer: 4 << 20},
			Path: sim.LinkConfig{Rate: rate, Delay: time.Microsecond, Buffer: 1 << 20}},
		transport.Config{Scheme: sch, Rate: rate, Window: flowWindow,
			InitialRTO: 200 * time.Microsecond, MinRTO: 100 * time.Microsecond, MaxRTO: 10 * time.Millisecond}
}

// liveHeap collects garbage (runtime.GC twice) and returns the live Go
// heap (runtime.MemStats.HeapAlloc) in bytes.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// inFlight counts the packets on the links of n's hosts 0 and 1 (links
// without loss or failures, as FlowHeap's are: every accepted packet is
// delivered, dropped by a filter at the far end of the uplink, or still
// on the link).
func inFlight(n *sim.Network) uint64 {
	var on uint64
	add := func(s sim.LinkStats) { on += s.Packets - s.Delivered - s.LossDrops }
	for i := range 2 {
		add(n.Host(i).Uplink().Stats())
		add(n.Host(i).Downlink().Stats())
		for k := range n.Config().Paths {
			add(n.Path(i, 1-i, k).Stats())
		}
	}
	return on
}

// FlowHeap returns the live Go heap, in bytes, that one open flow costs,
// sender and receiver side together, with one 4 KiB message in flight.
//
// It builds two endpoints on the simulator with FlowState's transport
// configuration, reads the live heap (after runtime.GC twice), opens
// flows flows from host 0 to host 1 and sends one message on each, runs
// the virtual clock only until every message's packets have reached
// host 1 (so both ends hold the flow's state) and nothing is left on the
// simulated links, reads the live heap again and returns the growth
// divided by flows. Everything stays reachable until the second reading.
//
// Three things keep the simulator's own memory out of the figure:
// everything host 1 sends (ACKs, NACKs, probe answers) is dropped by a
// filter as it leaves host 1's uplink, so no message completes and no
// packet is left in flight at the reading; the links serialize instantly
// (rate 0; delays, buffers and the transport's 100 Gb/s pacing as in
// FlowState), so the reading comes about 3 µs of virtual time after the
// sends, before any retransmission or probe timer (200 µs initial RTO);
// and before the first reading the network's packet-buffer free lists
// and event queue are grown by sending as many packets as the
// measurement will through the network with no endpoint attached. It
// fails if any message completed, if a flow had not sent its message, or
// if the measurement sent more packets than the warm-up did.
func FlowHeap(name string, flows int) (float64, error) {
	if flows < 1 {
		return 0, fmt.Errorf("bench: flow heap: %d flows", flows)
	}
	sch, err := scheme.New(name, scheme.MustDefaults(name, params.Env{RTT: transport.NominalBaseRTT}))
	if err != nil {
		return 0, err
	}
	ncfg, tcfg := flowSim(sch)
	ncfg.Host.Rate, ncfg.Path.Rate = 0, 0
	n, err := sim.New(ncfg)
	if err != nil {
		return 0, err
	}
	clk := n.Clock()
	h0, h1 := n.Host(0), n.Host(1)

	// Warm-up: per flow, pkts MTU-sized buffers (one per DATA packet of
	// the message) and smallPerFlow header-only ones, all in flight at
	// once, then delivered to no endpoint and returned to the free lists.
	const smallPerFlow = 8
	big, small := make([]byte, h0.MaxPayload()), make([]byte, 64)
	var bigWarm, smallWarm int
	warm := func(pkts int) error {
		bigWarm, smallWarm = pkts*flows, smallPerFlow*flows
		for range bigWarm {
			if err := h0.Send(netio.Datagram{Peer: h1.LocalAddr(), Payload: big}); err != nil {
				return err
			}
		}
		for range smallWarm {
			if err := h1.Send(netio.Datagram{Peer: h0.LocalAddr(), Payload: small}); err != nil {
				return err
			}
		}
		clk.Run()
		return nil
	}

	var completed, delivered int
	tcfg.OnMessageSent = func(transport.MessageRecord) { completed++ }
	tcfg.OnMessageReceived = func(transport.ReceiveRecord) { delivered++ }
	eps := make([]*transport.Endpoint, 2)
	for i := range eps {
		cfg := tcfg
		cfg.Seed += uint64(i) * 0x9E3779B97F4A7C15 // as the harness does
		cfg.Name = fmt.Sprintf("h%d", i)
		if eps[i], err = transport.NewEndpoint(cfg, clk, n.Host(i)); err != nil {
			return 0, err
		}
	}
	seg := eps[0].Config().MaxSegment
	pkts := (flowMsg + seg - 1) / seg
	if err := warm(pkts); err != nil {
		return 0, fmt.Errorf("bench: flow heap: warm-up: %w", err)
	}
	sent0 := h0.Stats().Sent + h1.Stats().Sent
	for i, ep := range eps {
		n.Host(i).Attach(ep)
	}
	n.AddFilter(func(p *sim.Packet) bool { return p.Src == 1 })
	fl := make([]*transport.Flow, 0, flows)
	peer := h1.LocalAddr()
	start := clk.Now()

	before := liveHeap()
	for range flows {
		f, err := eps[0].OpenFlow(peer)
		if err != nil {
			return 0, err
		}
		if _, err := f.Send(flowMsg); err != nil {
			return 0, err
		}
		fl = append(fl, f)
	}
	limit := start.Add(100 * time.Microsecond)
	for {
		if inFlight(n) == 0 {
			if rx, _ := eps[1].ReceiverStateBytes(); rx == flows {
				break
			}
		}
		if !clk.Step() || clk.Now() > limit {
			return 0, fmt.Errorf("bench: flow heap %s: packets still in flight or receivers missing at %v", name, clk.Now().Sub(start))
		}
	}
	after := liveHeap()
	runtime.KeepAlive(fl)
	runtime.KeepAlive(eps)
	runtime.KeepAlive(n)

	if completed > 0 {
		return 0, fmt.Errorf("bench: flow heap %s: %d messages completed before the reading", name, completed)
	}
	data := 0
	for _, f := range fl {
		r := f.Record()
		if r.Packets < pkts {
			return 0, fmt.Errorf("bench: flow heap %s: flow %d sent %d of its %d packets by the reading", name, r.Flow, r.Packets, pkts)
		}
		data += r.Packets
	}
	ctl := int(h0.Stats().Sent+h1.Stats().Sent-sent0) - data
	if data > bigWarm || ctl > smallWarm {
		return 0, fmt.Errorf("bench: flow heap %s: %d DATA and %d control packets, warm-up only %d and %d", name, data, ctl, bigWarm, smallWarm)
	}
	return float64(after-before) / float64(flows), nil
}

// flowRows measures every scheme reps times: the live Go heap per open
// flow (FlowHeap, hflows flows) and the scheme's own receiver and sender
// state per flow (FlowState, sflows flows), each against the per-flow
// send window.
func flowRows(ctx context.Context, opt Options, sflows, hflows, reps int) ([]Row, error) {
	var rows []Row
	for _, name := range scheme.Names() {
		var heaps, rxs, txs, base []float64
		for i := range reps {
			if err := ctx.Err(); err != nil {
				return rows, err
			}
			h, err := FlowHeap(name, hflows)
			if err != nil {
				return rows, fmt.Errorf("%s: %w", name, err)
			}
			rx, tx, err := FlowState(name, sflows)
			if err != nil {
				return rows, fmt.Errorf("%s: %w", name, err)
			}
			opt.logf("bench: memory %s rep %d/%d: heap %.0f B per open flow, scheme state rx %.0f B tx %.0f B", name, i+1, reps, h, rx, tx)
			heaps, rxs, txs, base = append(heaps, h), append(rxs, rx), append(txs, tx), append(base, flowWindow)
		}
		rows = append(rows,
			rowOf(name+" heap per open flow", "B", heaps, base, "send window"),
			rowOf(name+" receiver scheme state per flow", "B", rxs, base, "send window"),
			rowOf(name+" sender scheme state per flow", "B", txs, base, "send window"))
	}
	return rows, nil
}
