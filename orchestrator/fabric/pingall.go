package fabric

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/stats"
	"github.com/ftlab/ftlab/internal/topology"
)

// pingPort is the UDP port PingAll's echo sockets use on every host.
const pingPort = 39999

// pingAttempts bounds how often PingAll asks a pair before declaring it
// unreachable; pingWait is how long each attempt waits for replies.
const (
	pingAttempts = 3
	pingWait     = time.Second
)

// ping message: magic, kind, source host index, destination host index,
// attempt, send time (ns since the run started).
const (
	pingMagic   = 0x66746c70 // "ftlp"
	pingRequest = 1
	pingReply   = 2
	pingLen     = 4 + 1 + 4 + 4 + 1 + 8
)

// PairResult is the outcome for one ordered pair of hosts.
type PairResult struct {
	From     string        `json:"from"`
	To       string        `json:"to"`
	OK       bool          `json:"ok"`
	RTT      time.Duration `json:"rtt_ns"`
	Attempts int           `json:"attempts"`
}

// PingAllResult summarizes PingAll.
type PingAllResult struct {
	Pairs  []PairResult  `json:"pairs"`
	OK     int           `json:"ok"`
	Total  int           `json:"total"`
	RTTP50 time.Duration `json:"rtt_p50_ns"`
	RTTP99 time.Duration `json:"rtt_p99_ns"`
	RTTMax time.Duration `json:"rtt_max_ns"`
}

// Failed returns the pairs that got no reply.
func (r *PingAllResult) Failed() []PairResult {
	var out []PairResult
	for _, p := range r.Pairs {
		if !p.OK {
			out = append(out, p)
		}
	}
	return out
}

type pingHost struct {
	node *topology.Node
	conn *net.UDPConn
}

// PingAll sends a UDP echo request from every host to every other host
// through the fabric's data plane and waits for the replies, retrying
// missing pairs a few times. Each host answers requests on one socket.
func PingAll(ctx context.Context, t *topology.Topology, namespace func(node string) string) (*PingAllResult, error) {
	hostNodes := t.Hosts()
	hosts := make([]*pingHost, len(hostNodes))
	defer func() {
		for _, h := range hosts {
			if h != nil && h.conn != nil {
				h.conn.Close()
			}
		}
	}()
	for i, n := range hostNodes {
		h := &pingHost{node: n}
		err := nsutil.DoNamed(namespace(n.Name), func() error {
			c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(n.Addr, pingPort)))
			h.conn = c
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("pingall: host %s: %w", n.Name, err)
		}
		hosts[i] = h
	}
	n := len(hosts)
	start := time.Now()
	var mu sync.Mutex
	rtt := make([]time.Duration, n*n) // 0: no reply yet
	attempts := make([]int, n*n)

	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			serve(h.conn, uint32(i), start, func(src, dst uint32, d time.Duration) {
				if int(src) >= n || int(dst) >= n {
					return
				}
				mu.Lock()
				if rtt[int(src)*n+int(dst)] == 0 {
					rtt[int(src)*n+int(dst)] = max(d, 1)
				}
				mu.Unlock()
			})
		}()
	}
	buf := make([]byte, pingLen)
	for attempt := 1; attempt <= pingAttempts && ctx.Err() == nil; attempt++ {
		missing := 0
		for i, h := range hosts {
			for j, peer := range hosts {
				mu.Lock()
				done := i == j || rtt[i*n+j] != 0
				mu.Unlock()
				if done {
					continue
				}
				missing++
				attempts[i*n+j] = attempt
				encodePing(buf, pingRequest, uint32(i), uint32(j), uint8(attempt), time.Since(start))
				_, _ = h.conn.WriteToUDPAddrPort(buf, netip.AddrPortFrom(peer.node.Addr, pingPort))
			}
		}
		if missing == 0 {
			break
		}
		if waitAll(ctx, &mu, rtt, n, pingWait) {
			break
		}
	}
	for _, h := range hosts {
		_ = h.conn.SetReadDeadline(time.Now()) // stop the readers
	}
	wg.Wait()

	res := &PingAllResult{}
	var rtts []time.Duration
	for i := range hosts {
		for j := range hosts {
			if i == j {
				continue
			}
			p := PairResult{From: hosts[i].node.Name, To: hosts[j].node.Name, Attempts: attempts[i*n+j]}
			if d := rtt[i*n+j]; d != 0 {
				p.OK, p.RTT = true, d
				res.OK++
				rtts = append(rtts, d)
			}
			res.Pairs = append(res.Pairs, p)
		}
	}
	res.Total = len(res.Pairs)
	if len(rtts) > 0 {
		res.RTTP50, res.RTTP99 = stats.Median(rtts), stats.Quantile(rtts, 0.99)
		res.RTTMax = slices.Max(rtts)
	}
	return res, ctx.Err()
}

// waitAll waits until every pair has a reply, the timeout passes or ctx
// ends; it reports whether every pair has a reply.
func waitAll(ctx context.Context, mu *sync.Mutex, rtt []time.Duration, n int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		mu.Lock()
		missing := 0
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if i != j && rtt[i*n+j] == 0 {
					missing++
				}
			}
		}
		mu.Unlock()
		if missing == 0 {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// serve answers requests addressed to host self and reports replies.
func serve(c *net.UDPConn, self uint32, start time.Time, replied func(src, dst uint32, rtt time.Duration)) {
	buf := make([]byte, 256)
	out := make([]byte, pingLen)
	for {
		n, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) || errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
				return
			}
			continue
		}
		kind, src, dst, attempt, sent, ok := decodePing(buf[:n])
		if !ok {
			continue
		}
		switch {
		case kind == pingRequest && dst == self:
			encodePing(out, pingReply, src, dst, attempt, sent)
			_, _ = c.WriteToUDPAddrPort(out, from)
		case kind == pingReply && src == self:
			replied(src, dst, time.Since(start)-sent)
		}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func encodePing(b []byte, kind uint8, src, dst uint32, attempt uint8, sent time.Duration) {
	binary.BigEndian.PutUint32(b[0:], pingMagic)
	b[4] = kind
	binary.BigEndian.PutUint32(b[5:], src)
	binary.BigEndian.PutUint32(b[9:], dst)
	b[13] = attempt
	binary.BigEndian.PutUint64(b[14:], uint64(sent))
}

func decodePing(b []byte) (kind uint8, src, dst uint32, attempt uint8, sent time.Duration, ok bool) {
	if len(b) != pingLen || binary.BigEndian.Uint32(b) != pingMagic {
		return 0, 0, 0, 0, 0, false
	}
	return b[4], binary.BigEndian.Uint32(b[5:]), binary.BigEndian.Uint32(b[9:]), b[13], time.Duration(binary.BigEndian.Uint64(b[14:])), true
}
