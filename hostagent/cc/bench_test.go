package cc

import "testing"

// BenchmarkOnACK is each controller's cost per ACK (a third of them
// marked), with the transport's window read that follows every ACK.
func BenchmarkOnACK(b *testing.B) {
	for _, name := range Names()[1:] {
		b.Run(name, func(b *testing.B) {
			a := &acker{f: newFlow(b, name, nil), rtt: rtt}
			for b.Loop() {
				a.ack(a.psn%3 == 0)
				_ = a.f.Window()
			}
		})
	}
}
