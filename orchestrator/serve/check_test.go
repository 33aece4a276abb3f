package serve

import (
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCheckAddr(t *testing.T) {
	for _, tt := range []struct {
		addr   string
		remote bool
		warn   bool
		err    string
	}{
		{"127.0.0.1:8321", false, false, ""}, {"127.1.2.3:0", false, false, ""}, {"localhost:80", false, false, ""}, {"[::1]:9000", false, false, ""},
		{"0.0.0.0:8321", false, false, "not a loopback address"}, {":8321", false, false, "not a loopback address"},
		{"192.0.2.7:80", false, false, "--allow-remote"}, {"[::]:80", false, false, "not a loopback"},
		{"0.0.0.0:8321", true, true, ""}, {"8321", false, false, "want host:port"},
	} {
		warn, err := CheckAddr(tt.addr, tt.remote)
		if (tt.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.err)) || (warn != "") != tt.warn {
			t.Errorf("CheckAddr(%q, %v) = %q, %v; want warning %v, error %q", tt.addr, tt.remote, warn, err, tt.warn, tt.err)
		}
	}
}

// TestCheckControl: only a same-origin JSON request with the run's token
// may change the lab, and only when control is on.
func TestCheckControl(t *testing.T) {
	on := &Server{opt: Options{AllowControl: true}, token: "t0k3n"}
	off := &Server{opt: Options{}, token: ""}
	for _, tt := range []struct {
		name string
		s    *Server
		hdr  map[string]string
		want int
	}{
		{"the page", on, map[string]string{"Origin": "http://127.0.0.1:8321", "X-Ftlab-Token": "t0k3n", "Content-Type": "application/json", "Sec-Fetch-Site": "same-origin"}, 0},
		{"no fetch metadata (older browser, curl with origin)", on, map[string]string{"Origin": "http://127.0.0.1:8321", "X-Ftlab-Token": "t0k3n", "Content-Type": "application/json"}, 0},
		{"read-only", off, map[string]string{"Origin": "http://127.0.0.1:8321", "X-Ftlab-Token": "", "Content-Type": "application/json"}, 403},
		{"another site", on, map[string]string{"Origin": "http://evil.example", "X-Ftlab-Token": "t0k3n", "Content-Type": "application/json"}, 403},
		{"cross-site fetch", on, map[string]string{"Origin": "http://127.0.0.1:8321", "X-Ftlab-Token": "t0k3n", "Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"}, 403},
		{"no origin", on, map[string]string{"X-Ftlab-Token": "t0k3n", "Content-Type": "application/json"}, 403},
		{"no token", on, map[string]string{"Origin": "http://127.0.0.1:8321", "Content-Type": "application/json"}, 403},
		{"wrong token", on, map[string]string{"Origin": "http://127.0.0.1:8321", "X-Ftlab-Token": "guess", "Content-Type": "application/json"}, 403},
		{"a form post", on, map[string]string{"Origin": "http://127.0.0.1:8321", "X-Ftlab-Token": "t0k3n", "Content-Type": "application/x-www-form-urlencoded"}, 415},
	} {
		r := httptest.NewRequest("POST", "http://127.0.0.1:8321/api/link", nil)
		for k, v := range tt.hdr {
			r.Header.Set(k, v)
		}
		code, err := tt.s.checkControl(r)
		if code != tt.want || (tt.want == 0) != (err == nil) {
			t.Errorf("%s: %d, %v; want %d", tt.name, code, err, tt.want)
		}
	}
	for host, ok := range map[string]bool{"127.0.0.1:8321": true, "localhost:1": true, "[::1]:80": true, "evil.example": false, "10.0.0.1:8321": false} {
		if loopbackHost(host) != ok {
			t.Errorf("loopbackHost(%q) = %v", host, !ok)
		}
	}
}
