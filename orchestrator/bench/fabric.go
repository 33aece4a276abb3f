package bench

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/orchestrator/fabric"
)

// BareUpDown is the fabric baseline: every namespace of topo, then every
// veth pair, made one after another with no configuration at all, then
// every namespace deleted. It returns the time of each half. On error
// the caller removes what is left under its prefix.
func BareUpDown(ctx context.Context, topo *topology.Topology, name func(string) string) (up, down time.Duration, err error) {
	t0 := time.Now()
	if err := bareObjects(ctx, topo, name); err != nil {
		return 0, 0, err
	}
	up = time.Since(t0)
	t1 := time.Now()
	for _, n := range topo.Nodes {
		if err := nsutil.Delete(name(n.Name)); err != nil {
			return up, 0, err
		}
	}
	return up, time.Since(t1), nil
}

// bareObjects makes every namespace, then every veth pair, unconfigured.
func bareObjects(ctx context.Context, topo *topology.Topology, name func(string) string) error {
	handles := make(map[string]netns.NsHandle, len(topo.Nodes))
	defer func() {
		for _, h := range handles {
			h.Close()
		}
	}()
	for _, n := range topo.Nodes {
		if err := ctx.Err(); err != nil {
			return err
		}
		h, err := nsutil.Create(name(n.Name), nil)
		if err != nil {
			return err
		}
		handles[n.Name] = h
	}
	root, err := netlink.NewHandle()
	if err != nil {
		return err
	}
	defer root.Close()
	for _, l := range topo.Links {
		veth := &netlink.Veth{
			LinkAttrs:     netlink.LinkAttrs{Name: l.A.Ifname, Namespace: netlink.NsFd(handles[l.A.Node]), Flags: net.FlagUp},
			PeerName:      l.B.Ifname,
			PeerNamespace: netlink.NsFd(handles[l.B.Node]),
		}
		if err := root.LinkAdd(veth); err != nil {
			return fmt.Errorf("bare veth %s: %w", l.Name, err)
		}
	}
	return nil
}

// FullUpDown builds topo with fabric.Build under name and removes it with
// fabric.Remove, returning the time of each.
func FullUpDown(ctx context.Context, topo *topology.Topology, name func(string) string, prefix string) (up, down time.Duration, err error) {
	t0 := time.Now()
	if _, err := fabric.Build(ctx, topo, fabric.Options{Namespace: name}); err != nil {
		return 0, 0, err
	}
	t1 := time.Now()
	left, err := nsutil.List(prefix)
	if err != nil {
		return 0, 0, err
	}
	if err := fabric.Remove(left); err != nil {
		return t1.Sub(t0), 0, err
	}
	return t1.Sub(t0), time.Since(t1), nil
}

// Settle waits for the kernel to finish destroying removed namespaces in
// the background, so one measurement does not pay for the last.
func Settle(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// Fabric measures setup and teardown of a k-ary fat tree for each k in
// opt.K against the bare baseline, alternately in the same run.
func Fabric(ctx context.Context, opt Options) (sec *Section, err error) {
	ks, reps, settle := opt.K, 2, 2*time.Second
	if len(ks) == 0 {
		ks = []int{4, 8, 16}
	}
	if opt.Quick {
		if len(opt.K) == 0 {
			ks = []int{4}
		}
		reps, settle = 1, 500*time.Millisecond
	}
	sec = &Section{Name: "fabric", Method: fmt.Sprintf(
		"Seconds to build (namespaces, veths, addresses, routes, neighbours, sysctls, offloads) and to remove a k-ary fat tree, "+
			"against the same namespaces and veth pairs made bare, one after another, in the same run; mean of %d repetition(s), %v settle between runs.", reps, settle)}
	for _, k := range ks {
		topo, err := topology.NewFatTree(k)
		if err != nil {
			return sec, err
		}
		var up, down, bup, bdown time.Duration
		for range reps {
			bu, bd, err := onePrefix(func(s *scope) (time.Duration, time.Duration, error) { return BareUpDown(ctx, topo, s.name) })
			if err != nil {
				return sec, fmt.Errorf("k=%d bare: %w", k, err)
			}
			Settle(ctx, settle)
			fu, fd, err := onePrefix(func(s *scope) (time.Duration, time.Duration, error) {
				return FullUpDown(ctx, topo, s.name, s.prefix)
			})
			if err != nil {
				return sec, fmt.Errorf("k=%d build: %w", k, err)
			}
			Settle(ctx, settle)
			up, down, bup, bdown = up+fu, down+fd, bup+bu, bdown+bd
		}
		n := float64(reps)
		opt.logf("bench: fabric k=%d: up %.3fs (bare %.3fs), down %.3fs (bare %.3fs)", k, up.Seconds()/n, bup.Seconds()/n, down.Seconds()/n, bdown.Seconds()/n)
		sec.Rows = append(sec.Rows,
			row(fmt.Sprintf("k=%d setup (%d nodes, %d links)", k, len(topo.Nodes), len(topo.Links)), "s", up.Seconds()/n, bup.Seconds()/n, "bare namespaces+veths"),
			row(fmt.Sprintf("k=%d teardown", k), "s", down.Seconds()/n, bdown.Seconds()/n, "bare namespace delete"))
	}
	return sec, nil
}

// onePrefix runs f under a fresh scope and always removes what it left.
func onePrefix(f func(*scope) (time.Duration, time.Duration, error)) (a, b time.Duration, err error) {
	s, err := newScope()
	if err != nil {
		return 0, 0, err
	}
	defer func() {
		if cerr := s.close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	return f(s)
}
