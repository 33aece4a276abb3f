// Package params declares typed parameter blocks once and derives
// everything else from the declaration: decoding from a YAML file with
// file:line:col errors, defaults, bounds, formatting, and documentation.
//
// A block is a flat struct whose fields carry tags:
//
//	yaml     the key in the file
//	json     the key in the resolved record and on the wire (with its unit)
//	default  the default, written as in a file and parsed like one
//	doc      one sentence for the documentation and --help
//	unit     for uint64: "size" (bytes) or "rate" (bit/s)
//	zero     a keyword that means 0 ("off", "line", "auto")
//	rtt      "ok": a duration may be written as a multiple of the base RTT
//	min max  inclusive bounds, written like values
//	gt lt    exclusive bounds, for fractions
//	pow2     the value must be a power of two
//	multiple the value must be a multiple of this
//	enum     the valid strings, comma-separated
//
// Supported field types: time.Duration, int, float64, bool, string,
// uint64 with a unit. A block may check what no single field can by
// implementing Checker.
//
// The engines declare their blocks next to the code that uses them (a
// transport's in hostagent/scheme, a congestion control's in hostagent/cc,
// a switch policy's in switchd) and list them in their registries (a
// Registry looks entries up and fills, checks and sets their blocks); the scenario decoder, the orchestrator-agent
// protocol and docs/scenarios.md all read those declarations, so a
// parameter is added in one place. The package is part of ftlab's ground
// floor and imports nothing of ftlab above it.
package params
