// Package scenario reads scenario files: what `ftlab run` builds, runs,
// breaks and compares. A scenario names a topology (a file or inline, with
// link overrides), the data-plane mode, the switch policy (per layer) and
// the host transport with their parameters, a workload (package
// orchestrator/workload), a timeline of faults, the seeds of its
// repetitions, and a compare block whose alternatives are crossed into a
// matrix of cells. The format is documented, field by field, in
// docs/scenarios.md.
//
// Load only reads and checks: a scenario with any problem builds nothing.
// Decoding is strict and complete, reusing the topology package's YAML
// machinery, so every problem of a file is reported at once as
// file:line:col: field: message (a yamldoc.Errors), unknown names list
// the valid ones, and names of links and switches are checked against the
// resolved topology.
//
// The compare block is expanded on the YAML tree: each cell is the file
// with one alternative of every compared field substituted, decoded like
// a file written by hand. Cells therefore get exactly the same checks and
// defaults as a single scenario, and a bad alternative is reported at its
// own line in the compare block.
//
// A loaded Scenario is fully resolved: every cell has its Config with
// every default filled in, and one Run per seed with the workload's
// messages, the faults with their random selections made (as concrete
// link and switch names), the timeline of link operations the runner
// performs, and a lower bound on the collective completion time.
// Scenario.Resolved and Scenario.Record give the JSON records kept with
// results. Everything random derives from the run's seed through
// explicitly seeded PCG streams, separate for the workload and each
// fault, and all cells share the seeds, so they are compared on identical
// traffic and faults.
package scenario
