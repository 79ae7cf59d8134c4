package batchreport

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fabric-runtime/fabric/internal/testsupport/browsertest"
)

// overflowJS lists every table wider than the page or than the box it
// sits in (a box that would scroll sideways), by its first header.
const overflowJS = `(() => {
  const width = document.documentElement.clientWidth, bad = [];
  const name = el => { const t = el.closest('section, div.pair, div.wide'); const h = t && t.previousElementSibling; return (el.id || (h && h.id) || el.querySelector('th')?.textContent || '?'); };
  document.querySelectorAll('table').forEach(t => {
    const r = t.getBoundingClientRect();
    if (r.right > width + 0.5) bad.push(name(t) + ': right edge ' + Math.round(r.right) + ' > ' + width);
  });
  document.querySelectorAll('.wide, .tbl').forEach(b => {
    if (b.scrollWidth > b.clientWidth + 1) bad.push(name(b.querySelector('table') || b) + ': scrolls ' + b.scrollWidth + ' > ' + b.clientWidth);
  });
  if (document.documentElement.scrollWidth > width + 1) bad.push('page scrolls sideways: ' + document.documentElement.scrollWidth);
  return bad;
})()`

// openReport opens index.html from file:// at the given window width and
// checks what every report must do there: each chart's <svg> has a
// non-zero size and no table is cut or scrolls sideways.
func openReport(t *testing.T, index string, width int) *browsertest.Browser {
	t.Helper()
	chromium := browsertest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	b, err := browsertest.Start(ctx, browsertest.Options{Path: chromium, Width: width, Height: 900})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	if err := b.Do(20*time.Second, chromedp.Navigate("file://"+index)); err != nil {
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
	bad, err := browsertest.Eval[[]string](b, 5*time.Second, overflowJS)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range bad {
		t.Errorf("at %d px: %s", width, s)
	}
	return b
}

func screenshot(t *testing.T, b *browsertest.Browser, name string) {
	t.Helper()
	shot := filepath.Join(t.TempDir(), name)
	if err := b.Screenshot(20*time.Second, shot); err != nil {
		t.Fatal(err)
	}
	browsertest.KeepArtifact(t, shot, name)
}

// TestIndexRendersInChromium opens the fixture's index.html in headless
// Chromium at 1280 px: every chart is there, nothing is clipped, the page
// raised no CSP violation (the sorting script runs), and a full-page
// screenshot is kept.
func TestIndexRendersInChromium(t *testing.T) {
	dir := t.TempDir()
	if err := Write(filepath.Join(dir, "report"), fixture()); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, "report", "index.html")
	b := openReport(t, index, 1280)
	// The sorting script ran under the page's CSP: a click sorts.
	sorted, err := browsertest.Eval[bool](b, 5*time.Second,
		`(() => { const th = document.querySelector("#leaderboard-table th:nth-child(2)"); th.click(); return th.dataset.dir === "asc"; })()`)
	if err != nil || !sorted {
		t.Errorf("table sort did not run (CSP?): %v, %v", sorted, err)
	}
	screenshot(t, b, "batch-report.png")
	browsertest.KeepArtifact(t, index, "batch-report.html")
}

// TestReportScreenshot checks and screenshots a report at a width:
// by default the fixture's, at 1280 px (with FABRIC_REPORT_WIDTH too);
// FABRIC_REPORT_HTML=/path/report/index.html checks any report,
// e.g. ./scripts/demo batch's, at FABRIC_REPORT_WIDTH (default 1280), and
// keeps batch-report-<width>.png.
func TestReportScreenshot(t *testing.T) {
	index := os.Getenv("FABRIC_REPORT_HTML")
	width := 1280
	if index == "" {
		dir := t.TempDir()
		if err := Write(filepath.Join(dir, "report"), fixture()); err != nil {
			t.Fatal(err)
		}
		index = filepath.Join(dir, "report", "index.html")
	}
	if w, err := strconv.Atoi(os.Getenv("FABRIC_REPORT_WIDTH")); err == nil && w > 0 {
		width = w
	}
	abs, err := filepath.Abs(index)
	if err != nil {
		t.Fatal(err)
	}
	b := openReport(t, abs, width)
	name := "batch-report-" + strconv.Itoa(width)
	// FABRIC_REPORT_ONLY=timeline keeps only that section (its h2 up to
	// the next), for a closer look.
	if only := os.Getenv("FABRIC_REPORT_ONLY"); only != "" {
		if _, err := browsertest.Eval[bool](b, 5*time.Second, `(() => {
  let keep = false;
  for (const el of Array.from(document.body.children)) {
    if (el.tagName === 'H2') keep = el.id === `+strconv.Quote(only)+`;
    if (!keep && el.tagName !== 'SCRIPT') el.remove();
  }
  return true; })()`); err != nil {
			t.Fatal(err)
		}
		name += "-" + only
	}
	screenshot(t, b, name+".png")
}
