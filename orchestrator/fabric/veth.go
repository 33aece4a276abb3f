package fabric

import (
	"fmt"
	"net"

	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/ftlab/ftlab/internal/topology"
)

// FirstIfindex is the ifindex of the first lab port: every end of every
// link gets its own, Ifindex(link, side), unique across the lab's
// namespaces. The eBPF data plane needs that: one program instance serves
// every switch of a lab and finds a port's switch by its ifindex
// (bpf.Plane). The kernel numbers interfaces per namespace from 1 (lo),
// and fallback tunnel devices a loaded module adds to new namespaces take
// the next few; lab ports start well above them.
const FirstIfindex = 1000

// Ifindex is the ifindex the fabric gives one end of a link.
func Ifindex(l *topology.Link, side topology.Side) int {
	return FirstIfindex + 2*l.ID + int(side)
}

// vethEnd is one end of a veth pair as the kernel is asked to make it.
type vethEnd struct {
	name   string
	mac    net.HardwareAddr
	index  int
	txqlen int
}

// addVeth creates a veth pair with one queue each way, both ends down:
// a in the namespace of sock, b in the namespace peerNs. It is the
// RTM_NEWLINK vishvananda/netlink's LinkAdd sends, plus the peer's
// ifindex, which that API cannot set.
func addVeth(sock *nl.SocketHandle, a, b vethEnd, mtu int, peerNs netns.NsHandle) error {
	req := nl.NewNetlinkRequest(unix.RTM_NEWLINK, unix.NLM_F_CREATE|unix.NLM_F_EXCL|unix.NLM_F_ACK)
	req.Sockets = map[int]*nl.SocketHandle{unix.NETLINK_ROUTE: sock}
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index = int32(a.index)
	req.AddData(msg)
	for _, at := range endAttrs(a, mtu) {
		req.AddData(at)
	}
	info := nl.NewRtAttr(unix.IFLA_LINKINFO, nil)
	info.AddRtAttr(nl.IFLA_INFO_KIND, nl.NonZeroTerminated("veth"))
	data := info.AddRtAttr(nl.IFLA_INFO_DATA, nil)
	peer := data.AddRtAttr(nl.VETH_INFO_PEER, nil)
	pmsg := nl.NewIfInfomsgChild(peer, unix.AF_UNSPEC)
	pmsg.Index = int32(b.index)
	for _, at := range endAttrs(b, mtu) {
		peer.AddChild(at)
	}
	peer.AddRtAttr(unix.IFLA_NET_NS_FD, nl.Uint32Attr(uint32(peerNs)))
	req.AddData(info)
	if _, err := req.Execute(unix.NETLINK_ROUTE, 0); err != nil {
		return fmt.Errorf("veth %s (ifindex %d) ~ %s (ifindex %d): %w", a.name, a.index, b.name, b.index, err)
	}
	return nil
}

// endAttrs are the attributes of one end: one queue each way (an emulated
// link is one FIFO: with a queue per CPU, packets of one link reach the
// peer's per-queue NAPI instances on different CPUs and overtake each
// other, measured as same-EV reordering under a saturated CPU).
func endAttrs(e vethEnd, mtu int) []*nl.RtAttr {
	attrs := []*nl.RtAttr{
		nl.NewRtAttr(unix.IFLA_IFNAME, nl.ZeroTerminated(e.name)),
		nl.NewRtAttr(unix.IFLA_TXQLEN, nl.Uint32Attr(uint32(e.txqlen))),
		nl.NewRtAttr(unix.IFLA_NUM_TX_QUEUES, nl.Uint32Attr(1)),
		nl.NewRtAttr(unix.IFLA_NUM_RX_QUEUES, nl.Uint32Attr(1)),
	}
	if len(e.mac) > 0 {
		attrs = append(attrs, nl.NewRtAttr(unix.IFLA_ADDRESS, e.mac))
	}
	if mtu > 0 {
		attrs = append(attrs, nl.NewRtAttr(unix.IFLA_MTU, nl.Uint32Attr(uint32(mtu))))
	}
	return attrs
}
