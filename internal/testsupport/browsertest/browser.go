package browsertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// EnvChromium names the variable that overrides which browser runs.
const EnvChromium = "FABRIC_CHROMIUM"

// candidates are the browser binaries looked for, in order.
var candidates = []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// Find returns the browser to run: $FABRIC_CHROMIUM, else the first of
// Debian's /usr/bin/chromium and the usual names on PATH.
func Find() (string, error) {
	if p := os.Getenv(EnvChromium); p != "" {
		if _, err := exec.LookPath(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvChromium, p, err)
		}
		return p, nil
	}
	for _, c := range candidates {
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no Chromium found (apt-get install chromium, or set %s): %w", EnvChromium, exec.ErrNotFound)
}

// Require returns the browser for t, or skips t when there is none, unless
// FABRIC_REQUIRE_HARNESSES=1 (CI), which makes a missing browser a failure.
func Require(t testing.TB) string {
	t.Helper()
	p, err := Find()
	if err == nil {
		return p
	}
	if os.Getenv("FABRIC_REQUIRE_HARNESSES") == "1" {
		t.Fatalf("browser: %v", err)
	}
	t.Skipf("browser: %v (FABRIC_REQUIRE_HARNESSES=1 makes this a failure)", err)
	return ""
}

// Options configure a Browser.
type Options struct {
	// Path is the browser binary (default: Find's answer).
	Path string
	// Width and Height are the window size (default 1280x900).
	Width, Height int
	// Log receives the browser's own output and chromedp's diagnostics
	// (default: discarded).
	Log io.Writer
}

// Browser is one headless Chromium with one tab.
type Browser struct {
	ctx     context.Context // the tab's context
	cancel  context.CancelFunc
	profile string
	once    sync.Once
}

// Start starts a headless Chromium and opens its tab. ctx bounds only the
// start; Close ends the browser.
func Start(ctx context.Context, o Options) (*Browser, error) {
	path := o.Path
	if path == "" {
		var err error
		if path, err = Find(); err != nil {
			return nil, err
		}
	}
	if o.Width <= 0 || o.Height <= 0 {
		o.Width, o.Height = 1280, 900
	}
	logw := o.Log
	if logw == nil {
		logw = io.Discard
	}
	profile, err := os.MkdirTemp("", "fabric-browsertest-")
	if err != nil {
		return nil, err
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(o.Width, o.Height),
		chromedp.DisableGPU,
		// Offline beyond loopback: every other host goes to a proxy that
		// refuses connections (loopback is never proxied).
		chromedp.ProxyServer("http://127.0.0.1:9"),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Env("HOME="+profile, "XDG_CONFIG_HOME="+filepath.Join(profile, ".config"), "XDG_CACHE_HOME="+filepath.Join(profile, ".cache")),
		chromedp.CombinedOutput(logw),
	)
	if os.Geteuid() == 0 {
		// Chromium's sandbox refuses to run as root.
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	logf := func(format string, args ...any) { fmt.Fprintf(logw, "chromedp: "+format+"\n", args...) }
	tctx, tcancel := chromedp.NewContext(actx, chromedp.WithLogf(logf), chromedp.WithErrorf(logf))
	b := &Browser{ctx: tctx, profile: profile}
	b.cancel = func() {
		tcancel()
		acancel()
	}
	// The first action starts the browser; it must not carry a deadline
	// (that would end the browser), so ctx is watched separately.
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(tctx) }()
	select {
	case err = <-started:
	case <-ctx.Done():
		b.Close()
		<-started
		err = ctx.Err()
	}
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("browsertest: start %s: %w", path, err)
	}
	return b, nil
}

// Context is the tab's chromedp context. Derive a context with a timeout
// from it to bound actions.
func (b *Browser) Context() context.Context { return b.ctx }

// Do runs actions on the tab within timeout.
func (b *Browser) Do(timeout time.Duration, steps ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	return chromedp.Do(ctx, steps...)
}

// Eval evaluates a JavaScript expression on the tab and returns its value
// as JSON-decoded into T.
func Eval[T any](b *Browser, timeout time.Duration, expr string) (T, error) {
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[T](expr))
}

// WaitFor polls a JavaScript expression until it is truthy, at most
// timeout.
func (b *Browser) WaitFor(timeout time.Duration, expr string) error {
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+expr+")"))
		if err == nil && ok {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			if last != nil && !errors.Is(last, context.DeadlineExceeded) {
				return fmt.Errorf("browsertest: waiting for %s: %w (last error: %v)", short(expr), ctx.Err(), last)
			}
			return fmt.Errorf("browsertest: waiting for %s: %w", short(expr), ctx.Err())
		case <-tick.C:
		}
	}
}

// Screenshot captures the whole page as PNG and writes it to path.
func (b *Browser) Screenshot(timeout time.Duration, path string) error {
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		return fmt.Errorf("browsertest: screenshot: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, png, 0o644)
}

// Close ends the browser, its whole process tree, and removes its
// profile. It is safe to call more than once.
func (b *Browser) Close() {
	b.once.Do(func() {
		b.cancel()
		_ = os.RemoveAll(b.profile)
	})
}

// KeepArtifact copies the file at path into $FABRIC_TEST_ARTIFACTS (when
// set) under name, and logs where it is.
func KeepArtifact(t testing.TB, path, name string) {
	t.Helper()
	t.Logf("artifact %s: %s", name, path)
	dir := os.Getenv("FABRIC_TEST_ARTIFACTS")
	if dir == "" {
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("artifact %s: %v", name, err)
		return
	}
	dst := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Errorf("artifact %s: %v", name, err)
		return
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Errorf("artifact %s: %v", name, err)
		return
	}
	t.Logf("artifact %s copied to %s", name, dst)
}

func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}
