package cc

import "github.com/ftlab/ftlab/hostagent/transport"

// window is what every controller derives from its flow: packet size,
// the cap and the bandwidth-delay product, in payload bytes.
type window struct {
	mss, max, bdp float64
}

func windowOf(f transport.CCFlow) window {
	return window{mss: float64(f.MSS), max: float64(f.MaxWindow), bdp: float64(f.BDP())}
}

// wbytes turns a window in bytes into what Window returns: at least one
// byte, so the pacer always has a rate.
func wbytes(w float64) int { return max(int(w), 1) }

func clamp(x, lo, hi float64) float64 { return min(max(x, lo), hi) }
