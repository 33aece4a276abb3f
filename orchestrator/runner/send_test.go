package runner

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ftlab/ftlab/internal/testlab"
	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/orchestrator/fidelity"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/switchd"
)

// sendLab is a shaped k=4 lab whose links run at rate, taken down at the
// end of the test.
func sendLab(t *testing.T, name string, rate uint64) *lab.Store {
	t.Helper()
	testlab.RequireRoot(t)
	store := &lab.Store{Dir: t.TempDir(), Prefix: testlab.Prefix(t)}
	topo := testlab.Topology(t, "fattree-k4")
	for i := range topo.Links {
		topo.Links[i].Up.RateBps, topo.Links[i].Down.RateBps = rate, rate
	}
	dp := switchd.Config{Mode: switchd.ModeShaped, ConvergenceDelay: time.Millisecond}
	if _, err := store.Up(context.Background(), name, topo, lab.UpOptions{DataPlane: dp}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := store.Down(name); err != nil {
			t.Error(err)
		}
	})
	return store
}

// TestSendMeasuresWhatLinkSetChanged: a transfer is delivered and
// verified; halving the rate of the destination's link halves the
// transfer's goodput (it carries more than half the rate before and
// cannot after, while it still gets most of the halved link); drops on the source's link are counted as corrupt
// by its edge switch and repaired by retransmissions.
func TestSendMeasuresWhatLinkSetChanged(t *testing.T) {
	const rate = 10 * units.Mbit
	store := sendLab(t, "send", rate)
	ctx := context.Background()
	var mu sync.Mutex
	var progress []SendProgress
	opt := SendOptions{Store: store, Lab: "send", Agents: InProcessAgents, Src: "h0-0-0", Dst: "h3-1-1", Bytes: units.MiB, Count: 1,
		// A window below the buffer: the slow link queues, never drops.
		Transport: "ecmp", Params: []string{"host.window=48KiB"}, Timeout: 30 * time.Second,
		ProgressEvery: 100 * time.Millisecond,
		Progress: func(p SendProgress) {
			mu.Lock()
			progress = append(progress, p)
			mu.Unlock()
		}}
	// Goodput is compared only between transfers the machine kept up
	// with: a transfer whose fidelity is not OK is made again (CI, under
	// the suite: 0.54 of the rate with a WARN, against 0.9 quiet).
	sendOK := func() *SendResult {
		t.Helper()
		var r *SendResult
		for attempt := 1; attempt <= 3; attempt++ {
			var err error
			if r, err = Send(ctx, opt); err != nil {
				t.Fatal(err)
			}
			if r.Fidelity == nil || r.Fidelity.Verdict == fidelity.OK {
				break
			}
			t.Logf("transfer %d: fidelity %s, again", attempt, r.Fidelity.Verdict)
		}
		return r
	}
	full := sendOK()
	m := full.Messages[0]
	if !m.Delivered || full.Summary.Delivered != 1 || full.Status != "complete" || full.Fidelity == nil {
		t.Fatalf("transfer: %+v", full)
	}
	mu.Lock()
	last := progress[len(progress)-1]
	mu.Unlock()
	// The live line counts what reached the destination: at least the
	// message, with its headers, once it is over.
	if len(progress) < 2 || last.Bytes == 0 {
		t.Errorf("progress %+v", progress)
	}

	half := lab.RateChange{Fraction: 0.5}
	if _, err := store.SetImpairment(ctx, "send", "e3-1", "h3-1-1", lab.LinkChange{Direction: lab.DirectionDown, Rate: &half}); err != nil {
		t.Fatal(err)
	}
	opt.Progress = nil
	slow := sendOK()
	fast, slowed := m.GoodputBps/float64(rate), slow.Messages[0].GoodputBps/float64(rate)
	t.Logf("goodput %.2f of the link rate (%s), %.2f with the destination's link at half of it (verdicts %s, %s)",
		fast, units.FormatRate(rate), slowed, full.Fidelity.Verdict, slow.Fidelity.Verdict)
	if fast <= 0.55 || slowed > 0.51 || slowed < 0.3 {
		t.Errorf("goodput %.2f of the rate before and %.2f after halving the destination link's rate; want above 0.55, then between 0.3 and 0.5", fast, slowed)
	}
	if len(slow.Impairments) != 1 {
		t.Errorf("the result does not say the link was impaired: %+v", slow.Impairments)
	}

	drop := 0.05
	if _, err := store.SetImpairment(ctx, "send", "h0-0-0", "e0-0", lab.LinkChange{Direction: lab.DirectionUp, Drop: &drop}); err != nil {
		t.Fatal(err)
	}
	opt.Bytes = 512 * units.KiB
	lossy, err := Send(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := store.Get("send")
	ports, err := store.Control(st).Stats()
	if err != nil {
		t.Fatal(err)
	}
	var corrupt uint64
	for _, p := range ports {
		if p.Switch == "e0-0" && p.Link == "h0-0-0~e0-0" {
			corrupt = p.Counters.DropCorrupt
		}
	}
	if !lossy.Messages[0].Delivered || corrupt == 0 || lossy.Summary.Retransmissions == 0 {
		t.Errorf("at 5%% drop: delivered %v, %d corrupt drops at e0-0, %d retransmissions; want delivered, both above 0",
			lossy.Messages[0].Delivered, corrupt, lossy.Summary.Retransmissions)
	}
}

// TestSendRefuses: bad hosts, sizes and parameters are named, every one
// at once; a congestion control is taken with its parameters; a lab whose
// hosts are busy is refused.
func TestSendRefuses(t *testing.T) {
	store := sendLab(t, "refuse", 10*units.Mbit)
	ctx := context.Background()
	_, err := Send(ctx, SendOptions{Store: store, Lab: "refuse", Agents: InProcessAgents, Src: "h0-0-0", Dst: "e0-0", Bytes: 0, Count: 0,
		Transport: "rss", Params: []string{"sigma=3", "host.nothing=1", "oops"}})
	for _, want := range []string{`destination "e0-0" is not a host of lab refuse (hosts: h0-0-0, `, "size:", "count:", `param "sigma=3"`, `param "host.nothing=1"`, `param "oops": want`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v; want it to say %q", err, want)
		}
	}
	_, err = Send(ctx, SendOptions{Store: store, Lab: "refuse", Agents: InProcessAgents, Src: "h0-0-0", Dst: "h0-0-0", Bytes: 1, Count: 1, Transport: "warp"})
	if err == nil || !strings.Contains(err.Error(), "both h0-0-0") || !strings.Contains(err.Error(), "warp") {
		t.Errorf("same host, unknown transport: %v", err)
	}
	// A congestion control and its parameters reach the agents.
	res, err := Send(ctx, SendOptions{Store: store, Lab: "refuse", Agents: InProcessAgents, Src: "h0-0-0", Dst: "h1-0-0", Bytes: 256 << 10, Count: 2,
		Transport: "rss", CC: "mprdma", Params: []string{"mprdma.increase=2"}, Timeout: 30 * time.Second})
	if err != nil || res.CC != "mprdma" || res.Summary.Delivered != 2 {
		t.Errorf("send with cc mprdma: %v, %+v", err, res)
	}
	if _, err := Send(ctx, SendOptions{Store: store, Lab: "refuse", Agents: InProcessAgents, Src: "h0-0-0", Dst: "h1-0-0", Bytes: 1, Count: 1,
		Transport: "rss", CC: "mprdma", Params: []string{"mprdma.increase=-1"}}); err == nil || !strings.Contains(err.Error(), `param "mprdma.increase=-1"`) {
		t.Errorf("bad cc parameter: %v", err)
	}

	release, err := store.LockTraffic("refuse")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	_, err = Send(ctx, SendOptions{Store: store, Lab: "refuse", Agents: InProcessAgents, Src: "h0-0-0", Dst: "h1-0-0", Bytes: 1, Count: 1, Transport: "ecmp"})
	if !errors.Is(err, lab.ErrTrafficBusy) {
		t.Errorf("busy hosts: %v, want ErrTrafficBusy", err)
	}
}
