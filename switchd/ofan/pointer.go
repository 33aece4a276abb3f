package ofan

import "math/rand/v2"

// Size classes of a pointer (section 4.1: data and ACK packets rotate on
// separate pointers so each class alone is spread evenly).
const (
	Data    = 0
	Ack     = 1
	Classes = 2
)

// Stride is the distance between the ids of the data and ACK pointers of a
// destination, replacing the paper's N_d (see the package doc): nDest
// rounded up to a multiple of 2^Bits(w), plus one more multiple if the
// quotient is a multiple of w. Adding it keeps id1 and moves id2 mod w by a
// nonzero amount, so the two orders always differ. Equals nDest when the
// paper's layout already has that property.
func Stride(nDest, w int) int {
	b := Bits(w)
	m := (nDest + 1<<b - 1) >> b
	if w > 1 && m%w == 0 {
		m++
	}
	return m << b
}

// ID is the id of the pointer for destination d (0 <= d < nDest) and size
// class t (Data or Ack) on a switch with w uplinks: d + Stride(nDest, w)*t.
func ID(d, t, nDest, w int) int { return d + Stride(nDest, w)*t }

// InitialValue draws a data pointer's random start in [0, w). It uses only
// rng.Uint64, so a seeded rng gives the same value on every Go release.
func InitialValue(rng *rand.Rand, w int) int { return below(rng, w) }

// AckStart is the start of an ACK pointer given its data pointer's start:
// half a rotation away, (data + floor(w/2)) mod w (section 4.1).
func AckStart(data, w int) int { return (data + w/2) % w }

// startsLabel separates the start-value streams from any other use of a
// switch seed.
const startsLabel = 0x5741525453 // "STARTS"

// Starts returns the initial values of all pointers of a switch: data[d]
// and ack[d] for destination d in 0..nDest-1. It is a pure function of
// seed, so a switch restarted with the same seed resumes the same rotation
// phases. For pOfan pass PipeSeed(seed, pipe) to get each pipe's own,
// independent starts.
func Starts(seed uint64, nDest, w int) (data, ack []int) {
	rng := rand.New(&splitmix64{mix(seed, startsLabel)})
	data = make([]int, nDest)
	ack = make([]int, nDest)
	for d := range data {
		data[d] = InitialValue(rng, w)
		ack[d] = AckStart(data[d], w)
	}
	return data, ack
}

// PipeSeed derives the seed of pipe pipe of a switch from the switch seed.
// Pipes share pointer ids and orders; only their starts differ (package
// doc, pOfan).
func PipeSeed(seed uint64, pipe int) uint64 { return mix(seed, uint64(pipe)+1) }
