package claude_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
)

// benchTurns is the number of timed turns after the first in each run.
const benchTurns = 10

// BenchmarkLiveVsDirect measures, over b.N runs (`go test -run '^$' -bench
// LiveVsDirect -benchtime 5x ./adapters/claude`): cold start to first
// answer, later-turn latency and peak RSS through Fabric (core, adapter
// host, claude), and the same for claude driven directly by a minimal
// stream-json client with the same flags, environment and endpoint,
// alternating sides. It reports medians and the later-turn ratio.
// FABRIC_CLAUDE_BENCH_BARE=1 measures both sides with --bare.
func BenchmarkLiveVsDirect(b *testing.B) {
	t := b
	runs := b.N
	_, native := harnessBin(t)
	var fCold, fTurn, dCold, dTurn []time.Duration
	var fRSS, dRSS []float64
	for i := range runs {
		// Alternate the order so that neither side always runs warm.
		order := []bool{true, false}
		if i%2 == 1 {
			order = []bool{false, true}
		}
		for _, viaFabric := range order {
			if viaFabric {
				cold, turns, rss := benchFabric(t)
				fCold, fTurn, fRSS = append(fCold, cold), append(fTurn, turns...), append(fRSS, rss)
			} else {
				cold, turns, rss := benchDirect(t, native)
				dCold, dTurn, dRSS = append(dCold, cold), append(dTurn, turns...), append(dRSS, rss)
			}
		}
	}
	mf, md := median(fTurn), median(dTurn)
	t.Logf("runs %d, %d timed turns each", runs, benchTurns)
	t.Logf("through Fabric: cold start to first answer %s, later turn %s, peak RSS (host + claude group) %.0f MiB",
		median(fCold).Round(time.Millisecond), mf.Round(100*time.Microsecond), medianF(fRSS))
	t.Logf("direct client:  cold start to first answer %s, later turn %s, peak RSS (claude group) %.0f MiB",
		median(dCold).Round(time.Millisecond), md.Round(100*time.Microsecond), medianF(dRSS))
	t.Logf("later-turn ratio Fabric/direct: %.3f", float64(mf)/float64(md))
	b.ReportMetric(float64(mf.Microseconds())/1000, "fabric-turn-ms")
	b.ReportMetric(float64(md.Microseconds())/1000, "direct-turn-ms")
	b.ReportMetric(float64(mf)/float64(md), "turn-ratio")
}

func medianF(xs []float64) float64 {
	ds := make([]time.Duration, len(xs))
	for i, x := range xs {
		ds[i] = time.Duration(x * 1000)
	}
	return float64(median(ds)) / 1000
}

func benchFabric(t testing.TB) (cold time.Duration, turns []time.Duration, rssMiB float64) {
	l := newLive(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	t0 := time.Now()
	settings := map[string]any{}
	if benchBare() {
		settings["bare"] = true
	}
	rt := l.Start(l.config(settings, nil))
	_, pgid, _ := claudeProcess(t, l.StateDir)
	rss := sampleRSS(rt.HostPid(), pgid)
	res, err := rt.Invoke(ctx, "What is 2+2?")
	if err != nil || res.Status != contract.StatusSucceeded {
		t.Fatalf("first turn: %+v, %v", res, err)
	}
	cold = time.Since(t0)
	for range benchTurns {
		t1 := time.Now()
		res, err := rt.Invoke(ctx, "And again?")
		if err != nil || res.Status != contract.StatusSucceeded {
			t.Fatalf("turn: %+v, %v", res, err)
		}
		turns = append(turns, time.Since(t1))
	}
	rssMiB = rss.Peak()
	if _, err := rt.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	return cold, turns, rssMiB
}

// benchDirect drives claude without Fabric: the adapter's flags and
// environment, stream-json on stdin/stdout, one result per turn.
func benchDirect(t testing.TB, bin string) (cold time.Duration, turns []time.Duration, rssMiB float64) {
	l := newLive(t)
	root := t.TempDir()
	home, tmp := filepath.Join(root, "home"), filepath.Join(root, "tmp")
	for _, d := range []string{filepath.Join(home, ".claude"), tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
		"--include-partial-messages", "--no-session-persistence", "--permission-mode", "default",
		"--model", "claude-fabric-test", "--setting-sources", ""}
	if benchBare() {
		args = append(args, "--bare")
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = l.Workspace
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"), "TMPDIR=" + tmp,
		"ANTHROPIC_BASE_URL=" + l.Stub.AnthropicBaseURL(), "ANTHROPIC_API_KEY=" + l.Key,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1", "DISABLE_BUG_COMMAND=1",
		// The same proxy trap as the Fabric side.
		"HTTPS_PROXY=" + l.Proxy.URL, "HTTP_PROXY=" + l.Proxy.URL, "https_proxy=" + l.Proxy.URL, "http_proxy=" + l.Proxy.URL,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}()
	rss := sampleRSS(cmd.Process.Pid, cmd.Process.Pid)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 64<<20)
	send := func(v any) {
		b, _ := json.Marshal(v)
		if _, err := stdin.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	waitFor := func(typ string) {
		for sc.Scan() {
			var m struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(sc.Bytes(), &m) == nil && m.Type == typ {
				return
			}
		}
		t.Fatalf("claude ended before %s: %v", typ, sc.Err())
	}
	turn := func(text string, n int) {
		send(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": text}}},
			"parent_tool_use_id": nil, "session_id": "", "uuid": fmt.Sprintf("00000000-0000-4000-8000-%012d", n)})
		waitFor("result")
	}
	send(map[string]any{"type": "control_request", "request_id": "init", "request": map[string]any{"subtype": "initialize"}})
	waitFor("control_response")
	turn("What is 2+2?", 0)
	cold = time.Since(t0)
	for i := range benchTurns {
		t1 := time.Now()
		turn("And again?", i+1)
		turns = append(turns, time.Since(t1))
	}
	return cold, turns, rss.Peak()
}

func benchBare() bool { return os.Getenv("FABRIC_CLAUDE_BENCH_BARE") == "1" }
