//go:build linux

package acp_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
	"github.com/fabric-runtime/fabric/modelstub"
)

// BenchmarkLiveDroidKilo measures Droid and Kilo through Fabric against the
// same agents driven directly (ACP over stdio, the same command, argv,
// environment and configuration files as the Fabric runtime's agent, read
// back from /proc and its private HOME) on the same scripted endpoint:
// cold start to first answer (StartRuntime + the first turn), later-turn
// latency (interleaved: one turn through Fabric, one direct, repeated), the
// ratio of the medians, and idle RSS of the agent's process tree and of
// the adapter host. Each iteration is one cold start, later turns and one
// idle sample:
//
//	go test -run '^$' -bench LiveDroidKilo -benchtime 3x ./adapters/acp
func BenchmarkLiveDroidKilo(b *testing.B) {
	const later = 10
	for _, bin := range []string{"droid", "kilo"} {
		b.Run(bin, func(b *testing.B) {
			var cold, viaFabric, direct []time.Duration
			var agentRSS, hostRSS []int64
			for b.Loop() {
				l := newLive(b, caseFor(b, bin), &modelstub.Script{Default: &modelstub.Reply{Text: "4"}})
				t0 := time.Now()
				rt := l.start(nil)
				if res := l.Invoke(b, rt, "warm up"); res.Status != contract.StatusSucceeded {
					b.Fatalf("first turn: %+v", res.Error)
				}
				cold = append(cold, time.Since(t0))

				agent := agentProcess(b, l.StateDir, bin)
				d := startDirect(b, agent, l.Workspace)
				for i := range later {
					t1 := time.Now()
					if res := l.Invoke(b, rt, "turn "+strconv.Itoa(i)); res.Status != contract.StatusSucceeded {
						b.Fatalf("turn %d: %+v", i, res.Error)
					}
					viaFabric = append(viaFabric, time.Since(t1))
					direct = append(direct, d.prompt(b, "turn "+strconv.Itoa(i)))
				}
				d.stop()

				// Idle: the runtime's whole tree (the agent and
				// its children) and the host, after the turns settled.
				var tree, host []int
				for _, pid := range agentPids(l.StateDir) {
					if strings.Contains(cmdline(pid), "FABRIC_BUNDLED_ADAPTER") || isHost(pid) {
						host = append(host, pid)
					} else {
						tree = append(tree, pid)
					}
				}
				agentRSS = append(agentRSS, testproc.RSSKiB(tree...))
				hostRSS = append(hostRSS, testproc.RSSKiB(host...))
				if _, err := rt.Stop(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			mc, mf, md := median(cold), median(viaFabric), median(direct)
			b.ReportMetric(float64(mc.Milliseconds()), "ms-cold-first-answer")
			b.ReportMetric(float64(mf.Microseconds())/1000, "ms-turn-fabric")
			b.ReportMetric(float64(md.Microseconds())/1000, "ms-turn-direct")
			b.ReportMetric(float64(mf)/float64(md), "fabric/direct")
			b.ReportMetric(float64(medianInt(agentRSS))/1024, "MiB-idle-agent")
			b.ReportMetric(float64(medianInt(hostRSS))/1024, "MiB-idle-host")
			b.ReportMetric(0, "ns/op")
			b.Logf("%s: cold %v; fabric turns %v; direct turns %v; agent RSS KiB %v; host RSS KiB %v",
				bin, cold, viaFabric, direct, agentRSS, hostRSS)
		})
	}
}

func medianInt(vs []int64) int64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func cmdline(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return string(bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
}

// isHost reports whether pid is an adapter host (the test binary
// re-executed with the host protocol's channel).
func isHost(pid int) bool {
	_, ok := procEnv(pid, "FABRIC_BUNDLED_ADAPTER")
	return ok
}

// agentSpec is how a Fabric runtime started its agent.
type agentSpec struct {
	argv []string
	env  []string
	home string
}

// agentProcess reads the argv and environment of the runtime's agent (the
// host's child: the process whose executable is not the test binary and
// whose parent is the host).
func agentProcess(b testing.TB, marker, bin string) agentSpec {
	b.Helper()
	self, _ := os.Executable()
	for _, pid := range agentPids(marker) {
		exe, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
		if exe == self {
			continue
		}
		ppid, _, _, _ := testproc.Stat(pid)
		if !isHost(ppid) {
			continue
		}
		raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil {
			b.Fatal(err)
		}
		argv := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		envRaw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil {
			b.Fatal(err)
		}
		env := strings.Split(strings.TrimRight(string(envRaw), "\x00"), "\x00")
		home, _ := procEnv(pid, "FABRIC_ACP_RUNTIME_HOME")
		return agentSpec{argv: argv, env: env, home: home}
	}
	b.Fatalf("no %s agent process under %s", bin, marker)
	return agentSpec{}
}

// directAgent is the same agent driven directly over ACP.
type directAgent struct {
	cmd     *exec.Cmd
	conn    *sdk.ClientSideConnection
	session sdk.SessionId
	home    string
	once    sync.Once
}

// startDirect starts a second copy of the agent with a copy of the Fabric
// runtime's private HOME (its configuration files), the same argv and
// environment (paths moved to the copy), and opens one session.
func startDirect(b testing.TB, a agentSpec, workspace string) *directAgent {
	b.Helper()
	home := b.TempDir()
	if err := os.CopyFS(home, os.DirFS(a.home)); err != nil {
		b.Fatal(err)
	}
	var env []string
	for _, kv := range a.env {
		k, _, _ := strings.Cut(kv, "=")
		if k == "FABRIC_ACP_RUNTIME_HOME" {
			continue
		}
		env = append(env, strings.ReplaceAll(kv, a.home, home))
	}
	cmd := exec.Command(a.argv[0], a.argv[1:]...)
	cmd.Env, cmd.Dir = env, workspace
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	d := &directAgent{cmd: cmd, home: home}
	b.Cleanup(d.stop)
	d.conn = sdk.NewClientSideConnection(directClient{}, in, out)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if _, err := d.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		b.Fatalf("direct initialize: %v", err)
	}
	res, err := d.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: workspace, McpServers: []sdk.McpServer{}})
	if err != nil {
		b.Fatalf("direct session/new: %v", err)
	}
	d.session = res.SessionId
	return d
}

func (d *directAgent) prompt(b testing.TB, text string) time.Duration {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	t0 := time.Now()
	res, err := d.conn.Prompt(ctx, sdk.PromptRequest{SessionId: d.session, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
	took := time.Since(t0)
	if err != nil || res.StopReason != sdk.StopReasonEndTurn {
		b.Fatalf("direct prompt: %v %+v", err, res)
	}
	return took
}

func (d *directAgent) stop() {
	d.once.Do(func() {
		_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		_ = d.cmd.Wait()
	})
}

// directClient answers the agent's requests like the adapter's allow
// policy, without the workspace file system (the agents use their own).
type directClient struct{}

func (directClient) SessionUpdate(context.Context, sdk.SessionNotification) error { return nil }

func (directClient) RequestPermission(_ context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	for _, o := range p.Options {
		if o.Kind == sdk.PermissionOptionKindAllowOnce {
			return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected(o.OptionId)}, nil
		}
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
}

func (directClient) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, fmt.Errorf("not offered")
}

func (directClient) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, fmt.Errorf("not offered")
}

func (directClient) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, fmt.Errorf("not offered")
}

func (directClient) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, fmt.Errorf("not offered")
}

func (directClient) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, fmt.Errorf("not offered")
}

func (directClient) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, fmt.Errorf("not offered")
}

func (directClient) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, fmt.Errorf("not offered")
}
