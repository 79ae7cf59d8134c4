package browsertest

import (
	"context"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"go.uber.org/goleak"

	"github.com/fabric-runtime/fabric/internal/procfs"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const page = `<!doctype html><html><head><title>browsertest</title></head><body>
<p id="hash"></p>
<textarea aria-label="composer"></textarea><button id="send">Send</button>
<ul id="log"></ul>
<script>
document.getElementById('hash').textContent = 'token:' + location.hash.slice(1);
document.getElementById('send').onclick = async () => {
  const t = document.querySelector('textarea');
  const r = await fetch('/echo?m=' + encodeURIComponent(t.value));
  const li = document.createElement('li'); li.textContent = await r.text();
  document.getElementById('log').appendChild(li); t.value = '';
};
</script></body></html>`

// TestDriveAPage: the browser loads a loopback page with a URL fragment,
// types and clicks like a person, sees the page's answer, takes a PNG
// screenshot, and is gone with its profile after Close.
func TestDriveAPage(t *testing.T) {
	chromium := Require(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/echo" {
			w.Write([]byte("echo: " + r.URL.Query().Get("m")))
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(page))
	}))
	defer srv.Close()

	var log strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := Start(ctx, Options{Path: chromium, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Do(20*time.Second, chromedp.Navigate(srv.URL+"/#secret-fragment")); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitFor(20*time.Second, `document.getElementById('hash').textContent === 'token:secret-fragment'`); err != nil {
		t.Fatal(err)
	}
	if err := b.Do(20*time.Second,
		chromedp.SendKeys(chromedp.CSS(`textarea[aria-label="composer"]`), "hello browser"),
		chromedp.Click(chromedp.CSS(`#send`)),
	); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitFor(20*time.Second, `document.body.innerText.includes('echo: hello browser')`); err != nil {
		t.Fatal(err)
	}
	title, err := Eval[string](b, 5*time.Second, "document.title")
	if err != nil || title != "browsertest" {
		t.Fatalf("title %q, %v", title, err)
	}
	shot := filepath.Join(t.TempDir(), "page.png")
	if err := b.Screenshot(20*time.Second, shot); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if r := img.Bounds(); r.Dx() < 100 || r.Dy() < 100 {
		t.Errorf("screenshot is %v", r)
	}
	KeepArtifact(t, shot, "browsertest-page.png")

	profile := b.profile
	b.Close()
	if _, err := os.Stat(profile); !os.IsNotExist(err) {
		t.Errorf("profile %s left after Close: %v", profile, err)
	}
	if left := processesUsing(profile); len(left) > 0 {
		t.Errorf("browser processes %v left after Close", left)
	}
}

// TestWaitForTimesOut: WaitFor gives up at its timeout with an error that
// names the expression.
func TestWaitForTimesOut(t *testing.T) {
	chromium := Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := Start(ctx, Options{Path: chromium})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	t0 := time.Now()
	err = b.WaitFor(700*time.Millisecond, "window.neverTrue === 1")
	if err == nil || !strings.Contains(err.Error(), "window.neverTrue") {
		t.Fatalf("err %v", err)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("WaitFor took %s", d)
	}
}

// TestFindHonoursOverride: $FABRIC_CHROMIUM wins, and a missing one is an
// error.
func TestFindHonoursOverride(t *testing.T) {
	t.Setenv(EnvChromium, "/nonexistent/chromium")
	if _, err := Find(); err == nil {
		t.Fatal("Find accepted a missing browser")
	}
	sh, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvChromium, sh)
	if p, err := Find(); err != nil || p != sh {
		t.Fatalf("Find = %q, %v", p, err)
	}
}

// processesUsing lists live processes whose command line mentions s.
func processesUsing(s string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(data), s) {
			continue
		}
		pid, _ := strconv.Atoi(e.Name())
		if st, err := procfs.Default.Stat(pid); err == nil && !st.Live() {
			continue
		}
		out = append(out, e.Name())
	}
	return out
}
