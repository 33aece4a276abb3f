package ofan

// Step serves one packet on a pointer at value v walking order: it returns
// the first port at or after position v (cyclically) that is valid, and the
// pointer's next value (one past that position). As in section 4.1, an
// invalid port does not stop the rotation: the pointer keeps incrementing
// until it yields a valid port, so the valid ports keep their relative
// order and each still gets one packet per round. valid is indexed by port;
// nil means every port is valid. With no valid port, Step returns port -1
// and leaves v unchanged (the packet has no route).
func Step(order []int, v int, valid []bool) (port, next int) {
	w := len(order)
	for range w {
		p := order[v]
		v = (v + 1) % w
		if valid == nil || valid[p] {
			return p, v
		}
	}
	return -1, v
}

// Walk returns the ports chosen for n consecutive packets of a pointer
// starting at value start (-1 for each packet when no port is valid).
func Walk(order []int, start int, valid []bool, n int) []int {
	out := make([]int, n)
	v := start
	for i := range out {
		out[i], v = Step(order, v, valid)
	}
	return out
}

// Mask turns a bitmap of valid uplinks (bit i set: uplink i valid, as in
// routing.Table.ValidSets) into the valid slice Step and Walk take.
func Mask(bits uint64, w int) []bool {
	valid := make([]bool, w)
	for i := range valid {
		valid[i] = bits>>i&1 == 1
	}
	return valid
}
