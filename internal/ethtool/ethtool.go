// Package ethtool switches the few offload features ftlab needs, through the
// SIOCETHTOOL ioctl of the calling thread's network namespace.
//
// Two facts measured on ftlab's kernels (docs and ../shared/KERNEL-NOTES.md)
// make this necessary on host veths:
//   - XDP redirect drops the CHECKSUM_PARTIAL state of veth TX checksum
//     offload, so UDP from a host arrives with bad checksums unless TX
//     checksum offload is off on the sending host's veth.
//   - A veth that receives XDP-redirected frames needs NAPI; GRO on enables
//     it without attaching a program.
package ethtool

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Legacy ethtool commands (include/uapi/linux/ethtool.h). Each maps onto
// one netdev feature bit in the kernel.
const (
	cmdGetTxCsum = 0x16
	cmdSetTxCsum = 0x17
	cmdGetGRO    = 0x2b
	cmdSetGRO    = 0x2c
)

// value is struct ethtool_value.
type value struct {
	cmd  uint32
	data uint32
}

// ifreq is struct ifreq with the ifr_data member of the union.
type ifreq struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24 - unsafe.Sizeof(uintptr(0))]byte
}

func do(ifname string, cmd, data uint32) (uint32, error) {
	if len(ifname) >= unix.IFNAMSIZ {
		return 0, fmt.Errorf("ethtool: interface name %q too long", ifname)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("ethtool: socket: %w", err)
	}
	defer unix.Close(fd)
	v := value{cmd: cmd, data: data}
	var req ifreq
	copy(req.name[:], ifname)
	req.data = unsafe.Pointer(&v)
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&req)))
	runtime.KeepAlive(&v)
	if errno != 0 {
		return 0, errno
	}
	return v.data, nil
}

func set(ifname, what string, cmd uint32, on bool) error {
	var d uint32
	if on {
		d = 1
	}
	if _, err := do(ifname, cmd, d); err != nil {
		return fmt.Errorf("ethtool %s %s %v: %w", ifname, what, onOff(on), err)
	}
	return nil
}

func get(ifname, what string, cmd uint32) (bool, error) {
	d, err := do(ifname, cmd, 0)
	if err != nil {
		return false, fmt.Errorf("ethtool %s get %s: %w", ifname, what, err)
	}
	return d != 0, nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// SetTxChecksum switches TX checksum offload of an interface in the calling
// thread's namespace.
func SetTxChecksum(ifname string, on bool) error { return set(ifname, "tx", cmdSetTxCsum, on) }

// TxChecksum reports whether TX checksum offload is on.
func TxChecksum(ifname string) (bool, error) { return get(ifname, "tx", cmdGetTxCsum) }

// SetGRO switches generic receive offload (and with it NAPI on veth).
func SetGRO(ifname string, on bool) error { return set(ifname, "gro", cmdSetGRO, on) }

// GRO reports whether generic receive offload is on.
func GRO(ifname string) (bool, error) { return get(ifname, "gro", cmdGetGRO) }
