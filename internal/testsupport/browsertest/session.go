package browsertest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Page is a browser started for one test: Fail and Picture keep what a
// person would look at.
type Page struct {
	*Browser
	t    testing.TB
	name string
	shot string
}

// Session starts the browser at chromium for t, with its log in t's
// temporary directory, closed when t ends; name ("openclaw-dashboard")
// names the screenshots it keeps.
func Session(t testing.TB, chromium, name string) *Page {
	t.Helper()
	logf, err := os.Create(filepath.Join(t.TempDir(), "chromium.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = logf.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	b, err := Start(ctx, Options{Path: chromium, Log: logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return &Page{Browser: b, t: t, name: name, shot: filepath.Join(t.TempDir(), name+".png")}
}

// Fail keeps a screenshot of the page (name-failure.png) and fails the
// test with the message and the page's text.
func (p *Page) Fail(format string, args ...any) {
	p.t.Helper()
	if err := p.Screenshot(10*time.Second, p.shot); err == nil {
		KeepArtifact(p.t, p.shot, p.name+"-failure.png")
	}
	text, _ := Eval[string](p.Browser, 5*time.Second, "document.body ? document.body.innerText.slice(0, 2000) : ''")
	p.t.Fatalf(format+"\npage text:\n%s", append(args, text)...)
}

// Picture lets the page settle for half a second, takes its screenshot
// and returns the file's path.
func (p *Page) Picture() string {
	p.t.Helper()
	time.Sleep(500 * time.Millisecond) // rendering has no event to wait for
	if err := p.Screenshot(20*time.Second, p.shot); err != nil {
		p.t.Fatal(err)
	}
	return p.shot
}
