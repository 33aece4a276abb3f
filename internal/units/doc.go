// Package units parses and formats the link rates and buffer sizes written
// in ftlab topology and scenario files.
//
// Rates are bits per second. The units are bit, Kbit, Mbit, Gbit and Tbit
// (decimal: 1 Kbit = 1000 bit), matched case-insensitively and optionally
// followed by "/s" ("100Mbit/s"). bps, Kbps, Mbps and Gbps are accepted as
// the same bit-based units. Beware: tc(8) reads "mbps" as megaBYTES per
// second; here Mbps means megabits, as on every NIC datasheet. A capital B
// ("MBps", "MB/s") is rejected rather than guessed, because it usually
// means bytes.
//
// Sizes are bytes. A plain integer is bytes; B, KiB, MiB and GiB are binary
// (1 KiB = 1024 B) and KB, MB and GB decimal (1 KB = 1000 B). A lone "K"
// or "M" is rejected as ambiguous, and so is a lowercase trailing "b"
// ("Kb"), which commonly means bits.
//
// Decimal fractions are allowed ("2.5Gbit", "1.5KiB") as long as the result
// is a whole number of bits or bytes. Values are uint64; anything larger is
// reported as an error, never wrapped.
package units
