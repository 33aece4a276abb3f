package scheme

import (
	"cmp"
	"slices"

	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/hostagent/wire"
)

// PSN-PATH constants of this implementation (see psnpathScheme).
const (
	psnTrialMaxIntervals = 8 // an unjudged trial is kept after this many intervals
	psnSilenceSRTTs      = 2
)

// psnpathScheme is PSN-PATH (SIGCOMM '26): K logical paths, PSN p on path
// (p + offset) mod A where A is the number of active paths, path i on EV
// (UDP source port) base + i; the receiver NACKs a PSN only when a later
// packet of the same path and the same mapping epoch has arrived without
// it (paths are FIFO), never for cross-path reordering; a path manager
// scores each path and replaces or removes bad ones (DT-Switch). Every
// change of the mapping starts an epoch whose first PSN (FPSN) travels in
// each DATA packet (wire.PathMap), so the receiver never compares packets
// sent under different mappings.
//
// The same sender with a receiver that NACKs every gap in the global PSN
// order is the gapnack baseline (a multipath IRN / MP-CX5 in miniature);
// its sender believes every NACK, as such transports do.
//
// What the paper leaves open, and what is done here:
//
//   - offset is -FPSN: an epoch's first PSN goes on the first active path.
//     Initial EVs are base + i for a random per-flow base (base_ev fixes
//     it); replacement EVs are random, distinct from the active ones.
//   - The receiver checks the predecessor p-A only (MaxWalk 1, as the
//     paper describes). MaxWalk > 1 walks further back (p-2A, ...) while
//     PSNs are missing and in the epoch, catching bursts on one path; each
//     missing PSN is still NACKed once, by the first later arrival on its
//     path. Retransmissions carry no mapping and trigger no check; a lost
//     retransmission, or a path's last packets before a remap or at the
//     end of the flow, are left to the RTO, as the paper says.
//   - Scores. The paper's score is ACKs - beta x NACKs per path; its
//     thresholds are not given, and raw counts depend on rate and interval
//     length, so the score here is divided by the packets it counts
//     (PathScore, which PSNPathParams documents with the defaults and what
//     they mean in loss rates). Losses are accepted NACKs (their trigger's
//     EV names the path) and RTO losses on the path's EV. Counters
//     accumulate until a path has MinSamples of them, then it is judged at
//     the next evaluation and they restart; a path whose losses alone put
//     it below Explore, whatever its missing samples would say, is judged
//     at once (so a bad path is caught at the rate its losses come, not at
//     the rate MinSamples allows). A path that has heard nothing
//     for Interval + 2*SRTT while packets were outstanding on it scores 0
//     (failed paths produce no NACKs: nothing arrives behind a lost
//     packet). Only ACKs and NACKs for copies sent on the path's current EV
//     count.
//   - DT-Switch, evaluated at the first ACK after each Interval: if the
//     worst path judged since the last evaluation is below Remove it
//     leaves the active set (not the last one); if below Explore its EV is
//     replaced by a random candidate on trial. When the candidate is
//     judged, it is kept only if it scores better than the old EV did,
//     else the old EV comes back (roll back). With paths removed and the
//     rest healthy, a random EV is added back on trial and removed again
//     if it scores below Explore. Every path judged in an interval is
//     acted on, worst first, each with its own trial: a few random EVs
//     often share a physical path (k=4 paths of a k=4 fat tree's 4), and
//     one trial at a time would leave the others on a failing link until
//     the first trial is judged. A path is added back only when no trial
//     runs.
//   - Retransmissions go on the best-scoring active path.
//   - On RTO the paths whose current EV timed out get new random EVs (as
//     every scheme here rethinks its path on RTO; KeepPathOnRTO keeps
//     them), besides counting as losses in their scores.
type psnpathScheme struct {
	cfg PSNPathParams
	gap bool
}

func (s psnpathScheme) Name() string {
	if s.gap {
		return "gapnack"
	}
	return "psnpath"
}

func (s psnpathScheme) NewSender(env transport.SenderEnv) transport.SenderScheme {
	return newPSNPathSender(env, s.cfg, s.gap)
}

func (s psnpathScheme) NewReceiver(env transport.ReceiverEnv, first *wire.Packet) transport.ReceiverScheme {
	bm := newBitmap(s.cfg.BitmapBits, wire.InitialPSN(first.Flow))
	if s.cfg.NoFastRetx {
		return &silentReceiver{bm: bm}
	}
	if s.gap {
		return &gapReceiver{env: env, bm: bm, high: wire.InitialPSN(first.Flow) - 1}
	}
	return &psnpathReceiver{env: env, bm: bm, walk: s.cfg.MaxWalk, noFPSN: s.cfg.NoFPSN}
}

// ppath is the sender's state of one path slot.
type ppath struct {
	ev     uint16
	active bool

	acks, losses int        // since the path was last judged
	waiting      bool       // sent since its last feedback
	waitingSince clock.Time // when that started
	q            float64    // last judged score
	judged       bool       // q is meaningful
	trial        *psnTrial  // the path is on probation
}

// psnTrial is a path on probation.
type psnTrial struct {
	add       bool    // an added path (else a replaced EV)
	oldEV     uint16  // replaced: the EV to roll back to
	oldQ      float64 // replaced: the score to beat
	intervals int
}

type psnpathSender struct {
	env   transport.SenderEnv
	cfg   PSNPathParams
	gap   bool
	slots []ppath
	order []int  // active slots in mapping order
	fpsn  uint32 // current epoch's first PSN

	deadline clock.Time
	trials   int // slots on probation
	h        history
}

func newPSNPathSender(env transport.SenderEnv, cfg PSNPathParams, gap bool) *psnpathSender {
	s := &psnpathSender{env: env, cfg: cfg, gap: gap, slots: make([]ppath, cfg.Paths)}
	base := uint16(cfg.BaseEV)
	if cfg.BaseEV < 0 {
		base = uint16(env.Rand().Uint32())
	}
	evs := make([]uint16, cfg.Paths)
	for i := range s.slots {
		s.slots[i] = ppath{ev: base + uint16(i), active: true}
		evs[i] = s.slots[i].ev
	}
	now := env.Now()
	s.h = newHistory(evs, now)
	s.deadline = now.Add(cfg.Interval)
	s.newEpoch()
	return s
}

// newEpoch starts a mapping at the next new PSN over the active slots.
func (s *psnpathSender) newEpoch() {
	s.order = s.order[:0]
	for i := range s.slots {
		if s.slots[i].active {
			s.order = append(s.order, i)
		}
	}
	s.fpsn = s.env.NextPSN()
}

// slotOf returns the slot of psn under the current mapping; psn must not
// precede the epoch.
func (s *psnpathSender) slotOf(psn uint32) int {
	return s.order[(psn-s.fpsn)%uint32(len(s.order))]
}

// activeSlot returns the active slot currently on ev, or -1.
func (s *psnpathSender) activeSlot(ev uint16) int {
	for _, i := range s.order {
		if s.slots[i].ev == ev {
			return i
		}
	}
	return -1
}

func (s *psnpathSender) SubflowBits() uint8       { return 0 }
func (s *psnpathSender) DataEV(psn uint32) uint16 { return s.slots[s.slotOf(psn)].ev }

func (s *psnpathSender) PathMap(uint32) wire.PathMap {
	return wire.NewPathMap(len(s.order), s.fpsn)
}

// RetransmitEV sends a retransmission on the best judged active path,
// else on the path psn would take now.
func (s *psnpathSender) RetransmitEV(psn uint32, _ transport.Cause) uint16 {
	best := -1
	for _, i := range s.order {
		if sl := &s.slots[i]; sl.judged && (best < 0 || sl.q > s.slots[best].q) {
			best = i
		}
	}
	if best < 0 {
		best = s.order[(psn-s.fpsn)%uint32(len(s.order))]
	}
	return s.slots[best].ev
}

func (s *psnpathSender) OnSent(p transport.SentPacket) {
	i := s.activeSlot(p.EV)
	if i < 0 {
		return
	}
	s.h.sent(i)
	if sl := &s.slots[i]; !sl.waiting {
		sl.waiting, sl.waitingSince = true, p.At
	}
}

func (s *psnpathSender) OnFeedback(f transport.Feedback) {
	if i := s.activeSlot(f.EV); i >= 0 {
		s.slots[i].acks++
		s.slots[i].waiting = false
	}
	if f.At >= s.deadline {
		s.manage(f.At)
	}
}

func (s *psnpathSender) OnNACK(n transport.NACKInfo) {
	accepted := n.Accepted
	if s.gap && !accepted {
		// A global-gap receiver's NACK names a PSN that may be on another
		// path; such transports retransmit on it all the same.
		accepted = s.env.DeclareLost(n.PSN, transport.CauseNACK)
	}
	if !accepted {
		return
	}
	i := s.activeSlot(n.TriggerEV)
	if s.gap && wire.SeqLEq(s.fpsn, n.PSN) && wire.SeqLess(n.PSN, s.env.NextPSN()) {
		i = s.slotOf(n.PSN) // the trigger's path is not the lost packet's
	}
	if i >= 0 {
		s.slots[i].losses++
	}
}

func (s *psnpathSender) OnRTO(lost []transport.LostPacket) {
	var timedOut []int
	for _, p := range lost {
		if i := s.activeSlot(p.EV); i >= 0 {
			s.slots[i].losses++
			if !containsInt(timedOut, i) {
				timedOut = append(timedOut, i)
			}
		}
	}
	if s.cfg.KeepPathOnRTO || len(timedOut) == 0 {
		return
	}
	for _, i := range timedOut {
		s.endTrial(i) // a candidate that timed out is not kept either way
		s.setEV(i, s.randomEV(), "rto")
		s.resetCounts(i)
	}
	s.newEpoch()
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// randomEV draws an EV no active slot uses.
func (s *psnpathSender) randomEV() uint16 {
	for {
		ev := uint16(s.env.Rand().Uint32())
		if s.activeSlot(ev) < 0 {
			return ev
		}
	}
}

func (s *psnpathSender) setEV(i int, ev uint16, reason string) {
	old := s.slots[i].ev
	s.slots[i].ev = ev
	s.env.NoteReroute(i, old, ev, reason)
	s.h.change(i, s.env.Now(), ev, reason)
}

func (s *psnpathSender) resetCounts(i int) {
	sl := &s.slots[i]
	sl.acks, sl.losses, sl.waiting, sl.judged = 0, 0, false, false
}

// judge scores slot i if it has enough evidence; it reports whether it
// did. That is MinSamples ACKs and losses, or fewer when the losses alone
// already put the path below Explore: even if every sample still missing
// were an ACK it would score q, which is what it gets.
func (s *psnpathSender) judge(i int, now clock.Time) bool {
	sl := &s.slots[i]
	best := PathScore(max(s.cfg.MinSamples-sl.losses, sl.acks), sl.losses, s.cfg.Beta)
	switch n := sl.acks + sl.losses; {
	case n >= s.cfg.MinSamples:
		sl.q = PathScore(sl.acks, sl.losses, s.cfg.Beta)
	case sl.losses > 0 && best < s.cfg.Explore:
		sl.q = best
	case sl.waiting && now.Sub(sl.waitingSince) >= s.cfg.Interval+psnSilenceSRTTs*s.env.SRTT():
		sl.q = 0 // silent: as bad as a path gets without NACKs
	default:
		return false
	}
	sl.acks, sl.losses, sl.judged = 0, 0, true
	if sl.waiting {
		sl.waitingSince = now // silence is judged once per interval
	}
	return true
}

// startTrial puts slot i on probation.
func (s *psnpathSender) startTrial(i int, t *psnTrial) {
	if s.slots[i].trial == nil {
		s.trials++
	}
	s.slots[i].trial = t
}

// endTrial ends slot i's probation, if it is on it.
func (s *psnpathSender) endTrial(i int) {
	if s.slots[i].trial != nil {
		s.slots[i].trial = nil
		s.trials--
	}
}

// deactivate takes slot i out of the active set.
func (s *psnpathSender) deactivate(i int, now clock.Time, reason string) {
	sl := &s.slots[i]
	sl.active = false
	s.h.change(i, now, sl.ev, reason)
	s.env.NoteReroute(i, sl.ev, sl.ev, reason)
}

// manage is DT-Switch, once per interval: trials are decided, then every
// settled path judged since the last evaluation is removed (below Remove,
// while another settled path remains) or explored (below Explore), worst
// first; each path has its own trial, so paths that share a bad link are
// handled together. With every judged path healthy and no trial running,
// a removed path is added back on trial.
func (s *psnpathSender) manage(now clock.Time) {
	s.deadline = now.Add(s.cfg.Interval)
	fresh := make([]bool, len(s.slots))
	for _, i := range s.order {
		fresh[i] = s.judge(i, now)
	}
	if s.cfg.NoPathManager {
		return
	}
	changed := false
	var judged []int // settled paths judged now
	for _, i := range s.order {
		sl := &s.slots[i]
		t := sl.trial
		if t == nil {
			if fresh[i] {
				judged = append(judged, i)
			}
			continue
		}
		t.intervals++
		switch {
		case fresh[i] && t.add && sl.q < s.cfg.Explore:
			s.endTrial(i)
			s.deactivate(i, now, "rollback")
			changed = true
		case fresh[i] && !t.add && sl.q <= t.oldQ:
			q := t.oldQ
			s.endTrial(i)
			s.setEV(i, t.oldEV, "rollback")
			s.resetCounts(i)
			sl.q, sl.judged = q, true
			changed = true
		case fresh[i] || t.intervals >= psnTrialMaxIntervals:
			s.endTrial(i) // kept
		}
	}
	slices.SortStableFunc(judged, func(a, b int) int { return cmp.Compare(s.slots[a].q, s.slots[b].q) })
	settled := 0
	for _, i := range s.order {
		if s.slots[i].active && s.slots[i].trial == nil {
			settled++
		}
	}
	healthy := true
	for _, i := range judged {
		switch q := s.slots[i].q; {
		case q < s.cfg.Remove && settled > 1:
			s.deactivate(i, now, "remove")
			settled--
			changed = true
		case q < s.cfg.Explore:
			s.startTrial(i, &psnTrial{oldEV: s.slots[i].ev, oldQ: q})
			s.setEV(i, s.randomEV(), "explore")
			s.resetCounts(i)
			settled--
			changed = true
		}
		healthy = healthy && s.slots[i].q >= s.cfg.Explore
	}
	if !changed && healthy && s.trials == 0 && len(s.order) < len(s.slots) {
		for i := range s.slots {
			if !s.slots[i].active {
				s.slots[i].active = true
				s.setEV(i, s.randomEV(), "add")
				s.resetCounts(i)
				s.startTrial(i, &psnTrial{add: true})
				changed = true
				break
			}
		}
	}
	if changed {
		s.newEpoch()
	}
}

// StateBytes: per slot its EV (2 B), ACK and loss counts (2 B each), the
// last score (1 B, fixed point), the silence start (4 B), its trial's old
// EV and score and interval count (4 B) and the active and trial bits; per
// flow FPSN (4 B), the active and trial counts (1 B each), the deadline
// (4 B).
func (s *psnpathSender) StateBytes() int {
	return len(s.slots)*(2+2+2+1+4+4) + (2*len(s.slots)+7)/8 + 4 + 1 + 1 + 4
}

func (s *psnpathSender) Close()                              {}
func (s *psnpathSender) Subflows() []transport.SubflowRecord { return s.h.Subflows() }

// psnpathReceiver is PSN-PATH's path recognizer: one bitmap per flow and
// the mapping each DATA packet carries.
type psnpathReceiver struct {
	env     transport.ReceiverEnv
	bm      bitmap
	walk    int // predecessors to examine; negative: to the epoch start
	noFPSN  bool
	missing []uint32
}

func (r *psnpathReceiver) OnData(p *wire.Packet) {
	dup := r.bm.state(p.PSN) == received
	r.bm.mark(p.PSN)
	n := uint32(p.Path.Paths())
	if dup || n == 0 || p.Flags&wire.FlagRetx != 0 {
		return // no mapping (retransmissions), or already judged
	}
	start := p.Path.FPSN(p.PSN)
	if r.noFPSN {
		start = p.PSN - 1<<30 // as if the epoch had always been
	}
	r.missing = r.missing[:0]
	q := p.PSN - n
	for k := 0; (r.walk < 0 || k < r.walk) && wire.SeqLEq(start, q) && wire.SeqLess(q, p.PSN); k++ {
		if r.bm.state(q) != missing {
			break // received (it exposed what lies below) or slid past
		}
		r.missing = append(r.missing, q)
		q -= n
	}
	if len(r.missing) > 0 {
		r.env.NACK(p, r.missing)
	}
}

func (r *psnpathReceiver) OnProbe(*wire.Packet) {}
func (r *psnpathReceiver) StateBytes() int      { return r.bm.stateBytes() }

// gapReceiver is the gapnack baseline's receiver: any packet beyond the
// highest PSN seen NACKs every missing PSN it jumps over, whichever path
// they took. Cross-path reordering therefore looks like loss.
type gapReceiver struct {
	env     transport.ReceiverEnv
	bm      bitmap
	high    uint32 // highest PSN seen
	missing []uint32
}

func (r *gapReceiver) OnData(p *wire.Packet) {
	r.bm.mark(p.PSN)
	if !wire.SeqLess(r.high, p.PSN) {
		return
	}
	r.missing = r.missing[:0]
	from := r.high + 1
	if p.PSN-from > r.bm.size {
		from = p.PSN - r.bm.size // older PSNs are below the window: unknown
	}
	for q := from; q != p.PSN; q++ {
		if r.bm.state(q) == missing {
			r.missing = append(r.missing, q)
		}
	}
	r.high = p.PSN
	if len(r.missing) > 0 {
		r.env.NACK(p, r.missing)
	}
}

func (r *gapReceiver) OnProbe(*wire.Packet) {}

// StateBytes: the bitmap and the highest PSN.
func (r *gapReceiver) StateBytes() int { return r.bm.stateBytes() + 4 }

// silentReceiver is the receiver of the no_fast_retx ablation: it keeps
// the bitmap a real receiver would (its state is the same) and NACKs
// nothing.
type silentReceiver struct{ bm bitmap }

func (r *silentReceiver) OnData(p *wire.Packet) { r.bm.mark(p.PSN) }
func (r *silentReceiver) OnProbe(*wire.Packet)  {}
func (r *silentReceiver) StateBytes() int       { return r.bm.stateBytes() }
