// Package fidelity tells whether a run's numbers reflect the emulated
// network or the machine it ran on: an emulator on a shared 2-core machine
// can silently produce wrong numbers when the CPU, not the emulated
// network, is the bottleneck.
//
// A run's Inputs are gathered from what the run already records (switch
// port counters, the senders' pacing statistics, the receivers' same-EV
// reordering counts), the dequeues of every link's real queue (measured
// as Mininet-HiFi did, by bpf.DequeueMonitor on the qdisc_dequeue
// tracepoint: the rate a link served at while it had packets queued) and
// a CPU sampler (/proc/stat every SampleInterval). Judge turns them into a Report with
// a Verdict (OK, WARN, FAIL) and the reasons for it. The thresholds are
// the named constants below.
package fidelity
