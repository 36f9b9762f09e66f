package ui_test

import (
	"context"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/sessionlog/sessionlog/ui"
)

var screenshot = flag.String("ui.screenshot", "", "write the browser test's screenshot of the cache chart to `PATH` (PNG when it ends in .png, else JPEG; default: the test's temp dir)")

// TestBrowser drives the UI in headless Chromium (Debian's chromium
// package): the session list, a session, a step, the cache chart and the
// diff, checking the rendered text, and the hostile session's pages,
// checking that no script runs. It saves a screenshot of the cache chart.
func TestBrowser(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed, and CI must run the browser test: .ci/chromium.sh installs it")
		}
		t.Skip("chromium is not installed (apt-get install chromium, or .ci/chromium.sh)")
	}
	f := newFixture(t)
	ts := httptest.NewServer(f.srv)
	defer ts.Close()

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()

	// Any dialog (alert, confirm) means hostile content ran.
	if err := chromedp.Do(bctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var dialogs []string
	err = chromedp.Listen(bctx, func(ev any) {
		if d, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			mu.Lock()
			dialogs = append(dialogs, d.Message)
			mu.Unlock()
			go chromedp.Call(bctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	})
	if err != nil {
		t.Fatal(err)
	}

	text := func(sel string) (string, error) { return chromedp.Run(bctx, chromedp.Text(chromedp.CSS(sel))) }
	visible := func(sel string) chromedp.Action[chromedp.Void] { return chromedp.WaitVisible(chromedp.CSS(sel)) }
	click := func(sel string) chromedp.Action[chromedp.Void] { return chromedp.Click(chromedp.CSS(sel)) }
	var list, timeline, digest, messages, totals, relation string
	var shot []byte
	must := func(v string, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	do := func(steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(bctx, steps...); err != nil {
			t.Fatal(err)
		}
	}
	do(chromedp.Navigate(ts.URL+"/"), visible("#sessions"))
	list = must(text("#sessions"))
	do(click(`a.session[href="/s/plain"]`), visible("#timeline"))
	timeline = must(text("#timeline"))
	do(click(`a.step[href="/s/plain/step/1.2"]`), visible("#digest"))
	digest = must(text("#digest"))
	messages = must(text("#messages"))
	do(click("#cache"), visible("#chart"))
	totals = must(text("#totals"))
	quality := 70 // JPEG
	if strings.HasSuffix(*screenshot, ".png") {
		quality = 100 // chromedp writes PNG at 100
	}
	shot, err = chromedp.Run(bctx, chromedp.FullScreenshot(quality))
	if err != nil {
		t.Fatal(err)
	}
	do(chromedp.Navigate(ts.URL+"/s/plain/step/1.2"), visible("#diff"), click("#diff"), visible("#relation"))
	relation = must(text("#relation"))
	checks := []struct{ what, got, want string }{
		{"session list", list, "plain-child"},
		{"timeline", timeline, "step/start 1.1"},
		{"timeline", timeline, "list the files"},
		{"digest", digest, ""},
		{"messages", messages, "[2] user · new"},
		{"totals", totals, "reusable"},
		{"diff", relation, "The first 1 messages are identical; 2 appended."},
	}
	for _, c := range checks {
		if !strings.Contains(c.got, c.want) {
			t.Errorf("%s: %q lacks %q", c.what, c.got, c.want)
		}
	}
	if len(digest) != 64 {
		t.Errorf("digest %q is not 64 hex digits", digest)
	}
	path := *screenshot
	if path == "" {
		path = filepath.Join(t.TempDir(), "cache.jpg")
	}
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the cache chart: %s (%d bytes)", path, len(shot))

	// The hostile session: every page renders, its hostile strings show
	// as text, and nothing runs.
	hostile := ts.URL + "/s/" + esc(hostileID)
	for _, p := range []string{"", "/step/1.2", "/step/2.1", "/cache", "/diff?a=1.2&b=3.1", "/verify"} {
		do(chromedp.Navigate(hostile+p), visible("h1"))
		h1, body := must(text("h1")), must(text("main"))
		title := must(chromedp.Run(bctx, chromedp.Title()))
		if !strings.Contains(h1, hostileID) {
			t.Errorf("%s: heading %q does not show the id as text", p, h1)
		}
		if !strings.Contains(title, "sessionlog") {
			t.Errorf("%s: title %q was broken", p, title)
		}
		if p == "/step/1.2" && (!strings.Contains(body, hostileTool) || !strings.Contains(body, `<script>alert(5)</script>`)) {
			t.Errorf("%s: the hostile tool name or prompt is not shown as text:\n%s", p, body)
		}
	}
	// Sessions named . and .. (issue 19, item 11): the browser follows
	// their links to their own pages, not to the session list.
	one := []byte(`{"turns":[{"prompt":"hello","replies":[[{"type":"text","text":"hi"}]]}]}`)
	dots, err := ui.New(storeOf(t, map[string][]byte{".": one, "..": one}), nil)
	if err != nil {
		t.Fatal(err)
	}
	ts2 := httptest.NewServer(dots)
	defer ts2.Close()
	for _, id := range []string{".", ".."} {
		var h1, loc string
		do(chromedp.Navigate(ts2.URL+"/"), visible("#sessions"))
		do(click(fmt.Sprintf(`a.session[href="%s"]`, "/s/~"+id)), visible("h1"))
		h1 = must(text("h1"))
		loc = must(chromedp.Run(bctx, chromedp.Location()))
		if h1 != "Session "+id || !strings.HasSuffix(loc, "/s/~"+id) {
			t.Errorf("the link to session %q led to %s, %q", id, loc, h1)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(dialogs) > 0 {
		t.Fatalf("hostile content ran: dialogs %q", dialogs)
	}
}
