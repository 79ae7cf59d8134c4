//go:build linux

package nodelib_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
	"github.com/fabric-runtime/fabric/modelstub"
)

// benchTurns is the number of timed turns after the first in each run.
const benchTurns = 10

// BenchmarkLiveVsDirect measures per harness, over b.N runs (`go test
// -run '^$' -bench LiveVsDirect -benchtime 5x ./adapters/nodelib`): cold
// start to first answer, later-turn latency and idle RSS of the Node host
// through Fabric, and the later-turn latency and idle RSS of the same
// engine driven directly (harnesses/<name>/host/direct.mjs: the library
// with the same model settings, no Fabric, no protocol), on the same stub
// endpoint, alternating sides. It reports medians and the ratio.
func BenchmarkLiveVsDirect(b *testing.B) {
	for _, h := range harnesses {
		b.Run(h.name, func(b *testing.B) {
			var fCold, fTurn, dCold, dTurn []time.Duration
			var fRSS, dRSS []int64
			for i := range b.N {
				for _, viaFabric := range []bool{i%2 == 0, i%2 == 1} {
					if viaFabric {
						cold, turns, rss := benchFabric(b, h)
						fCold, fTurn, fRSS = append(fCold, cold), append(fTurn, turns...), append(fRSS, rss)
					} else {
						cold, turns, rss := benchDirect(b, h)
						dCold, dTurn, dRSS = append(dCold, cold), append(dTurn, turns...), append(dRSS, rss)
					}
				}
			}
			mf, md := median(fTurn), median(dTurn)
			b.Logf("%s: runs %d, %d timed turns each", h.name, b.N, benchTurns)
			b.Logf("through Fabric: cold start to first answer %s, later turn %s, idle RSS of the host %d MiB",
				median(fCold).Round(time.Millisecond), mf.Round(100*time.Microsecond), median(fRSS)/1024)
			b.Logf("direct:         cold start to first answer %s, later turn %s, idle RSS %d MiB",
				median(dCold).Round(time.Millisecond), md.Round(100*time.Microsecond), median(dRSS)/1024)
			b.Logf("later-turn ratio Fabric/direct: %.3f", float64(mf)/float64(md))
			b.ReportMetric(float64(median(fCold).Milliseconds()), "cold-ms")
			b.ReportMetric(float64(mf.Microseconds())/1000, "fabric-turn-ms")
			b.ReportMetric(float64(md.Microseconds())/1000, "direct-turn-ms")
			b.ReportMetric(float64(mf)/float64(md), "turn-ratio")
			b.ReportMetric(float64(median(fRSS))/1024, "idle-rss-MiB")
		})
	}
}

func median[T int64 | time.Duration](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func benchScript() *modelstub.Script {
	return &modelstub.Script{Default: &modelstub.Reply{Text: "4"}}
}

func benchFabric(b *testing.B, h harness) (cold time.Duration, turns []time.Duration, rssKiB int64) {
	l := newLive(b, h, benchScript())
	t0 := time.Now()
	rt := l.Start(l.config(nil, nil))
	if res := l.Invoke(b, rt, "What is 2+2?"); res.Status != contract.StatusSucceeded {
		b.Fatalf("first turn: %+v", res)
	}
	cold = time.Since(t0)
	for range benchTurns {
		t1 := time.Now()
		if res := l.Invoke(b, rt, "And again?"); res.Status != contract.StatusSucceeded {
			b.Fatalf("turn: %+v", res)
		}
		turns = append(turns, time.Since(t1))
	}
	rssKiB = testproc.RSSKiB(rt.HostPid())
	if _, err := rt.Stop(b.Context()); err != nil {
		b.Fatal(err)
	}
	return cold, turns, rssKiB
}

// benchDirect runs direct.mjs on the pinned Node against its own stub.
func benchDirect(b *testing.B, h harness) (cold time.Duration, turns []time.Duration, rssKiB int64) {
	harnessPath(b, h)
	node := directNode(b)
	stub := modelstub.New(benchScript(), modelstub.WithExpectKey(testKey))
	defer stub.Close()
	script, err := filepath.Abs(filepath.Join("..", "..", "harnesses", h.name, "host", "direct.mjs"))
	if err != nil {
		b.Fatal(err)
	}
	ws := b.TempDir()
	cmd := exec.Command(node, script)
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), keyEnv+"="+testKey, "FABRIC_DIRECT_KEY_ENV="+keyEnv, "FABRIC_DIRECT_MODEL="+testModel,
		"FABRIC_DIRECT_BASE_URL="+stub.OpenAIBaseURL(), "FABRIC_DIRECT_WORKSPACE="+ws, "HOME="+ws, "TMPDIR="+ws)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		stdin.Close()
		_ = cmd.Wait()
	}()
	out := bufio.NewScanner(stdout)
	out.Buffer(make([]byte, 1<<20), 16<<20)
	turn := func(input string) time.Duration {
		t1 := time.Now()
		if _, err := stdin.Write([]byte(input + "\n")); err != nil {
			b.Fatal(err)
		}
		if !out.Scan() {
			b.Fatalf("direct %s: no answer: %v", h.name, out.Err())
		}
		var res struct{ Status, Output string }
		if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Status != "succeeded" || res.Output != "4" {
			b.Fatalf("direct %s: answer %s (%v)", h.name, out.Bytes(), err)
		}
		return time.Since(t1)
	}
	turn("What is 2+2?")
	cold = time.Since(t0)
	for range benchTurns {
		turns = append(turns, turn("And again?"))
	}
	rssKiB = testproc.RSSKiB(cmd.Process.Pid)
	return cold, turns, rssKiB
}
