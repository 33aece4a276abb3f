// Package doctor checks that this machine's kernel has what ftlab needs:
// root, network namespaces and veths, native XDP on veth, TCX, BTF, the
// HTB qdisc, a mountable bpffs, BPF ring buffers. Every check that can be
// tried is tried for real, on objects it makes in a namespace of its own
// ("ftlab-doctor-..."), which it removes again; each failed check says
// what is missing and how to get it.
package doctor

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/ftlab/ftlab/internal/bpffs"
	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/switchd/shaping"
)

// Status of a check.
type Status string

const (
	OK   Status = "ok"
	Warn Status = "warn" // ftlab works, with a limitation
	Fail Status = "fail" // ftlab cannot work (or not in this mode)
	Skip Status = "skip" // not tried: an earlier check failed
)

// Result is one check's outcome.
type Result struct {
	Name   string        `json:"name"`
	Status Status        `json:"status"`
	Detail string        `json:"detail"`        // what was found
	Fix    string        `json:"fix,omitempty"` // what to do when not ok
	Took   time.Duration `json:"took_ns"`
}

// Report is every check, in order.
type Report struct {
	Results []Result `json:"results"`
}

// OK reports whether no check failed.
func (r *Report) OK() bool {
	for _, c := range r.Results {
		if c.Status == Fail {
			return false
		}
	}
	return true
}

// MinKernel is the oldest kernel ftlab supports: TCX came in 6.6.
var MinKernel = [2]int{6, 6}

// nsPrefix names the doctor's own namespaces; stale ones (a doctor killed
// mid-check) are removed at the next run.
const nsPrefix = "ftlab-doctor-"

// Run performs every check.
func Run() *Report {
	r := &Report{}
	add := func(name string, fn func() (Status, string, string)) Status {
		start := time.Now()
		st, detail, fix := fn()
		r.Results = append(r.Results, Result{Name: name, Status: st, Detail: detail, Fix: fix, Took: time.Since(start)})
		return st
	}
	skip := func(name, why string) {
		r.Results = append(r.Results, Result{Name: name, Status: Skip, Detail: why})
	}
	root := add("root", checkRoot)
	add("kernel", checkKernel)
	add("BTF", checkBTF)
	add("CPUs", checkCPUs)
	add("iproute2", checkIP)
	if root != OK {
		for _, n := range []string{"bpffs", "namespaces and veths", "native XDP on veth", "TCX", "HTB qdisc", "BPF ring buffer"} {
			skip(n, "needs root")
		}
		return r
	}
	add("bpffs", checkBPFFS)
	add("BPF ring buffer", checkRingbuf)
	var p probe
	if add("namespaces and veths", p.setup) != OK {
		for _, n := range []string{"native XDP on veth", "TCX", "HTB qdisc"} {
			skip(n, "no test namespace")
		}
		return r
	}
	defer p.teardown()
	add("native XDP on veth", p.checkXDP)
	add("TCX", p.checkTCX)
	add("HTB qdisc", p.checkHTB)
	return r
}

func checkRoot() (Status, string, string) {
	if os.Geteuid() != 0 {
		return Fail, fmt.Sprintf("running as uid %d", os.Geteuid()),
			"run ftlab as root: it creates and enters network namespaces and loads eBPF programs"
	}
	return OK, "uid 0", ""
}

// kernelVersion parses "6.18.44-fc-v1045" into 6, 18.
func kernelVersion(release string) (major, minor int, err error) {
	parts := strings.SplitN(release, ".", 3)
	if len(parts) < 2 {
		return 0, 0, fmt.Errorf("kernel release %q", release)
	}
	major, err = strconv.Atoi(parts[0])
	if err != nil {
		return 0, 0, fmt.Errorf("kernel release %q", release)
	}
	digits := parts[1] // "18", or "1-rc2"
	if i := strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		digits = parts[1][:i]
	}
	minor, err = strconv.Atoi(digits)
	if err != nil {
		return 0, 0, fmt.Errorf("kernel release %q", release)
	}
	return major, minor, nil
}

func checkKernel() (Status, string, string) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return Fail, err.Error(), ""
	}
	rel := unix.ByteSliceToString(u.Release[:])
	major, minor, err := kernelVersion(rel)
	if err != nil {
		return Warn, err.Error(), ""
	}
	if major < MinKernel[0] || (major == MinKernel[0] && minor < MinKernel[1]) {
		return Fail, "Linux " + rel, fmt.Sprintf("ftlab needs Linux %d.%d or newer (TCX); upgrade the kernel", MinKernel[0], MinKernel[1])
	}
	return OK, "Linux " + rel, ""
}

func checkBTF() (Status, string, string) {
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		return Warn, "no /sys/kernel/btf/vmlinux",
			"a kernel built with CONFIG_DEBUG_INFO_BTF=y; ftlab's programs do not need CO-RE, but verifier messages and bpftool do better with it"
	}
	return OK, "/sys/kernel/btf/vmlinux", ""
}

func checkCPUs() (Status, string, string) {
	n := runtime.NumCPU()
	d := fmt.Sprintf("%d CPUs", n)
	if n < 2 {
		return Warn, d, "one CPU runs every switch and host: use small fabrics and calibrated rates (ftlab bench calibrate)"
	}
	return OK, d, ""
}

func checkIP() (Status, string, string) {
	p, err := exec.LookPath("ip")
	if err != nil {
		return Warn, "no ip command", "install iproute2 to run ip inside nodes (ftlab exec NODE -- ip addr); ftlab itself does not need it"
	}
	return OK, p, ""
}

func checkBPFFS() (Status, string, string) {
	dir, err := os.MkdirTemp("", "ftlab-doctor-bpffs-")
	if err != nil {
		return Fail, err.Error(), ""
	}
	defer os.Remove(dir)
	if err := bpffs.Mount(dir); err != nil {
		return Fail, err.Error(), "a kernel with CONFIG_BPF_SYSCALL; ftlab pins each lab's programs in a private bpffs"
	}
	if err := bpffs.Unmount(dir); err != nil {
		return Fail, err.Error(), ""
	}
	return OK, "mounted and unmounted a private bpffs", ""
}

func checkRingbuf() (Status, string, string) {
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.RingBuf, MaxEntries: 4096})
	if err != nil {
		return Warn, err.Error(), "Linux 5.8 or newer: ftlab capture reads switch ports through a BPF ring buffer"
	}
	m.Close()
	return OK, "created a ring buffer map", ""
}

// probe is the doctor's test namespace with a veth pair in it.
type probe struct {
	ns    string
	h     *netlink.Handle
	a, b  netlink.Link
	progs []*ebpf.Program
	links []link.Link
}

func (p *probe) setup() (Status, string, string) {
	removeStale()
	var b [4]byte
	_, _ = rand.Read(b[:])
	p.ns = nsPrefix + hex.EncodeToString(b[:])
	nh, err := nsutil.Create(p.ns, nil)
	if err != nil {
		return Fail, err.Error(), "a kernel with CONFIG_NET_NS"
	}
	defer nh.Close()
	p.h, err = netlink.NewHandleAt(nh)
	if err != nil {
		return Fail, err.Error(), ""
	}
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "dr-a", NumTxQueues: 1, NumRxQueues: 1}, PeerName: "dr-b"}
	if err := p.h.LinkAdd(veth); err != nil {
		return Fail, err.Error(), "a kernel with CONFIG_VETH"
	}
	for _, n := range []string{"dr-a", "dr-b"} {
		l, err := p.h.LinkByName(n)
		if err == nil {
			err = p.h.LinkSetUp(l)
		}
		if err != nil {
			return Fail, err.Error(), ""
		}
		if n == "dr-a" {
			p.a = l
		} else {
			p.b = l
		}
	}
	return OK, "created namespace " + p.ns + " with a veth pair", ""
}

// teardown removes everything the probe made.
func (p *probe) teardown() {
	for _, l := range p.links {
		_ = l.Close()
	}
	for _, pr := range p.progs {
		_ = pr.Close()
	}
	if p.h != nil {
		p.h.Close()
	}
	if p.ns != "" {
		_ = nsutil.Delete(p.ns)
	}
}

// removeStale deletes doctor namespaces a killed doctor left.
func removeStale() {
	left, _ := nsutil.List(nsPrefix)
	for _, ns := range left {
		_ = nsutil.Delete(ns)
	}
}

func (p *probe) load(t ebpf.ProgramType, verdict int32) (*ebpf.Program, error) {
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: t, License: "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, verdict), asm.Return()}})
	if err == nil {
		p.progs = append(p.progs, prog)
	}
	return prog, err
}

func (p *probe) checkXDP() (Status, string, string) {
	prog, err := p.load(ebpf.XDP, 2) // XDP_PASS
	if err != nil {
		return Fail, err.Error(), "a kernel with CONFIG_BPF_SYSCALL and XDP"
	}
	var lk link.Link
	err = nsutil.DoNamed(p.ns, func() error {
		var err error
		lk, err = link.AttachXDP(link.XDPOptions{Program: prog, Interface: p.a.Attrs().Index, Flags: link.XDPDriverMode})
		return err
	})
	if err != nil {
		return Fail, err.Error(), "native (driver mode) XDP on veth: Linux 4.14 or newer with CONFIG_VETH; the eBPF switch attaches XDP to every port"
	}
	p.links = append(p.links, lk)
	return OK, "attached an XDP program in driver mode to a veth", ""
}

func (p *probe) checkTCX() (Status, string, string) {
	prog, err := p.load(ebpf.SchedCLS, 0) // TC_ACT_OK
	if err != nil {
		return Fail, err.Error(), ""
	}
	var lk link.Link
	err = nsutil.DoNamed(p.ns, func() error {
		var err error
		lk, err = link.AttachTCX(link.TCXOptions{Program: prog, Interface: p.a.Attrs().Index, Attach: ebpf.AttachTCXIngress})
		return err
	})
	if err != nil {
		return Fail, err.Error(), "TCX attachments need Linux 6.6 or newer; the shaped data plane runs its link model there"
	}
	p.links = append(p.links, lk)
	return OK, "attached a TC program to a veth's ingress (TCX)", ""
}

func (p *probe) checkHTB() (Status, string, string) {
	err := shaping.Install(p.h, p.b, shaping.Link{RateBps: 10_000_000, BufferBytes: 64 << 10, MTU: 1500})
	if err != nil {
		var errno unix.Errno
		fix := "a kernel with CONFIG_NET_SCH_HTB: the shaped data plane serializes every link through HTB"
		if errors.As(err, &errno) && errno == unix.ENOENT {
			fix += " (the qdisc module is missing: modprobe sch_htb)"
		}
		return Fail, err.Error(), fix
	}
	return OK, "installed ftlab's HTB tree on a veth", ""
}
