package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Pool is a set of event loops, each running on its own locked OS thread,
// that the agents of a lab share: one loop per core serves all the hosts
// of a lab with a handful of threads, where a loop per host made every
// paced departure and every arrival wake a thread of its own.
type Pool struct {
	loops  []*Loop
	cancel context.CancelFunc
	ran    []chan error

	mu   sync.Mutex
	next int
}

// NewPool starts n loops (n >= 1). Close the pool once every agent on it
// has returned.
func NewPool(n int) (*Pool, error) {
	if n < 1 {
		return nil, fmt.Errorf("agent: pool of %d loops", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Pool{cancel: cancel}
	for range n {
		l, err := NewLoop()
		if err != nil {
			_ = p.Close()
			return nil, err
		}
		ran := make(chan error, 1)
		go func() { ran <- l.Run(ctx) }()
		p.loops = append(p.loops, l)
		p.ran = append(p.ran, ran)
	}
	return p, nil
}

// Len is the number of loops.
func (p *Pool) Len() int { return len(p.loops) }

// Loop returns the loop for the next agent: each in turn, so agents
// started one after another spread evenly. Safe from any goroutine.
func (p *Pool) Loop() *Loop {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.loops[p.next%len(p.loops)]
	p.next++
	return l
}

// Stats returns every loop's counters (each read on its loop).
func (p *Pool) Stats() []LoopStats {
	out := make([]LoopStats, len(p.loops))
	for i, l := range p.loops {
		l.Do(func() { out[i] = l.Stats() })
	}
	return out
}

// Close stops the loops and releases them.
func (p *Pool) Close() error {
	p.cancel()
	var errs []error
	for i, l := range p.loops {
		if err := <-p.ran[i]; err != nil && !errors.Is(err, context.Canceled) {
			errs = append(errs, err)
		}
		errs = append(errs, l.Close())
	}
	p.loops, p.ran = nil, nil
	return errors.Join(errs...)
}
