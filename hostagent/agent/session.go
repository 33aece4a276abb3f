package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ftlab/ftlab/hostagent/control"
)

// StartConfigured starts an in-process agent (Start) and configures it
// with cfg, failing if the agent refuses the configuration.
func StartConfigured(ctx context.Context, opts Options, cfg *control.Configure) (*Handle, error) {
	h, err := Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	if err := h.Do(cfg); err != nil {
		_ = h.Stop()
		return nil, errors.Join(err, h.Wait())
	}
	ev := <-h.Events()
	if e, ok := ev.(*control.Error); ok {
		_ = h.Stop()
		return nil, errors.Join(errors.New(e.Error), h.Wait())
	}
	return h, nil
}

// Listen hands every event of the agent to onEvent until ctx ends, then
// stops the agent through the protocol, so that it ends cleanly and still
// reports its flows and final stats (onEvent gets those too), and returns
// how it ended. The agent should not share ctx: cancelled first, it would
// end with "context canceled" instead.
func (h *Handle) Listen(ctx context.Context, onEvent func(control.Event)) error {
	stopped := false
	for {
		var ev control.Event
		var ok bool
		select {
		case ev, ok = <-h.Events():
		case <-ctx.Done():
			if !stopped {
				stopped = true
				_ = h.Stop()
			}
			ev, ok = <-h.Events()
		}
		if !ok {
			return h.Wait()
		}
		onEvent(ev)
	}
}

// SendAll sends count messages of size bytes to the agent at to, all at
// once, each on its own flow, and waits until every one is acknowledged,
// an error event arrives, or timeout passes (or ctx ends); then it stops
// the agent and waits for it. Every event, the agent's last flow records
// included, goes to onEvent.
func (h *Handle) SendAll(ctx context.Context, to string, size uint64, count int, timeout time.Duration, onEvent func(control.Event)) error {
	defer h.Wait()
	for i := range count {
		if err := h.Do(&control.Send{Msg: int64(i), To: to, Bytes: size}); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	sent := map[int64]bool{}
	var failure error
	for len(sent) < count && failure == nil {
		select {
		case <-ctx.Done():
			failure = fmt.Errorf("%d of %d messages acknowledged after %v", len(sent), count, timeout)
		case ev, ok := <-h.Events():
			if !ok {
				failure = fmt.Errorf("the agent ended with %d of %d messages acknowledged", len(sent), count)
				break
			}
			onEvent(ev)
			switch e := ev.(type) {
			case *control.Sent:
				sent[e.Msg] = true
			case *control.Error:
				failure = errors.New(e.Error)
			}
		}
	}
	_ = h.Stop()
	for ev := range h.Events() {
		onEvent(ev)
	}
	return errors.Join(failure, h.Wait())
}
