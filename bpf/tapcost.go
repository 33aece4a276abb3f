package bpf

import (
	"errors"
	"time"
)

// What the capture tap costs the programs (MeasureProgramCosts): the
// cases without a capture are the ones above (the gate's lookup is part
// of every program now); these arm a capture during the runs, once on a
// port the packet does not cross (every packet pays the call into the tap
// and its port test) and once on both ports it crosses (two 64-byte
// records per packet).
var tapCostCases = []costCase{
	{"xdp_ingress line rate, up, ecmp, capture on other ports", ModeLineRate, PolicyECMP, xdpOf, 0, costUp, xdpRedirect},
	{"xdp_ingress line rate, up, ecmp, captured in and out", ModeLineRate, PolicyECMP, xdpOf, 0, costUp, xdpRedirect},
	{"tc_shaped, up, ecmp, capture on other ports", ModeShaped, PolicyECMP, tcOf, 0, costUp, tcRedirect},
	{"tc_shaped, up, ecmp, captured in and out", ModeShaped, PolicyECMP, tcOf, 0, costUp, tcRedirect},
}

// tapCostConfigs is the capture each of those cases arms. The packet
// arrives on port 0 and goes up through one of ports 4..7.
var tapCostConfigs = map[string]TapConfig{
	tapCostCases[0].name: {In: []int{3}, Out: []int{3}, SnapLen: 64},
	tapCostCases[1].name: {In: []int{0}, Out: []int{4, 5, 6, 7}, SnapLen: 64},
	tapCostCases[2].name: {In: []int{3}, Out: []int{3}, SnapLen: 64},
	tapCostCases[3].name: {In: []int{0}, Out: []int{4, 5, 6, 7}, SnapLen: 64},
}

// costTap is the capture of one cost case, if it has one; the zero value
// does nothing.
type costTap struct{ tap *Tap }

// armTap arms the case's capture on s.
func (c costCase) armTap(s *Switch) (costTap, error) {
	cfg, ok := tapCostConfigs[c.name]
	if !ok {
		return costTap{}, nil
	}
	t, err := s.Tap()
	if err != nil {
		return costTap{}, err
	}
	if err := t.Start(cfg); err != nil {
		t.Close()
		return costTap{}, err
	}
	return costTap{t}, nil
}

// drain empties the ring between calls, as a reader would, so that every
// run copies its records (a full ring only counts them lost).
func (d costTap) drain() {
	if d.tap == nil {
		return
	}
	var rec TapRecord
	for {
		d.tap.SetDeadline(time.Now())
		if err := d.tap.Read(&rec); err != nil {
			return
		}
	}
}

// Close disarms the capture.
func (d costTap) Close() error {
	if d.tap == nil {
		return nil
	}
	return errors.Join(d.tap.Close())
}
