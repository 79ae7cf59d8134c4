//go:build linux

package codex_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/codex"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
	"github.com/fabric-runtime/fabric/modelstub"
)

// TestLiveTimings measures, over FABRIC_CODEX_BENCH_RUNS runs (default
// 3): cold start to first answer through Fabric, the latency of warm turns
// (the second and later turns of a runtime) through Fabric and with a
// minimal direct JSON-RPC client of the same codex binary, arguments and
// endpoint, and the peak RSS of codex's process tree and of the adapter
// host. It reports medians; it asserts nothing
// about the numbers (they are benchmarks, not timed tests).
func TestLiveTimings(t *testing.T) {
	livetest.Short(t, "the real Codex CLI from harnesses/")
	runs := 3
	if n, err := strconv.Atoi(os.Getenv("FABRIC_CODEX_BENCH_RUNS")); err == nil && n > 0 {
		runs = n
	}
	l := newLive(t, &modelstub.Script{Default: &modelstub.Reply{Text: "4"}})
	var cold, second, direct, directCold []time.Duration
	var rssCodex, rssHost, rssDirect []int64
	for i := range runs {
		// Alternate which goes first; both are sampled for RSS the same way.
		fab := func() {
			c, s, rc, rh := fabricRun(t, l)
			cold, second, rssCodex, rssHost = append(cold, c), append(second, s...), append(rssCodex, rc), append(rssHost, rh)
		}
		dir := func() {
			dc, d, rd := directRun(t, l)
			directCold, direct, rssDirect = append(directCold, dc), append(direct, d...), append(rssDirect, rd)
		}
		if i%2 == 0 {
			fab()
			dir()
		} else {
			dir()
			fab()
		}
	}
	med := func(ds []time.Duration) time.Duration {
		s := slices.Clone(ds)
		slices.Sort(s)
		return s[len(s)/2]
	}
	medi := func(xs []int64) int64 {
		s := slices.Clone(xs)
		slices.Sort(s)
		return s[len(s)/2]
	}
	t.Logf("runs: %d", runs)
	t.Logf("cold start to first answer: Fabric %s, direct %s (medians; all Fabric %v)", med(cold), med(directCold), cold)
	t.Logf("warm-turn latency (turns 2-%d of each run, %d samples each): Fabric %s, direct %s, ratio %.3f",
		warmTurns+1, len(second), med(second), med(direct), float64(med(second))/float64(med(direct)))
	t.Logf("peak RSS: codex tree %d MiB under Fabric (%d MiB driven directly), adapter host %d MiB (medians)",
		medi(rssCodex)/1024, medi(rssDirect)/1024, medi(rssHost)/1024)
}

// sampler records the peak RSS of a set of processes every 25 ms.
type sampler struct {
	peak atomic.Int64
	stop chan struct{}
	wg   sync.WaitGroup
}

func sample(pids func() []int) *sampler {
	s := &sampler{stop: make(chan struct{})}
	s.wg.Go(func() {
		tick := time.NewTicker(25 * time.Millisecond)
		defer tick.Stop()
		for {
			if v := testproc.RSSKiB(pids()...); v > s.peak.Load() {
				s.peak.Store(v)
			}
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	})
	return s
}

func (s *sampler) done() int64 {
	close(s.stop)
	s.wg.Wait()
	return s.peak.Load()
}

// descendants lists pid and its descendants.
func descendants(root int) []int {
	children := map[int][]int{}
	for _, pid := range testproc.Pids() {
		if ppid, _, _, ok := testproc.Stat(pid); ok {
			children[ppid] = append(children[ppid], pid)
		}
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// warmTurns is how many turns after the first each run measures.
const warmTurns = 5

func fabricRun(t *testing.T, l *live) (cold time.Duration, second []time.Duration, rssCodex, rssHost int64) {
	t.Helper()
	data, _ := json.Marshal(l.config(nil, nil))
	loaded, err := l.Client.ParseConfig(data, "agent.yaml", fabric.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	t0 := time.Now()
	rt, err := l.Client.StartRuntime(ctx, loaded)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Stop(ctx)
	host := rt.HostPid()
	codexRSS := sample(func() []int {
		d := descendants(host)
		return d[1:]
	})
	hostRSS := sample(func() []int { return []int{host} })
	if res := l.Invoke(t, rt, "first"); res.Status != contract.StatusSucceeded {
		t.Fatalf("first: %+v", res.Error)
	}
	cold = time.Since(t0)
	for i := range warmTurns {
		t1 := time.Now()
		if res := l.Invoke(t, rt, "next"); res.Status != contract.StatusSucceeded {
			t.Fatalf("turn %d: %+v", i+2, res.Error)
		}
		second = append(second, time.Since(t1))
	}
	return cold, second, codexRSS.done(), hostRSS.done()
}

// directRun drives the same codex binary with the adapter's arguments and
// environment through a minimal JSON-RPC client.
func directRun(t *testing.T, l *live) (cold time.Duration, second []time.Duration, rss int64) {
	t.Helper()
	bin, err := codex.ResolveBinary(os.Getenv, harnessBinDir(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
	if err != nil {
		t.Fatal(err)
	}
	key, url := keyEnv, l.Stub.OpenAIBaseURL()
	m, err := codex.SelectModel(map[string]contract.AgentModel{"default": {Provider: "fabric-stub", Model: testModel, APIKeyEnv: &key, BaseURL: &url}})
	if err != nil {
		t.Fatal(err)
	}
	set, _ := codex.ParseSettings(nil)
	args, _ := codex.Args(m, set)
	root := t.TempDir()
	home, tmp := filepath.Join(root, "home"), filepath.Join(root, "tmp")
	os.MkdirAll(filepath.Join(home, ".codex"), 0o700)
	os.MkdirAll(tmp, 0o700)
	cmd := exec.Command(bin, args...)
	cmd.Dir = l.Workspace
	cmd.Env = codex.Env(l.Env, home, filepath.Join(home, ".codex"), tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = io.Discard
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	pid := cmd.Process.Pid
	rssTree := sample(func() []int { return descendants(pid) })
	r := bufio.NewReader(stdout)
	id := 0
	call := func(method string, params any) json.RawMessage {
		id++
		b, _ := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
		stdin.Write(append(b, '\n'))
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				t.Fatalf("%s: %v", method, err)
			}
			var msg struct {
				ID     *int            `json:"id"`
				Method string          `json:"method"`
				Result json.RawMessage `json:"result"`
			}
			json.Unmarshal(line, &msg)
			if msg.Method == "" && msg.ID != nil && *msg.ID == id {
				return msg.Result
			}
		}
	}
	waitTurn := func() {
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				t.Fatalf("turn: %v", err)
			}
			var msg struct {
				Method string `json:"method"`
			}
			json.Unmarshal(line, &msg)
			if msg.Method == "turn/completed" {
				return
			}
		}
	}
	call("initialize", map[string]any{"clientInfo": map[string]any{"name": "direct", "version": "0"}})
	stdin.Write([]byte(`{"method":"initialized"}` + "\n"))
	var th struct {
		Thread struct{ ID string } `json:"thread"`
	}
	json.Unmarshal(call("thread/start", codex.ThreadParams(l.Workspace, set, nil)), &th)
	turn := func(text string) {
		call("turn/start", codex.TurnParams(th.Thread.ID, text, set))
		waitTurn()
	}
	turn("first")
	cold = time.Since(t0)
	for range warmTurns {
		t1 := time.Now()
		turn("next")
		second = append(second, time.Since(t1))
	}
	return cold, second, rssTree.done()
}
