package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ftlab/ftlab/internal/testlab"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/orchestrator/runner"
	"github.com/ftlab/ftlab/orchestrator/serve"
	"github.com/ftlab/ftlab/switchd"
)

// browser starts headless Chromium (Debian's) driven over the DevTools
// protocol, with a fresh profile and nothing that reaches the network:
// without the background-networking flags Chromium's own connections are
// refused by a closed network and slow it down.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := testlab.Tool(t, "chromium", "the web page is tested in a real browser")
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 1200),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-extensions", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() {
		cancelTimeout()
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// screenshot keeps what the browser shows in $FTLAB_SCREENSHOT_DIR, if
// set, so a person can look at the page a test saw.
func screenshot(t *testing.T, ctx context.Context, name string) {
	dir := os.Getenv("FTLAB_SCREENSHOT_DIR")
	if dir == "" {
		return
	}
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Errorf("screenshot: %v", err)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name), buf, 0o644); err != nil {
		t.Error(err)
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// start serves opt on a loopback port until the test ends.
func start(t *testing.T, opt serve.Options) string {
	t.Helper()
	srv, err := serve.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	ln, warning, err := serve.Listen("127.0.0.1:0", false)
	if err != nil || warning != "" {
		t.Fatal(err, warning)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return "http://" + ln.Addr().String()
}

// TestLivePage loads a real lab's page in Chromium: every node is drawn,
// the links a transfer crosses show its load, a link failed with ftlab link down's call turns failed on the page
// within 2 s, the page itself can repair it (control on), and requests
// from elsewhere cannot.
func TestLivePage(t *testing.T) {
	testlab.RequireRoot(t)
	ctx := browser(t)
	store := &lab.Store{Dir: t.TempDir(), Prefix: testlab.Prefix(t)}
	topo := testlab.Topology(t, "fattree-k4")
	if _, err := store.Up(context.Background(), "live", topo, lab.UpOptions{DataPlane: switchd.Config{Mode: switchd.ModeShaped, ConvergenceDelay: time.Millisecond}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := store.Down("live"); err != nil {
			t.Error(err)
		}
	})
	url := start(t, serve.Options{Store: store, Lab: "live", AllowControl: true, Interval: 250 * time.Millisecond})

	if err := chromedp.Do(ctx, chromedp.Navigate(url+"/")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelectorAll("#graph svg g.node").length > 0 && Number(document.body.dataset.seq) >= 0`)); err != nil {
		t.Fatal(err)
	}
	nodes := eval[int](t, ctx, `document.querySelectorAll("#graph svg g.node").length`)
	links := eval[int](t, ctx, `document.querySelectorAll("#graph svg line.link").length`)
	if nodes != len(topo.Nodes) || links != len(topo.Links) {
		t.Errorf("the page draws %d nodes and %d links, want %d and %d", nodes, links, len(topo.Nodes), len(topo.Links))
	}
	var missing []string
	for _, n := range topo.Nodes {
		if !eval[bool](t, ctx, fmt.Sprintf(`!!document.querySelector('#graph g.node[data-name=%q]')`, n.Name)) {
			missing = append(missing, n.Name)
		}
	}
	if len(missing) > 0 {
		t.Errorf("nodes not on the page: %v", missing)
	}

	// A transfer loads the links on its path: the page colours them.
	sent := make(chan error, 1)
	go func() {
		_, err := runner.Send(context.Background(), runner.SendOptions{Store: store, Lab: "live", Agents: runner.InProcessAgents,
			Src: "h0-0-0", Dst: "h1-0-0", Bytes: 8 << 20, Count: 1, Transport: "ecmp", Params: []string{"host.window=48KiB"}, Timeout: time.Minute})
		sent <- err
	}()
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	_, err := chromedp.Run(lctx, chromedp.Poll[bool](`[...document.querySelectorAll("#graph line.link")].some(l => Number(l.dataset.utilization) > 0.02) &&
		!!document.querySelector('#links tr[data-link="h0-0-0~e0-0"]')`))
	cancel()
	if err != nil {
		t.Errorf("no link of the transfer's path shows load on the page: %v", err)
	}
	screenshot(t, ctx, "load.png")
	if err := <-sent; err != nil {
		t.Fatal(err)
	}

	link, err := store.SetLink(context.Background(), "live", "a0-0", "c0-0", false)
	if err != nil {
		t.Fatal(err)
	}
	failedAt := time.Now()
	isFailed := fmt.Sprintf(`document.querySelector('#graph line.link[data-link=%q]').classList.contains("failed") &&
		!!document.querySelector('#links tr.failed[data-link=%q]')`, link, link)
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	_, err = chromedp.Run(wctx, chromedp.Poll[bool](isFailed, chromedp.WithPollingInterval(50*time.Millisecond)))
	cancel()
	if err != nil {
		t.Fatalf("%s is not failed on the page %v after ftlab link down: %v", link, time.Since(failedAt), err)
	}
	t.Logf("%s failed on the page %v after ftlab link down", link, time.Since(failedAt).Round(time.Millisecond))
	screenshot(t, ctx, "live.png")

	// The page repairs it with its own request (the token it carries).
	repair := `fetch("/api/link", {method: "POST", headers: {"Content-Type": "application/json",
		"X-Ftlab-Token": document.querySelector('meta[name="ftlab-token"]').content},
		body: JSON.stringify({a: "a0-0", b: "c0-0", up: true})}).then(r => r.status)`
	status, err := chromedp.Run(ctx, chromedp.Evaluate[int](repair, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if status != http.StatusOK {
		t.Fatalf("the page's repair got %d", status)
	}
	if st, _ := store.Get("live"); len(st.Failed) != 0 {
		t.Errorf("after the page's repair the lab records %v failed", st.Failed)
	}
	wctx, cancel = context.WithTimeout(ctx, 5*time.Second)
	_, err = chromedp.Run(wctx, chromedp.Poll[bool](fmt.Sprintf(`document.querySelector('#graph line.link[data-link=%q]').dataset.state === "up"`, link)))
	cancel()
	if err != nil {
		t.Errorf("%s does not show up again after the repair: %v", link, err)
	}

	// Not from another origin, nor without the token.
	for _, hdr := range []map[string]string{
		{"Origin": "http://evil.example", "X-Ftlab-Token": "x"},
		{"Origin": url},
	} {
		req, _ := http.NewRequest("POST", url+"/api/link", strings.NewReader(`{"a":"a0-0","b":"c0-0","up":false}`))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("POST with %v: %d, want 403", hdr, resp.StatusCode)
		}
	}
	if st, _ := store.Get("live"); len(st.Failed) != 0 {
		t.Errorf("a refused request failed %v", st.Failed)
	}

	// The snapshot the page reads, as JSON.
	resp, err := http.Get(url + "/api/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var snap serve.Snapshot
	if err := json.NewDecoder(resp.Body).Decode(&snap); err != nil {
		t.Fatal(err)
	}
	if len(snap.Links) != len(topo.Links) || !snap.Counters || !snap.Control || snap.Error != "" {
		t.Errorf("snapshot: %d links, counters %v, control %v, error %q", len(snap.Links), snap.Counters, snap.Control, snap.Error)
	}
}

// TestResultsPage serves a results directory: report.md rendered with
// its tables and plots in the browser, raw HTML in it shown as text, and
// nothing outside the directory.
func TestResultsPage(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	md := "# demo\n\nA run.\n\n| cell | FCT p50 |\n|---|---|\n| ecmp | 1.2ms |\n\n<script>document.title = 'owned'</script>\n\n![FCT CDF](fct_cdf.png)\n"
	if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	img := image.NewRGBA(image.Rect(0, 0, 40, 30))
	for x := range 40 {
		img.Set(x, 15, color.RGBA{200, 0, 0, 255})
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fct_cdf.png"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	url := start(t, serve.Options{ResultsDir: dir})

	if err := chromedp.Do(ctx, chromedp.Navigate(url+"/")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!document.querySelector("#report img") && document.querySelector("#report img").complete`)); err != nil {
		t.Fatal(err)
	}
	cells := eval[int](t, ctx, `document.querySelectorAll("#report table td").length`)
	width := eval[int](t, ctx, `document.querySelector("#report img").naturalWidth`)
	title := eval[string](t, ctx, `document.title`)
	if cells != 2 || width != 40 || title == "owned" {
		t.Errorf("report page: %d table cells, plot %d px wide, title %q; want 2, 40 and the report's own", cells, width, title)
	}
	screenshot(t, ctx, "results.png")

	for _, p := range []string{"/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd"} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", p)
		resp, _ := io.ReadAll(conn)
		conn.Close()
		if bytes.Contains(resp, []byte("root:")) {
			t.Errorf("GET %s served a file outside the results directory", p)
		}
	}
}
