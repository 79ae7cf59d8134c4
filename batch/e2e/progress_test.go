package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
)

var progressLine = regexp.MustCompile(`^\d+/\d+  passed \d+  failed \d+  error \d+  running \d+  pass@1 \S+  \S+$`)

func TestProgressPlainAndJSONL(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"slow.yaml":  agent("answer to {input}", 300),
		"batch.yaml": spec(4, 1, "  - {id: a, config: slow.yaml}\n", "limits: {concurrency: 1}\n"),
	})
	code, stdout, stderr := runBatch(t, dir, "batch.yaml", "--dir", "run", "-o", "jsonl", "--progress-interval", "200ms")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	plain := strings.Split(strings.TrimSpace(stderr), "\n")
	if len(plain) < 3 {
		t.Errorf("stderr has %d progress lines, want several (one each 200 ms):\n%s", len(plain), stderr)
	}
	for _, l := range plain {
		if !progressLine.MatchString(l) {
			t.Errorf("not a progress line: %q", l)
		}
		if strings.Contains(l, "\r") || strings.Contains(l, "\x1b") {
			t.Errorf("terminal control in non-terminal output: %q", l)
		}
	}
	if last := plain[len(plain)-1]; !strings.HasPrefix(last, "4/4  passed 4") {
		t.Errorf("last progress line %q, want 4/4 passed 4", last)
	}
	var kinds []string
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("stdout line is not JSON: %q", sc.Text())
		}
		kinds = append(kinds, e["event"].(string))
	}
	want := strings.Repeat("trial_start trial_end ", 4) + "summary"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("jsonl events %q, want %q", got, want)
	}
}

// TestProgressOnATerminal runs the batch in a tmux pane: the progress is
// one line, redrawn, and the leaderboard follows it.
func TestProgressOnATerminal(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		livetest.Missing(t, "tmux", "scripts/install-test-deps", err)
	}
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"slow.yaml":  agent("answer to {input}", 400),
		"batch.yaml": spec(5, 1, "  - {id: a, config: slow.yaml}\n", "limits: {concurrency: 1}\n"),
	})
	sock := filepath.Join(dir, "tmux.sock")
	donefile := filepath.Join(dir, "done") // renamed into place: never read half-written
	shell := "cd " + dir + " && " + filepath.Join(bins, "fabric") + " batch run batch.yaml --dir run; echo EXIT=$? > " + donefile + ".tmp; mv " + donefile + ".tmp " + donefile + "; sleep 60"
	start := exec.Command(tmux, "-S", sock, "new-session", "-d", "-x", "160", "-y", "20", "sh", "-c", shell)
	start.Env = append(os.Environ(), "TMPDIR="+dir)
	if out, err := start.CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command(tmux, "-S", sock, "kill-server").Run() })
	capture := func() string {
		out, _ := exec.Command(tmux, "-S", sock, "capture-pane", "-p").Output()
		return string(out)
	}
	// While it runs: exactly one progress line on the screen.
	testproc.Eventually(t, 30*time.Second, "a progress line", func() bool { return strings.Contains(capture(), "passed 1") })
	screen := capture()
	n := 0
	for _, l := range strings.Split(screen, "\n") {
		if progressLine.MatchString(strings.TrimRight(l, " ")) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d progress lines on the terminal while running, want 1 redrawn line:\n%s", n, screen)
	}
	testproc.Eventually(t, 60*time.Second, "the batch to end", func() bool { _, err := os.Stat(donefile); return err == nil })
	b, _ := os.ReadFile(donefile)
	if strings.TrimSpace(string(b)) != "EXIT=0" {
		t.Errorf("exit: %s", b)
	}
	screen = capture()
	if !strings.Contains(screen, "5/5  passed 5") || !strings.Contains(screen, "pass@1") || !strings.Contains(screen, "completion 100%") {
		t.Errorf("final screen lacks the last progress line or the leaderboard:\n%s", screen)
	}
	if artifacts := os.Getenv("FABRIC_TEST_ARTIFACTS"); artifacts != "" {
		_ = os.WriteFile(filepath.Join(artifacts, "batch-progress-tty.txt"), []byte(screen), 0o644)
	}
}
