package ofan

// xorW is xor_w(v, x): v^x when that stays below w, else v unchanged. Being
// its own inverse on the values it changes, it is a bijection of 0..w-1.
func xorW(v, x, w int) int {
	if y := v ^ x; y < w {
		return y
	}
	return v
}

// Split returns the two per-pointer constants of pointer id for w uplinks:
// the XOR mask id1 (low Bits(w) bits of id) and the addend id2 mod w. A data
// plane stores or derives these two and the basis, nothing else.
func Split(w, id int) (mask, add int) {
	b := Bits(w)
	return id & (1<<b - 1), (id >> b) % w
}

// Port returns the uplink index selected by value i (0 <= i < w) of pointer
// id on a switch with w uplinks.
func Port(w, id, i int) int {
	mask, add := Split(w, id)
	return (xorW(Basis(w)[i], mask, w) + add) % w
}

// Order returns the port order of pointer id: Order(w, id)[i] = Port(w, id, i).
// It is a permutation of 0..w-1.
func Order(w, id int) []int {
	p := Basis(w)
	mask, add := Split(w, id)
	o := make([]int, w)
	for i, v := range p {
		o[i] = (xorW(v, mask, w) + add) % w
	}
	return o
}
