// Package harness runs host-agent transports on the simulated network: it
// builds a sim.Network, puts a transport.Endpoint on every host, sends a
// list of messages at given virtual times and collects every record, so
// tests and benchmarks of whole schemes are a scenario and a few asserts.
// Runs are deterministic: the same Scenario gives the same Result.
package harness
