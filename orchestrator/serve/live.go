package serve

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/orchestrator/graph"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/switchd"
)

// Snapshot is the live page's view of a lab at one moment: GET
// /api/state, and every server-sent event of /api/events.
type Snapshot struct {
	Lab   string    `json:"lab"`
	Time  time.Time `json:"time"`
	Seq   uint64    `json:"seq"`
	Phase lab.Phase `json:"phase"`
	// Error says why the lab could not be read (it went down, ...).
	Error string `json:"error,omitempty"`
	// Counters says whether the links carry counters (eBPF data plane).
	Counters    bool             `json:"counters"`
	Links       []LinkLoad       `json:"links"`
	Failed      []string         `json:"failed"`
	Impairments []lab.Impairment `json:"impairments"`
	Control     bool             `json:"control"` // the page may fail and repair links
}

// LinkLoad is one link's state and load.
type LinkLoad struct {
	Name  string          `json:"name"`
	A     string          `json:"a"`
	B     string          `json:"b"`
	State graph.LinkState `json:"state"`
	// Up is A -> B (towards the core), Down B -> A.
	Up   DirectionLoad `json:"up"`
	Down DirectionLoad `json:"down"`
}

// DirectionLoad is one direction of a link now.
type DirectionLoad struct {
	RateBps uint64  `json:"rate_bps"` // the rate it runs at (link set included)
	LoadBps float64 `json:"load_bps"` // carried over the last interval
	// Utilization is LoadBps over RateBps.
	Utilization float64 `json:"utilization"`
	Packets     uint64  `json:"packets"`
	Bytes       uint64  `json:"bytes"`
	// QueueBytes is the sender's egress queue now (shaped mode: the
	// qdisc's backlog); MaxQueueBytes the most it held since the
	// counters were last reset.
	QueueBytes    uint64 `json:"queue_bytes"`
	MaxQueueBytes uint64 `json:"max_queue_bytes"`
	// Drops by cause: at the sender's egress queue, the receiver's
	// ingress for corruption, a failed end.
	DropQueue   uint64 `json:"drop_queue"`
	DropCorrupt uint64 `json:"drop_corrupt"`
	DropDown    uint64 `json:"drop_link_down"`
	Drops       uint64 `json:"drops"`
}

// live reads a lab every interval and hands the newest snapshot to the
// page's event streams.
type live struct {
	store    *lab.Store
	name     string
	topo     *topology.Topology
	interval time.Duration
	control  bool

	mu      sync.Mutex
	snap    *Snapshot
	changed chan struct{} // closed and replaced at every new snapshot
	prev    map[string][2]uint64
	prevAt  time.Time
	downAt  time.Time       // last time the kernel's link states were read
	down    map[string]bool // links with an interface down; written under mu
}

// inspectEvery is how often the kernel's interface states are read (a
// link down without a recorded failure): every namespace is asked, so
// less often than the counters.
const inspectEvery = 5 * time.Second

func newLive(store *lab.Store, st *lab.State, interval time.Duration) *live {
	return &live{store: store, name: st.Name, topo: st.Topology, interval: interval, changed: make(chan struct{}), prev: map[string][2]uint64{}}
}

// run reads the lab until ctx ends.
func (l *live) run(ctx context.Context) {
	go l.watchState(ctx)
	t := time.NewTicker(l.interval)
	defer t.Stop()
	for {
		l.publish(l.read(ctx))
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (l *live) publish(s *Snapshot) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.snap != nil {
		s.Seq = l.snap.Seq + 1
	}
	s.Control = l.control
	l.snap = s
	close(l.changed)
	l.changed = make(chan struct{})
}

// latest returns the newest snapshot (nil before the first) and a channel
// closed when a newer one exists.
func (l *live) latest() (*Snapshot, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.snap, l.changed
}

// read takes one snapshot of the lab.
func (l *live) read(ctx context.Context) *Snapshot {
	now := time.Now()
	s := &Snapshot{Lab: l.name, Time: now.UTC(), Links: []LinkLoad{}, Failed: []string{}, Impairments: []lab.Impairment{}}
	st, err := l.store.Get(l.name)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	s.Phase = st.Phase
	if st.Phase != lab.PhaseUp {
		s.Error = fmt.Sprintf("lab %s is %s", l.name, st.Phase)
		return s
	}
	if now.Sub(l.downAt) >= inspectEvery {
		down := graph.InterfacesDown(ctx, l.store, st)
		l.mu.Lock()
		l.down = down // restate reads it
		l.mu.Unlock()
		l.downAt = now
	}
	g := graph.FromTopology(st.Topology)
	var ports []switchd.PortStats
	if st.DataPlane.DataPlane == switchd.DataPlaneBPF {
		if ports, err = l.store.Control(st).Stats(); err != nil {
			s.Error = err.Error()
		} else {
			g.SetCounters(st.Topology, ports)
			s.Counters = true
		}
		// Reading every port takes a while: take the record as it is
		// now, so a link that failed meanwhile is not shown up again.
		if fresh, err := l.store.Get(l.name); err == nil && fresh.Phase == lab.PhaseUp {
			st = fresh
		}
	}
	g.SetState(switchd.FailedSet(st.Failed), l.down)
	if st.Impairments != nil {
		s.Impairments = st.Impairments
	}
	s.Failed = append(s.Failed, lab.FailedLinks(st)...)
	queues := queuesOf(ports)
	dt := now.Sub(l.prevAt).Seconds()
	next := map[string][2]uint64{}
	for i, gl := range g.Links {
		tl := &st.Topology.Links[i]
		ll := LinkLoad{Name: gl.Name, A: gl.A, B: gl.B, State: gl.State}
		for side, d := range []*graph.Direction{gl.Up, gl.Down} {
			dl := DirectionLoad{RateBps: st.EffectiveParams(tl, topology.Side(side)).RateBps}
			if d != nil {
				dl.Packets, dl.Bytes = d.Packets, d.Bytes
				dl.DropQueue, dl.DropCorrupt, dl.DropDown, dl.Drops = d.DropQueue, d.DropLoss, d.DropDown, d.Drops
			}
			q := queues[portKey{tl.End(topology.Side(side)).Node, tl.Name}]
			dl.QueueBytes, dl.MaxQueueBytes = q[0], q[1]
			// The first reading, and a counter that went back (reset),
			// have no load.
			if p, ok := l.prev[gl.Name]; ok && dt > 0 && dl.Bytes >= p[side] {
				dl.LoadBps = float64(dl.Bytes-p[side]) * 8 / dt
				if dl.RateBps > 0 {
					dl.Utilization = dl.LoadBps / float64(dl.RateBps)
				}
			}
			if side == 0 {
				ll.Up = dl
			} else {
				ll.Down = dl
			}
		}
		next[gl.Name] = [2]uint64{ll.Up.Bytes, ll.Down.Bytes}
		s.Links = append(s.Links, ll)
	}
	l.prev, l.prevAt = next, now
	return s
}

// stateEvery is how often the lab's record is read between readings of
// the counters: a link failed or impaired shows on the page at once,
// however long reading every port takes.
const stateEvery = 100 * time.Millisecond

// watchState publishes the newest snapshot again, with the links' states
// and impairments as the lab's record has them, whenever the record says
// something else than the snapshot.
func (l *live) watchState(ctx context.Context) {
	t := time.NewTicker(stateEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st, err := l.store.Get(l.name)
		if err != nil || st.Phase != lab.PhaseUp {
			continue // the next reading of the counters says so
		}
		snap, _ := l.latest()
		if snap == nil || snap.Error != "" || stateKey(snap.Failed, snap.Impairments) == stateKey(lab.FailedLinks(st), st.Impairments) {
			continue
		}
		l.publish(l.restate(snap, st))
	}
}

func stateKey(failed []string, ims []lab.Impairment) string {
	return fmt.Sprint(failed, ims)
}

// restate is snap with the links' states, rates and impairments of st.
func (l *live) restate(snap *Snapshot, st *lab.State) *Snapshot {
	s := *snap
	s.Time = time.Now().UTC()
	s.Failed = append([]string{}, lab.FailedLinks(st)...)
	s.Impairments = []lab.Impairment{}
	if st.Impairments != nil {
		s.Impairments = st.Impairments
	}
	g := graph.FromTopology(st.Topology)
	l.mu.Lock()
	g.SetState(switchd.FailedSet(st.Failed), l.down)
	l.mu.Unlock()
	s.Links = make([]LinkLoad, len(snap.Links))
	for i, ll := range snap.Links {
		tl := &st.Topology.Links[i]
		ll.State = g.Links[i].State
		ll.Up.RateBps = st.EffectiveParams(tl, topology.SideA).RateBps
		ll.Down.RateBps = st.EffectiveParams(tl, topology.SideB).RateBps
		s.Links[i] = ll
	}
	return &s
}

type portKey struct{ node, link string }

// queuesOf gives each sending port its egress queue now and its maximum.
func queuesOf(ports []switchd.PortStats) map[portKey][2]uint64 {
	out := map[portKey][2]uint64{}
	for _, p := range ports {
		var now uint64
		if p.Qdisc != nil {
			now = uint64(p.Qdisc.BacklogBytes)
		}
		out[portKey{p.Switch, p.Link}] = [2]uint64{now, p.Queue.MaxBacklog}
	}
	return out
}

// errLabGone is what a control request gets when the lab went away.
var errLabGone = errors.New("the lab is not up any more")
