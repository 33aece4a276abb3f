package fabric

import (
	"fmt"

	"github.com/vishvananda/netlink"

	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/topology"
)

// SetLinkState takes both ends of a link administratively down or up, as
// pulling or replugging the cable would: each end loses carrier.
func SetLinkState(t *topology.Topology, namespace func(string) string, l *topology.Link, up bool) error {
	for _, ep := range []*topology.Endpoint{&l.A, &l.B} {
		err := nsutil.DoNamed(namespace(ep.Node), func() error {
			h, err := netlink.NewHandle()
			if err != nil {
				return err
			}
			defer h.Close()
			link, err := h.LinkByName(ep.Ifname)
			if err != nil {
				return err
			}
			if up {
				return h.LinkSetUp(link)
			}
			return h.LinkSetDown(link)
		})
		if err != nil {
			return fmt.Errorf("link %s: set %s/%s up=%v: %w", l.Name, ep.Node, ep.Ifname, up, err)
		}
	}
	return nil
}
