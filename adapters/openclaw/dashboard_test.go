//go:build linux

package openclaw_test

import (
	"fmt"
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
	b := browsertest.Session(t, chromium, "openclaw-dashboard")

	url := fmt.Sprintf("http://127.0.0.1:%d/#token=%s", port, token)
	if err := b.Do(30*time.Second, chromedp.Navigate(url)); err != nil {
		b.Fail("open the Control UI: %v", err)
	}
	// Signed in: the chat composer is there and the UI says it is
	// connected (it would show its sign-in form otherwise).
	composer := `textarea[aria-label="Chat composer"]`
	if err := b.WaitFor(90*time.Second, `document.querySelector('`+composer+`') && /Connected/.test(document.body.innerText)`); err != nil {
		b.Fail("the Control UI did not sign in: %v", err)
	}
	if err := b.Do(20*time.Second,
		chromedp.Click(chromedp.CSS(composer)),
		chromedp.SendKeys(chromedp.CSS(composer), "BROWSER_QUESTION_77 hello from the dashboard"),
	); err != nil {
		b.Fail("type the message: %v", err)
	}
	// The send button is enabled once the composer holds text.
	send := `button.chat-send-btn--send`
	if err := b.WaitFor(20*time.Second, `document.querySelector('`+composer+`').value.includes('BROWSER_QUESTION_77') && document.querySelector('`+send+`') && !document.querySelector('`+send+`').disabled`); err != nil {
		b.Fail("the message was not typed: %v", err)
	}
	if err := b.Do(20*time.Second, chromedp.Click(chromedp.CSS(send))); err != nil {
		b.Fail("send the message: %v", err)
	}
	if err := b.WaitFor(150*time.Second, `document.body.innerText.includes('`+dashboardAnswer+`')`); err != nil {
		b.Fail("the scripted answer did not appear in the Control UI: %v", err)
	}
	return b.Picture()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
