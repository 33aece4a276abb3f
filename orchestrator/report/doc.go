// Package report renders a results directory: summary.json (the numbers
// per cell: FCT percentiles, CCT against its bound, retransmissions, drops,
// queues per direction, fidelity verdicts), report.md, and the plots (FCT
// CDF, link overload, queues, retransmissions, and the paths of RSS
// subflows over ECMP edges), drawn with gonum.org/v1/plot.
//
// It reads nothing but the raw files of package results (or the same rows
// from a run that just finished), so `ftlab report` rebuilds exactly what
// `ftlab run` wrote; it never runs anything. It is the only package that
// draws plots.
package report
