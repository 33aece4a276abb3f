// Package calibrate finds the highest link rate at which this machine runs
// a scenario with an OK fidelity verdict: the rate below which the
// emulated network, not the CPU, sets the numbers.
//
// A search runs the scenario's cells (first seed only) at one rate per
// trial: it doubles or halves from a start rate until it has an OK rate
// and a rate that is not OK, bisects between them (geometrically) to the
// asked precision, and confirms the result with extra trials, stepping
// down when one of them is not OK. A trial is OK when every run completes
// and every fidelity verdict is OK.
//
// Results are kept in a cache file, keyed by the machine, the ftlab
// version and a fingerprint of the scenario that leaves its rate out, so
// scenarios saying rate: auto run at the calibrated rate without
// calibrating again.
package calibrate
