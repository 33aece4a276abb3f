package agent

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ftlab/ftlab/hostagent/control"
)

// Handle is an agent running in this process (Serve on a goroutine),
// driven through the control protocol over pipes: exactly what a process
// agent sees on its stdin and stdout, without the process. Tests and the
// binary's human commands use it.
type Handle struct {
	// Ready is the agent's ready event.
	Ready control.Ready

	cmds   *io.PipeWriter
	events chan control.Event
	done   chan error
	err    error
}

// Start starts an agent and waits for its ready event. Stop it with Stop
// (or by cancelling ctx) and collect it with Wait.
func Start(ctx context.Context, opts Options) (*Handle, error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h := &Handle{cmds: inW, events: make(chan control.Event, 1024), done: make(chan error, 1)}
	go func() {
		err := Serve(ctx, inR, outW, opts)
		_ = outW.Close()
		_ = inR.Close()
		h.done <- err
	}()
	go func() {
		defer close(h.events)
		lr := control.NewLineReader(outR, control.MaxEventLine)
		for {
			line, err := lr.Next()
			if err != nil {
				_ = outR.CloseWithError(io.EOF)
				return
			}
			ev, err := control.DecodeEvent(line)
			if err != nil {
				ev = &control.Error{Error: fmt.Sprintf("agent sent an undecodable event: %v", err), Input: control.Shorten(line)}
			}
			h.events <- ev
		}
	}()
	ev, ok := <-h.events
	switch e := ev.(type) {
	case *control.Ready:
		h.Ready = *e
		return h, nil
	case *control.Error:
		_ = inW.Close()
		h.drain()
		return nil, errors.Join(errors.New(e.Error), h.Wait())
	}
	_ = inW.Close()
	h.drain()
	if !ok {
		return nil, errors.Join(errors.New("agent: ended before it was ready"), h.Wait())
	}
	return nil, errors.Join(fmt.Errorf("agent: first event %q, want ready", ev.EventName()), h.Wait())
}

// Do sends a command.
func (h *Handle) Do(c control.Command) error {
	if err := control.WriteCommand(h.cmds, c); err != nil {
		return fmt.Errorf("agent: command %s: %w", c.CommandName(), err)
	}
	return nil
}

// WriteLine sends a raw line (tests of the decoder).
func (h *Handle) WriteLine(line string) error {
	_, err := io.WriteString(h.cmds, line+"\n")
	return err
}

// Events delivers the agent's events; it is closed after the last one.
func (h *Handle) Events() <-chan control.Event { return h.events }

// Stop asks the agent to stop (it then emits its flow records and final
// stats, and its events channel closes).
func (h *Handle) Stop() error {
	err := h.Do(&control.Stop{})
	_ = h.cmds.Close()
	return err
}

// Wait waits for the agent to end and returns Serve's error. Events not
// yet read are discarded.
func (h *Handle) Wait() error {
	h.drain()
	if h.done != nil {
		h.err = <-h.done
		h.done = nil
	}
	return h.err
}

func (h *Handle) drain() {
	go func() {
		for range h.events {
		}
	}()
}
