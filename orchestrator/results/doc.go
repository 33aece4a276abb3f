// Package results is the contract between running a scenario and
// reporting on it: the raw files of a results directory, their types, and
// writing and reading them.
//
//	run.json      Meta: what ran, on what machine, and how every run went
//	flows.csv     FlowRow: one message of one run
//	links.csv     LinkRow: one switch port of one run
//	subflows.csv  SubflowRow: one EV change of one subflow of one run
//
// The runner (orchestrator/runner) appends each run to the files as it
// finishes, so an interrupted scenario keeps every finished run; the report
// (orchestrator/report) is computed from the rows only, whether they come
// from a run that just finished or from the files (Read), so both give the
// same numbers.
package results
