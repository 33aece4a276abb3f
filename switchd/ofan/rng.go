package ofan

// splitmix64 is a tiny, fully specified generator. The basis permutation is
// meant to be a fixed constant of the fabric ("hard-wired", F.2), so it is
// drawn with a generator whose output cannot change with the Go release,
// unlike the helpers of math/rand/v2 (IntN, Perm) whose algorithms are not
// promised to stay the same.
type splitmix64 struct{ s uint64 }

// Uint64 makes splitmix64 a math/rand/v2 Source.
func (r *splitmix64) Uint64() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// below returns a value in [0, n). The modulo bias is below 2^-57 for the
// n <= 64 used here, far too small to matter.
func below(src interface{ Uint64() uint64 }, n int) int {
	return int(src.Uint64() % uint64(n))
}

// mix derives an independent stream seed from a seed and a label, so that
// e.g. pipe 1 of a switch does not reuse pipe 0's stream shifted by one.
func mix(seed, label uint64) uint64 {
	r := splitmix64{seed ^ (label * 0xd1342543de82ef95)}
	return r.Uint64()
}
