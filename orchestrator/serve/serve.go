// Package serve is ftlab's local web page (ftlab serve): a lab shown
// live, its fabric drawn by orchestrator/graph with every link coloured
// by its load and state, queues and drops by cause, updated about once a
// second over server-sent events; or a results directory's report.md
// rendered with its plots.
//
// It serves on loopback unless told otherwise, and changes nothing unless
// told to: with AllowControl the page can fail and repair links, and
// every such request must come from the page itself (same origin, and
// the per-run token the page carries). The page is plain HTML, CSS and
// JavaScript embedded in the binary, with no build step and nothing
// fetched from elsewhere.
package serve

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/ftlab/ftlab/orchestrator/lab"
)

//go:embed web
var webFS embed.FS

// DefaultAddr is where ftlab serve listens unless told otherwise.
const DefaultAddr = "127.0.0.1:8321"

// DefaultInterval is how often the live page's numbers are read.
const DefaultInterval = time.Second

// Options configure a server: a lab (Store and Lab) or a results
// directory (ResultsDir).
type Options struct {
	Store *lab.Store
	Lab   string
	// ResultsDir, if set, is served instead of a lab: its report.md with
	// its plots, and its files.
	ResultsDir string
	// AllowControl lets the page fail and repair links.
	AllowControl bool
	// AllowRemote accepts requests whose Host is not a loopback name: set
	// when listening on another address (see Listen).
	AllowRemote bool
	// Interval between readings of the lab (DefaultInterval).
	Interval time.Duration
}

// Server is one ftlab serve.
type Server struct {
	opt   Options
	token string // per run: control requests must carry it
	live  *live  // lab mode
	mux   *http.ServeMux
}

// New checks the options and builds a server; a lab must be up.
func New(opt Options) (*Server, error) {
	if opt.Interval <= 0 {
		opt.Interval = DefaultInterval
	}
	s := &Server{opt: opt, mux: http.NewServeMux()}
	if opt.AllowControl {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		s.token = hex.EncodeToString(b[:])
	}
	static, _ := fs.Sub(webFS, "web")
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	if opt.ResultsDir != "" {
		if opt.AllowControl {
			return nil, errors.New("a results directory has nothing to control: --allow-control is for a lab")
		}
		if err := s.results(opt.ResultsDir); err != nil {
			return nil, err
		}
		return s, nil
	}
	st, err := opt.Store.Get(opt.Lab)
	if err != nil {
		return nil, err
	}
	if st.Phase != lab.PhaseUp {
		return nil, fmt.Errorf("lab %q is %s, not up", opt.Lab, st.Phase)
	}
	s.live = newLive(opt.Store, st, opt.Interval)
	s.labRoutes()
	return s, nil
}

// Serve serves on ln until ctx ends.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	if s.live != nil {
		go s.live.run(ctx)
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = hs.Shutdown(shut) // event streams end with ctx
	return nil
}

// ServeHTTP answers one request, refusing hosts that are not this
// machine's loopback names unless remote access is allowed: a page on
// another site that rebinds its name to 127.0.0.1 must not read the lab.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.opt.AllowRemote && !loopbackHost(r.Host) {
		http.Error(w, "ftlab serve answers only to loopback names (127.0.0.1, localhost, [::1])", http.StatusMisdirectedRequest)
		return
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
	s.mux.ServeHTTP(w, r)
}

// Listen opens addr for ftlab serve, after CheckAddr.
func Listen(addr string, allowRemote bool) (ln net.Listener, warning string, err error) {
	if warning, err = CheckAddr(addr, allowRemote); err != nil {
		return nil, "", err
	}
	if ln, err = net.Listen("tcp", addr); err != nil {
		return nil, "", err
	}
	return ln, warning, nil
}

// CheckAddr refuses an address to serve on that is not loopback
// (127.0.0.0/8, ::1, localhost; an empty host is every address) unless
// allowRemote is set, in which case warning says what that exposes.
func CheckAddr(addr string, allowRemote bool) (warning string, err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--addr %q: want host:port, e.g. %s", addr, DefaultAddr)
	}
	if loopbackName(host) {
		return "", nil
	}
	if !allowRemote {
		return "", fmt.Errorf("--addr %s is not a loopback address: other machines could read the lab (and, with --allow-control, fail its links); serve on 127.0.0.1, or say --allow-remote", addr)
	}
	return fmt.Sprintf("warning: serving on %s, not loopback: anyone who can reach this machine can read the page", addr), nil
}

// loopbackName reports whether a host name or address is this machine's
// loopback.
func loopbackName(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// loopbackHost is loopbackName for a Host header, port and all.
func loopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	return loopbackName(host)
}

// checkControl refuses a request that changes the lab unless control is
// allowed and the request comes from the page: same origin (the browser's
// Origin and Sec-Fetch-Site say so) and the run's token in its header.
func (s *Server) checkControl(r *http.Request) (int, error) {
	if !s.opt.AllowControl {
		return http.StatusForbidden, errors.New("this page is read-only: start ftlab serve with --allow-control to fail and repair links from it")
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return http.StatusForbidden, fmt.Errorf("cross-site request refused (Sec-Fetch-Site: %s)", site)
	}
	origin := r.Header.Get("Origin")
	if origin == "" || !strings.EqualFold(origin, "http://"+r.Host) {
		return http.StatusForbidden, fmt.Errorf("request from origin %q refused: only the page itself (http://%s) may change the lab", origin, r.Host)
	}
	if r.Header.Get("X-Ftlab-Token") != s.token {
		return http.StatusForbidden, errors.New("missing or wrong X-Ftlab-Token: reload the page")
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		return http.StatusUnsupportedMediaType, errors.New("want Content-Type: application/json")
	}
	return 0, nil
}
