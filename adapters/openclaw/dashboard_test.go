//go:build linux

package openclaw_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fabric-runtime/fabric/internal/testsupport/browsertest"
)

// dashboardAnswer is what the scripted model answers the Control UI.
const dashboardAnswer = "DASHBOARD_ANSWER_4242"

// signInAndChat opens the Control UI with the token in the URL fragment,
// waits for the signed-in chat, sends a message and waits for the scripted
// answer. It returns the screenshot's path.
func signInAndChat(t *testing.T, chromium string, port int, token string) string {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "chromium.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := browsertest.Start(ctx, browsertest.Options{Path: chromium, Log: logf})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	shot := filepath.Join(t.TempDir(), "openclaw-dashboard.png")
	fail := func(format string, args ...any) {
		t.Helper()
		if err := b.Screenshot(10*time.Second, shot); err == nil {
			browsertest.KeepArtifact(t, shot, "openclaw-dashboard-failure.png")
		}
		text, _ := browsertest.Eval[string](b, 5*time.Second, "document.body ? document.body.innerText.slice(0, 2000) : ''")
		t.Fatalf(format+"\npage text:\n%s", append(args, text)...)
	}

	url := fmt.Sprintf("http://127.0.0.1:%d/#token=%s", port, token)
	if err := b.Do(30*time.Second, chromedp.Navigate(url)); err != nil {
		fail("open the Control UI: %v", err)
	}
	// Signed in: the chat composer is there and the UI says it is
	// connected (it would show its sign-in form otherwise).
	composer := `textarea[aria-label="Chat composer"]`
	if err := b.WaitFor(90*time.Second, `document.querySelector('`+composer+`') && /Connected/.test(document.body.innerText)`); err != nil {
		fail("the Control UI did not sign in: %v", err)
	}
	if err := b.Do(20*time.Second,
		chromedp.Click(chromedp.CSS(composer)),
		chromedp.SendKeys(chromedp.CSS(composer), "BROWSER_QUESTION_77 hello from the dashboard"),
	); err != nil {
		fail("type the message: %v", err)
	}
	// The send button is enabled once the composer holds text.
	send := `button.chat-send-btn--send`
	if err := b.WaitFor(20*time.Second, `document.querySelector('`+composer+`').value.includes('BROWSER_QUESTION_77') && document.querySelector('`+send+`') && !document.querySelector('`+send+`').disabled`); err != nil {
		fail("the message was not typed: %v", err)
	}
	if err := b.Do(20*time.Second, chromedp.Click(chromedp.CSS(send))); err != nil {
		fail("send the message: %v", err)
	}
	if err := b.WaitFor(150*time.Second, `document.body.innerText.includes('`+dashboardAnswer+`')`); err != nil {
		fail("the scripted answer did not appear in the Control UI: %v", err)
	}
	time.Sleep(500 * time.Millisecond) // let the page settle for the picture
	if err := b.Screenshot(20*time.Second, shot); err != nil {
		t.Fatal(err)
	}
	return shot
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
