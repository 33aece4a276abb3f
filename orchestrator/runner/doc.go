// Package runner executes a scenario: for every cell of its comparison
// matrix it builds the cell's lab, and for every repetition it starts the
// host agents, releases the workload's messages on time (or when the
// messages they depend on have been delivered), injects the fault
// timeline, waits for every message or the cell's timeout, and records
// what happened: per-message records from the agents and per-port
// counters from the switches, written as package results' raw files as
// each run ends. At the end it has package report render the summary,
// report.md and plots. It always takes down what it built, also on Ctrl-C
// and errors; runs that finished are kept and an interrupted run is
// marked incomplete.
package runner
