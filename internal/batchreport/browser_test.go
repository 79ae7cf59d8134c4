package batchreport

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fabric-runtime/fabric/internal/browsertest"
)

// TestIndexRendersInChromium opens index.html from file:// in headless
// Chromium: every chart's <svg> is there with a non-zero size, the page
// raised no CSP violation, and a full-page screenshot is kept.
func TestIndexRendersInChromium(t *testing.T) {
	chromium := browsertest.Require(t)
	dir := t.TempDir()
	if err := Write(filepath.Join(dir, "report"), fixture()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := browsertest.Start(ctx, browsertest.Options{Path: chromium, Width: 1280, Height: 900})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Do(20*time.Second, chromedp.Navigate("file://"+filepath.Join(dir, "report", "index.html"))); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitFor(10*time.Second, `document.readyState === "complete"`); err != nil {
		t.Fatal(err)
	}
	for _, id := range svgIDs {
		size, err := browsertest.Eval[[]float64](b, 5*time.Second,
			`(() => { const s = document.querySelector("#`+id+` svg"); if (!s) return [0, 0]; const r = s.getBoundingClientRect(); return [r.width, r.height]; })()`)
		if err != nil {
			t.Fatal(err)
		}
		if len(size) != 2 || size[0] <= 0 || size[1] <= 0 {
			t.Errorf("chart %s: size %v", id, size)
		}
	}
	// The sorting script ran under the page's CSP: a click sorts.
	sorted, err := browsertest.Eval[bool](b, 5*time.Second,
		`(() => { const th = document.querySelector("#leaderboard-table th:nth-child(2)"); th.click(); return th.dataset.dir === "asc"; })()`)
	if err != nil || !sorted {
		t.Errorf("table sort did not run (CSP?): %v, %v", sorted, err)
	}
	shot := filepath.Join(dir, "batch-report.png")
	if err := b.Screenshot(20*time.Second, shot); err != nil {
		t.Fatal(err)
	}
	browsertest.KeepArtifact(t, shot, "batch-report.png")
	browsertest.KeepArtifact(t, filepath.Join(dir, "report", "index.html"), "batch-report.html")
}
