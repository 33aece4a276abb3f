package fabric

import (
	"context"
	"errors"
	"time"

	"github.com/ftlab/ftlab/internal/nsutil"
)

// Remove deletes the named namespaces, and with them every interface, route
// and neighbour entry in them. Names that do not exist are skipped, so Remove
// is safe to call twice. It tries every name and reports every failure.
func Remove(namespaces []string) error {
	var errs []error
	for _, name := range namespaces {
		if err := nsutil.Delete(name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Cleanup says how the kernel's background destruction of removed
// namespaces went: how long RemoveWait waited for it and whether it
// finished within the bound.
type Cleanup struct {
	Wait time.Duration `json:"wait"`
	Done bool          `json:"done"`
}

// RemoveWait is Remove, then a wait of at most timeout for the kernel to
// destroy the namespaces (nsutil.Drain, twice: see below). The kernel does that in the
// background while holding locks a new build needs, so a build right after
// a Remove would pay for it; after RemoveWait it does not. If the probe
// cannot be made, it removes without waiting.
func RemoveWait(ctx context.Context, namespaces []string, timeout time.Duration) (Cleanup, error) {
	d, derr := nsutil.NewDrain()
	err := Remove(namespaces)
	if derr != nil {
		return Cleanup{}, errors.Join(err, derr)
	}
	start := time.Now()
	_, done, werr := d.Wait(ctx, timeout)
	if done && werr == nil {
		// The probe's interfaces go early in its batch's cleanup; the
		// batch goes on (every subsystem's exit, most under RTNL). A
		// second probe, released now, is cleaned in the next batch,
		// after all of that.
		_, done, werr = Settle(ctx, timeout-time.Since(start))
	}
	return Cleanup{Wait: time.Since(start), Done: done}, errors.Join(err, werr)
}

// Settle waits (at most timeout) until the kernel has finished destroying
// every namespace deleted before it was called.
func Settle(ctx context.Context, timeout time.Duration) (time.Duration, bool, error) {
	d, err := nsutil.NewDrain()
	if err != nil {
		return 0, false, err
	}
	return d.Wait(ctx, timeout)
}
