//go:build linux

package acp_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
	"github.com/fabric-runtime/fabric/modelstub"
)

// TestLiveHostKilled: when the adapter host's process group is SIGKILLed
// in the middle of a turn, nothing of the agent survives: the agent dies
// with the host (Pdeathsig), and the core, told of the host's exit, kills
// what carries the runtime's FABRIC_HOME (internal/host).
func TestLiveHostKilled(t *testing.T) {
	livetest.Short(t, "the real ACP agents from harnesses/acp (Gemini CLI, Qwen Code, codex-acp, claude-agent-acp) and Node 24")
	for _, pc := range cases {
		t.Run(pc.bin, func(t *testing.T) {
			l := newLive(t, pc, &modelstub.Script{Default: &modelstub.Reply{Stall: true}})
			rt := l.start(nil)
			go rt.Invoke(context.Background(), "go slowly")
			time.Sleep(3 * time.Second)
			if len(agentPids(l.StateDir)) == 0 {
				t.Fatal("no agent process")
			}
			_ = syscall.Kill(-rt.HostPid(), syscall.SIGKILL)
			deadline := time.Now().Add(5 * time.Second)
			var left []int
			for time.Now().Before(deadline) {
				if left = agentPids(l.StateDir); len(left) == 0 {
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
			for _, p := range left {
				st, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat")
				cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline")
				t.Errorf("left: %s | %s", st, strings.ReplaceAll(string(cmd), "\x00", " "))
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
		})
	}
}
