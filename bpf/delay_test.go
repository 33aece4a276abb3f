package bpf

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ftlab/ftlab/hostagent/wire"
)

// The agents' port the delay fixtures configure.
const agentPort = 4791

// The header words the hook adds to (hostagent/wire).
const (
	ftVersion   = wire.Version
	ftDelayOff  = wire.DelayOff
	ftJitterOff = wire.JitterOff
)

// ftPacket is an agents' UDP payload: a DATA header of version v whose
// delay and jitter words hold delay and jitter, and 100 bytes of payload.
func ftPacket(v byte, delay, jitter uint32) []byte {
	b := make([]byte, 48+100)
	binary.BigEndian.PutUint16(b[0:], wire.Magic)
	b[2], b[3] = v, 1
	binary.BigEndian.PutUint16(b[6:], 0x1234)
	binary.BigEndian.PutUint32(b[ftDelayOff:], delay)
	binary.BigEndian.PutUint32(b[ftJitterOff:], jitter)
	for i := 48; i < len(b); i++ {
		b[i] = byte(i)
	}
	return b
}

// stamped is frame with its header's delay and jitter words set and the
// UDP checksum computed afresh (or left 0).
func stamped(frame []byte, delay, jitter uint32) []byte {
	out := append([]byte(nil), frame...)
	ip := ipHeader(out)
	l4 := out[14+len(ip):]
	binary.BigEndian.PutUint32(l4[8+ftDelayOff:], delay)
	binary.BigEndian.PutUint32(l4[8+ftJitterOff:], jitter)
	if binary.BigEndian.Uint16(l4[6:]) != 0 {
		l4[6], l4[7] = 0, 0
		binary.BigEndian.PutUint16(l4[6:], udpChecksum(ip, l4))
	}
	return out
}

// TestDelayFixtures runs the delay hook (c/delay.h) through xdp_ingress
// with BPF_PROG_TEST_RUN: an agents' packet arriving on a port whose link
// has a delay leaves with that delay (and jitter bound) added to its
// header and a UDP checksum that is right; anything else leaves as it
// would without the hook.
func TestDelayFixtures(t *testing.T) {
	requireRoot(t)
	agent := func(payload []byte) []byte {
		return frame{dst: hostAddr(1), dport: agentPort, data: payload}.bytes()
	}
	fresh := agent(ftPacket(ftVersion, 0, 0))
	carried := agent(ftPacket(ftVersion, 3_000_000, 40))
	nearFull := agent(ftPacket(ftVersion, 0xFFFFF000, 0xFFFFFFF0))
	v1 := agent(ftPacket(1, 0, 0))
	otherPort := frame{dst: hostAddr(1), dport: agentPort + 1, data: ftPacket(ftVersion, 0, 0)}.bytes()
	short := agent(ftPacket(ftVersion, 0, 0)[:30])
	noCsum := mutate(fresh, func(b []byte) { b[14+20+6], b[14+20+7] = 0, 0 })
	tcp := frame{dst: hostAddr(1), proto: protoTCP, dport: agentPort, payload: 60}.bytes()

	const delay, jitter = 1500 * time.Microsecond, 250 * time.Microsecond
	withDelay := func(d, j time.Duration) func(*fixture) {
		return func(f *fixture) {
			pc := basePort(4)
			pc.Delay, pc.Jitter = d, j
			f.must(f.s.SetPort(4, pc))
			c := baseConfig()
			c.AgentPort = agentPort
			f.must(f.s.SetConfig(c))
		}
	}
	shaped := func(setup func(*fixture)) func(*fixture) {
		return func(f *fixture) {
			setup(f)
			c := f.s.Config()
			c.Mode = ModeShaped
			f.must(f.s.SetConfig(c))
		}
	}
	d, j := uint32(delay), uint32(jitter)
	cases := []struct {
		name    string
		setup   func(*fixture)
		in      []byte
		verdict uint32
		out     []byte
	}{
		{"first link adds its delay and jitter", withDelay(delay, jitter), fresh, xdpRedirect, forwarded(stamped(fresh, d, j), 1)},
		{"later links add to what the packet carries", withDelay(delay, jitter), carried, xdpRedirect,
			forwarded(stamped(carried, 3_000_000+d, 40+j), 1)},
		{"the words saturate", withDelay(delay, jitter), nearFull, xdpRedirect, forwarded(stamped(nearFull, 0xFFFFFFFF, 0xFFFFFFFF), 1)},
		{"delay alone", withDelay(delay, 0), fresh, xdpRedirect, forwarded(stamped(fresh, d, 0), 1)},
		{"jitter alone", withDelay(0, jitter), fresh, xdpRedirect, forwarded(stamped(fresh, 0, j), 1)},
		{"no checksum stays none", withDelay(delay, jitter), noCsum, xdpRedirect, forwarded(stamped(noCsum, d, j), 1)},
		{"shaped mode stamps before passing to tc", shaped(withDelay(delay, jitter)), fresh, xdpPass, stamped(fresh, d, j)},
		{"no delay on the link: untouched", withDelay(0, 0), fresh, xdpRedirect, forwarded(fresh, 1)},
		{"version 1 header: untouched", withDelay(delay, jitter), v1, xdpRedirect, forwarded(v1, 1)},
		{"another UDP port: untouched", withDelay(delay, jitter), otherPort, xdpRedirect, forwarded(otherPort, 1)},
		{"too short for the header: untouched", withDelay(delay, jitter), short, xdpRedirect, forwarded(short, 1)},
		{"tcp: untouched", withDelay(delay, jitter), tcp, xdpRedirect, forwarded(tcp, 1)},
		{"no agent port configured: untouched", func(f *fixture) {
			pc := basePort(4)
			pc.Delay = delay
			f.must(f.s.SetPort(4, pc))
		}, fresh, xdpRedirect, forwarded(fresh, 1)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, baseConfig())
			f.ingress(4)
			c.setup(f)
			before := f.counters()
			verdict, out := f.runXDP(c.in)
			if verdict != c.verdict {
				t.Errorf("verdict = %d, want %d", verdict, c.verdict)
			}
			if diff := cmp.Diff(c.out, out); diff != "" {
				t.Errorf("output frame (-want +got):\n%s", diff)
			}
			if got := delta(before, f.counters())[4].DelayUnstamped; got != 0 {
				t.Errorf("%d packets counted unstamped", got)
			}
		})
	}
}

// TestDelayPortLimits: SetPort refuses delays a 32-bit word cannot carry.
func TestDelayPortLimits(t *testing.T) {
	f := newFixture(t, baseConfig())
	pc := basePort(4)
	pc.Delay = MaxPortDelay + 1
	if err := f.s.SetPort(4, pc); err == nil {
		t.Error("SetPort took a delay above MaxPortDelay")
	}
	pc.Delay, pc.Jitter = 0, -time.Nanosecond
	if err := f.s.SetPort(4, pc); err == nil {
		t.Error("SetPort took a negative jitter")
	}
}
