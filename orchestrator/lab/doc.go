// Package lab owns the lifecycle of a named lab: the run directory that
// records what ftlab made, the lock that serializes operations on one lab,
// and up, down, status and cleanup.
//
// Ownership is by name and by record. Every namespace of lab L is named
// "ftlab-L-<node>", and the planned list is written to
// /run/ftlab/L/state.json before the first one is made, so down and cleanup
// remove exactly what ftlab made, even after the process that made it was
// killed. Lab names contain no '-', so one lab's prefix never matches
// another's namespaces.
package lab
