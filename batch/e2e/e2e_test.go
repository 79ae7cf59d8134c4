package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
)

func write(t *testing.T, dir string, fs map[string]string) {
	t.Helper()
	for name, content := range fs {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func agent(response string, delayMS int) string {
	return fmt.Sprintf(`schema_version: fabric.agent/v1alpha1
metadata: {name: e2e}
runtime: {timeout_seconds: 60}
harness:
  adapter_id: fabric.scripted
  settings: {response: %q, delay_ms: %d}
`, response, delayMS)
}

// spec is n tasks x the configs block x repeats.
func spec(n, repeats int, configs, extra string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "schema_version: fabric.batch/v1alpha1\nmetadata: {name: e2e}\nrepeats: %d\ntasks:\n  items:\n", repeats)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "    - {id: t%02d, input: {text: \"task %d\"}}\n", i, i)
	}
	b.WriteString("configs:\n" + configs + "grader: {kind: output_match, match: {contains: \"task\"}}\n" + extra)
	return b.String()
}

// fabric returns a command running the built fabric in dir.
func fabric(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(bins, "fabric"), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+dir)
	return cmd
}

// runBatch runs fabric batch run to its end and returns its exit code,
// stdout and stderr.
func runBatch(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	cmd := fabric(dir, append([]string{"batch", "run"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

func lines(t *testing.T, p string) []string {
	t.Helper()
	b, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// noOrphans fails when a process still mentions dir (the batch's hosts
// and harnesses run with their state under it).
func noOrphans(t *testing.T, dir string) {
	t.Helper()
	testproc.Eventually(t, 10*time.Second, "the batch's processes to exit", func() bool { return len(testproc.Mentioning(dir)) == 0 })
}

func summary(t *testing.T, batchDir string) contract.BatchSummary {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(batchDir, "report", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s contract.BatchSummary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// counts are a summary's counts, without timings.
func counts(s contract.BatchSummary) map[string]any {
	out := map[string]any{"totals": s.Totals, "completion": s.Completion}
	for _, c := range s.Configs {
		out[c.Config] = []any{c.BatchCounts, c.Errors, c.PassAt1.Strict, c.PassAt1.Scored}
	}
	return out
}

func TestResumeAfterKill(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"slow.yaml":  agent("answer to {input}", 250),
		"batch.yaml": spec(10, 1, "  - {id: a, config: slow.yaml}\n  - {id: b, config: slow.yaml}\n", "limits: {concurrency: 4}\n"),
	})
	// An uninterrupted run, for the figures.
	ref := t.TempDir()
	write(t, ref, map[string]string{"slow.yaml": agent("answer to {input}", 250), "batch.yaml": spec(10, 1, "  - {id: a, config: slow.yaml}\n  - {id: b, config: slow.yaml}\n", "limits: {concurrency: 4}\n")})
	if code, _, stderr := runBatch(t, ref, "batch.yaml", "--dir", "run"); code != 0 {
		t.Fatalf("reference run exit %d: %s", code, stderr)
	}

	results := filepath.Join(dir, "run", "results.jsonl")
	cmd := fabric(dir, "batch", "run", "batch.yaml", "--dir", "run")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	testproc.Eventually(t, 60*time.Second, "6 committed trials", func() bool { return len(lines(t, results)) >= 6 })
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	noOrphans(t, dir)
	before := lines(t, results)
	done := map[string][]byte{}
	for _, l := range before {
		var e struct{ Path string }
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "run", e.Path))
		if err != nil {
			t.Fatal(err)
		}
		done[e.Path] = b
	}

	code, _, stderr := runBatch(t, dir, "batch.yaml", "--dir", "run")
	if code != 0 {
		t.Fatalf("resumed run exit %d: %s", code, stderr)
	}
	after := lines(t, results)
	if len(after) != 20 {
		t.Errorf("results.jsonl has %d lines after the resume, want 20 (each trial committed once)", len(after))
	}
	for p, b := range done {
		now, err := os.ReadFile(filepath.Join(dir, "run", p))
		if err != nil || !bytes.Equal(now, b) {
			t.Errorf("%s changed on resume: a done trial ran again", p)
		}
	}
	partial, _ := filepath.Glob(filepath.Join(dir, "run", ".incomplete", "*"))
	if len(partial) == 0 {
		t.Error(".incomplete/ is empty: the trials running at the kill left no partial directory")
	}
	if diff := cmp.Diff(counts(summary(t, filepath.Join(ref, "run"))), counts(summary(t, filepath.Join(dir, "run")))); diff != "" {
		t.Errorf("summary after kill and resume differs from an uninterrupted run (-uninterrupted +resumed):\n%s", diff)
	}

	// A third run is a no-op.
	code, _, stderr = runBatch(t, dir, "batch.yaml", "--dir", "run")
	if code != 0 || len(lines(t, results)) != 20 {
		t.Errorf("third run: exit %d, %d result lines; want 0 and 20 (%s)", code, len(lines(t, results)), stderr)
	}
	noOrphans(t, dir)
}

func TestAmendAndChange(t *testing.T) {
	dir := t.TempDir()
	configs := "  - {id: a, config: fast.yaml}\n"
	write(t, dir, map[string]string{"fast.yaml": agent("answer to {input}", 0), "batch.yaml": spec(2, 1, configs, "")})
	if code, _, stderr := runBatch(t, dir, "batch.yaml", "--dir", "run"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	results := filepath.Join(dir, "run", "results.jsonl")
	if n := len(lines(t, results)); n != 2 {
		t.Fatalf("%d results, want 2", n)
	}
	// One more repeat: only the two new trials run.
	write(t, dir, map[string]string{"batch.yaml": spec(2, 2, configs, "")})
	if code, _, stderr := runBatch(t, dir, "batch.yaml", "--dir", "run"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := lines(t, results)
	if len(got) != 4 || !strings.Contains(got[2], "__r02") || !strings.Contains(got[3], "__r02") {
		t.Fatalf("results after adding a repeat: %v; want two more, both of repeat 2", got)
	}
	// A changed config: refused, exit 2, nothing run.
	write(t, dir, map[string]string{"fast.yaml": agent("another answer to {input}", 0)})
	code, stdout, _ := runBatch(t, dir, "batch.yaml", "--dir", "run")
	if code != 2 || !strings.Contains(stdout, `"code": "batch_spec_changed"`) {
		t.Fatalf("changed config: exit %d, stdout %s; want 2 and batch_spec_changed", code, stdout)
	}
	if n := len(lines(t, results)); n != 4 {
		t.Errorf("%d results after the refusal, want 4", n)
	}
	if code, _, stderr := runBatch(t, dir, "batch.yaml", "--dir", "run", "--rerun-changed"); code != 0 || len(lines(t, results)) != 8 {
		t.Errorf("--rerun-changed: exit %d, %d results; want 0 and 8 (%s)", code, len(lines(t, results)), stderr)
	}
}

func TestInterrupt(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"slow.yaml":  agent("answer to {input}", 20000),
		"batch.yaml": spec(4, 1, "  - {id: a, config: slow.yaml}\n", "limits: {concurrency: 2}\n"),
	})
	cmd := fabric(dir, "batch", "run", "batch.yaml", "--dir", "run", "-o", "jsonl")
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	testproc.Eventually(t, 30*time.Second, "two running trials", func() bool {
		n := 0
		for _, id := range []string{"t01", "t02"} {
			if _, err := os.Stat(filepath.Join(dir, "run", "trials", id, "a", "r01", "attempts", "1", "events.jsonl")); err == nil {
				n++
			}
		}
		return n == 2
	})
	sent := time.Now()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	took := time.Since(sent)
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 3 {
		t.Fatalf("exit %v, want 3 (interrupted)", err)
	}
	if took > 5*time.Second {
		t.Errorf("the run took %s to end after SIGINT, want under 5 s", took)
	}
	noOrphans(t, dir)
	var cancelled []string
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var e map[string]any
		if json.Unmarshal(sc.Bytes(), &e) == nil && e["event"] == "trial_end" && e["outcome"] == contract.TrialCancelled {
			cancelled = append(cancelled, e["trial_id"].(string))
		}
	}
	if diff := cmp.Diff([]string{"t01__a__r01", "t02__a__r01"}, sortStrings(cancelled)); diff != "" {
		t.Errorf("cancelled trials (-want +got):\n%s", diff)
	}
	st := fabric(dir, "batch", "status", "run")
	b, err := st.Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"cancelled": 2`) || !strings.Contains(string(b), `"pending": 2`) {
		t.Errorf("status after the interrupt: %s; want 2 cancelled and 2 pending", b)
	}
	// The rerun (with a quick agent: a cancelled trial is not done, so its
	// changed digest is no refusal) runs exactly the cancelled and the
	// never-started trials, once each.
	write(t, dir, map[string]string{"slow.yaml": agent("answer to {input}", 0)})
	if code, _, stderr := runBatch(t, dir, "batch.yaml", "--dir", "run"); code != 0 {
		t.Fatalf("rerun exit %d: %s", code, stderr)
	}
	res := lines(t, filepath.Join(dir, "run", "results.jsonl"))
	if len(res) != 6 {
		t.Fatalf("results.jsonl: %d lines, want 2 cancelled + 4 rerun", len(res))
	}
	for _, l := range res[2:] {
		if !strings.Contains(l, `"outcome":"passed"`) {
			t.Errorf("rerun result %s, want passed", l)
		}
	}
}

func sortStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
