package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/orchestrator/results"
	"github.com/ftlab/ftlab/orchestrator/scenario"
	"github.com/ftlab/ftlab/switchd"
)

// injector applies a run's fault timeline to a lab's data plane.
type injector struct {
	ctl    *switchd.Lab
	failed map[int]bool
}

// apply carries out one action. Link failures act at once in the data
// plane; the switches reconverge after the lab's convergence delay, in the
// background, as BGP would.
func (in *injector) apply(ctx context.Context, a scenario.Action) error {
	link, ok := linkNamed(in.ctl.Topo, a.Link)
	if !ok {
		return fmt.Errorf("fault names link %q, which the lab does not have", a.Link)
	}
	switch a.Op {
	case scenario.OpSetDrop, scenario.OpClearDrop:
		p := a.Drop
		if a.Op == scenario.OpClearDrop {
			p = 0
		}
		for _, s := range a.Direction.Sides() {
			if err := in.ctl.SetCorruption(link, s, p); err != nil {
				return err
			}
		}
		return nil
	case scenario.OpLinkDown, scenario.OpLinkUp:
		up := a.Op == scenario.OpLinkUp
		previous := copySet(in.failed)
		if up {
			delete(in.failed, link.ID)
		} else {
			in.failed[link.ID] = true
		}
		if err := in.ctl.SetLinkUp(link, up); err != nil {
			return err
		}
		next := copySet(in.failed)
		go func() {
			select {
			case <-ctx.Done():
				return
			case <-time.After(in.ctl.Config.ConvergenceDelay):
			}
			_ = in.ctl.Reconverge(ctx, previous, next)
		}()
		return nil
	case scenario.OpSetRate, scenario.OpRestoreRate:
		for _, s := range a.Direction.Sides() {
			if err := in.ctl.SetRate(link, s, a.RateBps); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unknown fault operation %q", a.Op)
}

// linkNamed finds a link of t by its name.
func linkNamed(t *topology.Topology, name string) (*topology.Link, bool) {
	for i := range t.Links {
		if t.Links[i].Name == name {
			return &t.Links[i], true
		}
	}
	return nil, false
}

func copySet(m map[int]bool) map[int]bool {
	out := make(map[int]bool, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// undo, once the timeline has stopped, ends every fault of it that may
// still be in effect: drops cleared and rates restored where it set them,
// links it took down brought up and the routes reconverged at once.
// Faults without a duration last until the end of the run, and a lab
// runs many runs.
func (in *injector) undo(timeline []scenario.Action) error {
	t := in.ctl.Topo
	type key struct {
		link int
		side topology.Side
		op   scenario.Op
	}
	done := map[key]bool{}
	var errs []error
	for _, a := range timeline {
		link, ok := linkNamed(t, a.Link)
		if !ok {
			continue
		}
		for _, side := range a.Direction.Sides() {
			k := key{link.ID, side, a.Op}
			if done[k] {
				continue
			}
			done[k] = true
			switch a.Op {
			case scenario.OpSetDrop:
				errs = append(errs, in.ctl.SetCorruption(link, side, 0))
			case scenario.OpSetRate:
				errs = append(errs, in.ctl.SetRate(link, side, 0))
			}
		}
	}
	if len(in.failed) > 0 {
		previous := copySet(in.failed)
		for id := range previous {
			errs = append(errs, in.ctl.SetLinkUp(&t.Links[id], true))
		}
		in.failed = map[int]bool{}
		errs = append(errs, in.ctl.Reconverge(context.Background(), previous, in.failed))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("end the run's faults: %w", err)
	}
	return nil
}

// runTimeline applies actions at their offsets from start until ctx ends.
func (in *injector) runTimeline(ctx context.Context, start time.Time, actions []scenario.Action, record func(results.FaultEvent)) {
	for _, a := range actions {
		wait := time.Until(start.Add(a.At))
		if wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
		ev := results.FaultEvent{At: a.At, Action: a}
		if err := in.apply(ctx, a); err != nil {
			ev.Error = err.Error()
		}
		ev.Applied = time.Since(start)
		record(ev)
	}
}
