// Package clock is the time source of the host agent's transport: a Clock
// with Now and timers, in two implementations that share one timer heap.
//
//   - Virtual is a deterministic discrete-event scheduler: time jumps from
//     one timer to the next, ties fire in the order they were scheduled, so
//     a run is a pure function of its inputs. The sim package builds its
//     network on it.
//   - Loop is a real-time event loop: one goroutine runs every timer
//     callback and every function posted to it with Post (for example by a
//     socket reader goroutine), so the code it drives needs no locks.
//
// Both honour the same contract, which is what lets the same transport run
// on either: timer callbacks never run concurrently with each other or with
// anything else on the loop, and Now, AfterFunc, Timer.Reset and Timer.Stop
// may only be called from the loop (from a callback, or before Run).
package clock
