//go:build linux

package opencode_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fabric-runtime/fabric/internal/testsupport/browsertest"
)

// openWebUI opens the runtime's session in OpenCode's web UI with the
// per-start credential (HTTP Basic, user opencode) and waits until the
// page shows the runtime's conversation. It returns the screenshot's path.
func openWebUI(t *testing.T, chromium string, port int, password, dir, sessionID string) string {
	t.Helper()
	b := browsertest.Session(t, chromium, "opencode-web")
	// The credential in the URL: Chromium answers the Basic challenge
	// with it and keeps it for the page's own requests.
	url := fmt.Sprintf("http://%s:%s@127.0.0.1:%d%s", webUser, password, port, webSessionPath(dir, sessionID))
	if err := b.Do(30*time.Second, chromedp.Navigate(url)); err != nil {
		b.Fail("open the web UI: %v", err)
	}
	if err := b.WaitFor(90*time.Second, `document.body.innerText.includes('FIRST_QUESTION') && document.body.innerText.includes('SECOND_ANSWER_5510')`); err != nil {
		b.Fail("the web UI does not show the runtime's conversation: %v", err)
	}
	return b.Picture()
}

// attachInTmux runs the terminal launcher in a detached tmux session of
// its own server (socket in a temporary directory) and waits until the
// pane shows want; the session is killed afterwards.
func attachInTmux(t *testing.T, tmux, launcher, want string) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	run := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, tmux, append([]string{"-S", sock}, args...)...).CombinedOutput()
		return string(out), err
	}
	if out, err := run("new-session", "-d", "-s", "fabric", "-x", "200", "-y", "50", launcher+"; echo launcher exited $?; sleep 120"); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	defer func() {
		if out, err := run("kill-server"); err != nil {
			t.Logf("tmux kill-server: %v %s", err, out)
		}
	}()
	var pane string
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		out, err := run("capture-pane", "-p", "-t", "fabric")
		if err != nil {
			t.Fatalf("tmux capture-pane: %v\n%s", err, out)
		}
		pane = out
		if strings.Contains(pane, want) {
			t.Logf("the terminal shows the runtime's session:\n%s", lastLines(pane, 25))
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("the terminal did not show %q within 90 s; pane:\n%s", want, pane)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
