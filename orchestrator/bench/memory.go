package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/ftlab/ftlab/hostagent/harness"
	"github.com/ftlab/ftlab/hostagent/scheme"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/internal/params"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/switchd"
)

// readKB returns a "Key:   N kB" field of a /proc file in bytes.
func readKB(path, key string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && k == key {
			n, err := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n << 10, err
		}
	}
	return 0, fmt.Errorf("%s: no %s", path, key)
}

// memSample is one reading of the memory figures, taken after a full
// garbage collection so that garbage of earlier steps is not counted.
type memSample struct {
	avail int64 // /proc/meminfo MemAvailable, machine-wide, bytes
	slab  int64 // /proc/meminfo Slab (kernel slab caches), machine-wide, bytes
	rss   int64 // /proc/self/status VmRSS of this process, bytes
	heap  int64 // runtime.MemStats.HeapAlloc (live Go heap) of this process, bytes
}

// readMem collects garbage (runtime.GC twice, then debug.FreeOSMemory so
// freed heap is returned to the OS before RSS is read) and reads the
// memory figures. Baselines and measured labs are read by it alike.
func readMem() (m memSample, err error) {
	runtime.GC()
	runtime.GC()
	debug.FreeOSMemory()
	if m.avail, err = readKB("/proc/meminfo", "MemAvailable"); err != nil {
		return m, err
	}
	if m.slab, err = readKB("/proc/meminfo", "Slab"); err != nil {
		return m, err
	}
	if m.rss, err = readKB("/proc/self/status", "VmRSS"); err != nil {
		return m, err
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.heap = int64(ms.HeapAlloc)
	return m, nil
}

// LabMem is what one lab build cost, in bytes.
type LabMem struct {
	// Kernel is the drop of MemAvailable across the build: machine-wide,
	// so it holds the kernel's namespaces, veths, routes and BPF
	// programs and maps, this process's growth, and any other activity
	// on the machine.
	Kernel int64
	// Slab is the growth of the kernel's slab caches (Slab in
	// /proc/meminfo) across the build, also machine-wide.
	Slab int64
	// RSSBefore and RSSAfter are this process's VmRSS before and after.
	RSSBefore, RSSAfter int64
	// HeapBefore and HeapAfter are this process's live Go heap before and
	// after.
	HeapBefore, HeapAfter int64
}

// LabMemory builds a k-ary fat tree with the default data plane and
// returns what it cost (see LabMem), read settle after the build; with
// bare set it makes only the bare namespaces and veths instead. Every
// reading follows a full garbage collection. Everything made is removed
// before it returns.
func LabMemory(ctx context.Context, k int, bare bool, settle time.Duration) (m LabMem, err error) {
	s, err := newScope()
	if err != nil {
		return m, err
	}
	defer func() {
		if cerr := s.close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	topo, err := topology.NewFatTree(k)
	if err != nil {
		return m, err
	}
	m0, err := readMem()
	if err != nil {
		return m, err
	}
	if bare {
		err = bareUp(ctx, topo, s.name)
	} else {
		_, err = buildLab(ctx, s, topo, switchd.Config{})
	}
	if err != nil {
		return m, err
	}
	Settle(ctx, settle)
	m1, err := readMem()
	if err != nil {
		return m, err
	}
	return LabMem{Kernel: m0.avail - m1.avail, Slab: m1.slab - m0.slab,
		RSSBefore: m0.rss, RSSAfter: m1.rss, HeapBefore: m0.heap, HeapAfter: m1.heap}, ctx.Err()
}

// bareUp makes the bare baseline's namespaces and veths and leaves them.
func bareUp(ctx context.Context, topo *topology.Topology, name func(string) string) error {
	// BareUpDown deletes what it made; memory needs them present, so the
	// same objects are made by the first half only.
	return bareObjects(ctx, topo, name)
}

// FlowState runs flows flows of one 4 KiB message each from host 0 to
// host 1 of the simulator with the named scheme and returns the mean
// receiver and sender state bytes per flow: the scheme's own state only
// (ReceiverScheme/SenderScheme StateBytes), not the transport's; FlowHeap
// measures the whole flow.
func FlowState(name string, flows int) (rx, tx float64, err error) {
	sch, err := scheme.New(name, scheme.MustDefaults(name, params.Env{RTT: transport.NominalBaseRTT}))
	if err != nil {
		return 0, 0, err
	}
	msgs := make([]harness.Message, flows)
	for i := range msgs {
		msgs[i] = harness.Message{From: 0, To: 1, Size: flowMsg, Flow: i, At: time.Duration(i) * 50 * time.Nanosecond}
	}
	ncfg, tcfg := flowSim(sch)
	res, err := harness.Run(harness.Scenario{Net: ncfg, Transport: tcfg, Messages: msgs})
	if err != nil {
		return 0, 0, err
	}
	n, rxb := res.Endpoints[1].ReceiverStateBytes()
	txb := 0
	for _, f := range res.Flows {
		txb += f.StateBytes
	}
	if n > 0 {
		rx = float64(rxb) / float64(n)
	}
	if len(res.Flows) > 0 {
		tx = float64(txb) / float64(len(res.Flows))
	}
	return rx, tx, nil
}

const flowWindow = 256 << 10

// Memory measures memory per lab and per flow, each figure
// opt.repetitions() times; rows give the median with min and max.
func Memory(ctx context.Context, opt Options) (*Section, error) {
	// up: wait after a build before reading; gap: wait after removing a
	// build, for the kernel's background namespace cleanup.
	ks, flows, up, gap := []int{4, 8}, 1000, 500*time.Millisecond, 2*time.Second
	if opt.Quick {
		ks, flows, gap = []int{4}, 100, time.Second
	}
	reps := opt.repetitions()
	sec := &Section{Name: "memory", Method: fmt.Sprintf(
		"Each figure is measured %d time(s); value and baseline are the medians, ratio is their quotient, "+
			"n/min–max/spread give the count, the range of the values and (max-min)/median. "+
			"Every reading follows a full GC (runtime.GC twice, debug.FreeOSMemory), for baseline and lab alike. "+
			"MiB = 2^20 bytes. Per lab, each repetition builds the bare namespaces+veths, then the lab with the default data plane (eBPF), "+
			"%v settle between builds, each read %v after it was up and removed before the next: "+
			"kernel memory = drop of /proc/meminfo MemAvailable across the build (machine-wide: kernel namespaces, veths, routes, BPF programs and maps, "+
			"plus this process's growth and any other activity on the machine), against the same drop for the bare build; "+
			"kernel slab = growth of /proc/meminfo Slab (kernel slab caches only, machine-wide; includes reclaimable caches that MemAvailable counts as available, so it can exceed the drop) against the bare build's; "+
			"ftlab RSS = this process's VmRSS after the lab is up against before; ftlab Go heap = live Go heap (HeapAlloc) after against before. "+
			"Per flow, in the simulator, against the %d KiB per-flow send window: "+
			"heap per open flow = growth of the live Go heap (HeapAlloc after runtime.GC twice) when %d flows are opened from one endpoint to another, "+
			"each with one 4 KiB message in flight, divided by %d: everything both endpoints allocate for the flow, sender and receiver side together "+
			"(transport flow and message state, packet ring, timers, map entries, the scheme's state and the Flow handle); "+
			"the reading is taken once every message's packets have reached the receiver and the simulated links are empty "+
			"(the receiver's ACKs are dropped so that no message completes; links serialize instantly so this is ~3 µs of virtual time, before any timer fires; "+
			"the simulator's packet free lists are grown beforehand), so no simulator packet is counted; "+
			"spread may be slightly above 0 (other allocations of the process between the readings). "+
			"Scheme state (%d flows of one 4 KiB message each run to completion, deterministic, so spread is expected to be 0) is the scheme's own state only: "+
			"receiver scheme state = Endpoint.ReceiverStateBytes / flows, sender scheme state = mean FlowRecord.StateBytes.",
		reps, gap, up, flowWindow>>10, heapFlows, heapFlows, flows)}
	const mib = 1 << 20
	if len(ks) > 0 {
		Settle(ctx, gap) // let removals of earlier sections finish
	}
	for _, k := range ks {
		var kern, bkern, slab, bslab, rss, brss, heap, bheap []float64
		for i := range reps {
			bm, err := LabMemory(ctx, k, true, up)
			if err != nil {
				return sec, fmt.Errorf("k=%d bare: %w", k, err)
			}
			Settle(ctx, gap)
			fm, err := LabMemory(ctx, k, false, up)
			if err != nil {
				return sec, fmt.Errorf("k=%d: %w", k, err)
			}
			Settle(ctx, gap)
			opt.logf("bench: memory k=%d rep %d/%d: kernel %d KiB (bare %d KiB), slab %d KiB (bare %d KiB), rss %d -> %d KiB, heap %d -> %d KiB",
				k, i+1, reps, fm.Kernel>>10, bm.Kernel>>10, fm.Slab>>10, bm.Slab>>10, fm.RSSBefore>>10, fm.RSSAfter>>10, fm.HeapBefore>>10, fm.HeapAfter>>10)
			kern, bkern = append(kern, float64(fm.Kernel)/mib), append(bkern, float64(bm.Kernel)/mib)
			slab, bslab = append(slab, float64(fm.Slab)/mib), append(bslab, float64(bm.Slab)/mib)
			rss, brss = append(rss, float64(fm.RSSAfter)/mib), append(brss, float64(fm.RSSBefore)/mib)
			heap, bheap = append(heap, float64(fm.HeapAfter)/mib), append(bheap, float64(fm.HeapBefore)/mib)
		}
		sec.Rows = append(sec.Rows,
			rowOf(fmt.Sprintf("k=%d kernel memory (MemAvailable drop)", k), "MiB", kern, bkern, "bare namespaces+veths"),
			rowOf(fmt.Sprintf("k=%d kernel slab growth", k), "MiB", slab, bslab, "bare namespaces+veths"),
			rowOf(fmt.Sprintf("k=%d ftlab RSS after up", k), "MiB", rss, brss, "RSS before up"),
			rowOf(fmt.Sprintf("k=%d ftlab Go heap after up", k), "MiB", heap, bheap, "Go heap before up"))
	}
	rows, err := flowRows(ctx, opt, flows, heapFlows, reps)
	sec.Rows = append(sec.Rows, rows...)
	if err != nil {
		return sec, err
	}
	return sec, nil
}
