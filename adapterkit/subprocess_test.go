//go:build linux

package adapterkit

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostproto"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
	"github.com/fabric-runtime/fabric/internal/wire"
)

// child re-executes the test binary as a host in mode.
func child(t *testing.T, mode, protocol string) (*exec.Cmd, *testproc.Output) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// GORACE: the race runtime otherwise sleeps a second at exit.
	cmd.Env = append(os.Environ(), childEnv+"="+mode, hostproto.EnvProtocol+"="+protocol, "GORACE=atexit_sleep_ms=0")
	stderr := new(testproc.Output)
	cmd.Stderr = stderr
	return cmd, stderr
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// waitExit waits for cmd with a deadline and returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd, d time.Duration) int {
	t.Helper()
	return testproc.Wait(t, cmd, d).ExitCode()
}

// TestV1StdoutProtected runs a v1 host whose adapter writes to stdout in
// every way and reads stdin: the protocol stream must carry exactly the
// three answers, and the garbage must land on stderr.
func TestV1StdoutProtected(t *testing.T) {
	cmd, stderr := child(t, "stray", contract.HostProtocolV1)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	requests := []string{
		mustJSON(t, map[string]any{"operation": "start", "payload": startParams("runtime-1")}),
		mustJSON(t, map[string]any{"operation": "invoke", "payload": invokeParams("runtime-1", "i1", "x")}),
		mustJSON(t, map[string]any{"operation": "stop", "payload": hostproto.StopParams{RuntimeID: "runtime-1"}}),
	}
	out := bufio.NewReader(stdout)
	var answers []string
	for _, req := range requests {
		if _, err := io.WriteString(stdin, req+"\n"); err != nil {
			t.Fatal(err)
		}
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the answer to %s: %v (stderr %s)", req, err, stderr)
		}
		answers = append(answers, line)
	}
	rest, _ := io.ReadAll(out)
	if code := waitExit(t, cmd, testTimeout); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if len(rest) != 0 {
		t.Errorf("extra output on the protocol stream: %q", rest)
	}
	for i, line := range answers {
		resp, err := wire.DecodeV1Response([]byte(strings.TrimSuffix(line, "\n")))
		if err != nil {
			t.Fatalf("answer %d %q: %v", i, line, err)
		}
		if resp.Outcome.Status != "succeeded" {
			t.Errorf("answer %d: %s", i, line)
		}
	}
	if !strings.Contains(answers[1], `stdin had 0 bytes`) {
		t.Errorf("adapter read the protocol from stdin: %s", answers[1])
	}
	for _, g := range []string{"garbage from start", "garbage from invoke", "more garbage", "raw fd 1 garbage"} {
		if !strings.Contains(stderr.String(), g) {
			t.Errorf("stderr lacks %q:\n%s", g, stderr)
		}
	}
}

// TestV1SIGTERMDuringHang: the core's last resort before SIGKILL is SIGTERM
// to the process group; the host stops the session and exits 0.
func TestV1SIGTERMDuringHang(t *testing.T) {
	cmd, stderr := child(t, "hang", contract.HostProtocolV1)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(stdout)
	io.WriteString(stdin, mustJSON(t, map[string]any{"operation": "start", "payload": startParams("runtime-1")})+"\n")
	if _, err := out.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, mustJSON(t, map[string]any{"operation": "invoke", "payload": invokeParams("runtime-1", "i1", "x")})+"\n")
	deadline := time.Now().Add(testTimeout)
	for !strings.Contains(stderr.String(), "invoke entered") {
		if time.Now().After(deadline) {
			t.Fatalf("invoke never entered; stderr:\n%s", stderr)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, cmd, 5*time.Second); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"invoke cancelled", "session stopped", "Serve returned"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	stdin.Close()
}

// startV2Hang starts a v2 host in mode hang on a real socket at fd 3,
// starts runtime-1 and an invoke that hangs, and returns once health says
// the host is busy with it. invoked receives the invoke's end; the conn's
// Run ends on runEnd.
func startV2Hang(t *testing.T, ctx context.Context, res *contract.AgentRunResult) (cmd *exec.Cmd, stderr *testproc.Output, conn *wire.Conn, invoked, runEnd chan error) {
	t.Helper()
	cmd, stderr = child(t, "hang", contract.HostProtocolV2)
	core, hostEnd := testproc.Socketpair(t)
	cmd.ExtraFiles = []*os.File{hostEnd}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	hostEnd.Close()
	conn = wire.NewConn(core, core, wire.Options{})
	runEnd = make(chan error, 1)
	go func() { runEnd <- conn.Run(context.Background()) }()
	if err := conn.Call(ctx, "start", startParams("runtime-1"), nil); err != nil {
		t.Fatalf("start: %v; stderr:\n%s", err, stderr)
	}
	var out any // nil: no result wanted
	if res != nil {
		out = res
	}
	invoked = make(chan error, 1)
	go func() { invoked <- conn.Call(ctx, "invoke", invokeParams("runtime-1", "i1", "x"), out) }()
	var h Health
	for h.Activity != "busy" {
		if err := conn.Call(ctx, "health", hostproto.HealthParams{Level: "live"}, &h); err != nil {
			t.Fatal(err)
		}
	}
	return cmd, stderr, conn, invoked, runEnd
}

// TestV2OnFD3 runs a v2 host on a real socket at fd 3: a hanging invoke,
// health while it runs, cancel, stop, exit 0.
func TestV2OnFD3(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	var res contract.AgentRunResult
	cmd, stderr, conn, invDone, runEnd := startV2Hang(t, ctx, &res)
	var cr hostproto.CancelResult
	if err := conn.Call(ctx, "cancel", hostproto.CancelParams{InvocationID: "i1"}, &cr); err != nil || !cr.Cancelled {
		t.Fatalf("cancel: %v %+v", err, cr)
	}
	if err := <-invDone; err != nil || res.Status != "cancelled" {
		t.Fatalf("invoke: %v %+v", err, res)
	}
	if err := conn.Call(ctx, "stop", hostproto.StopParams{RuntimeID: "runtime-1"}, nil); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, testTimeout); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if err := <-runEnd; err != nil {
		t.Errorf("core conn: %v", err)
	}
	if !strings.Contains(stderr.String(), "session stopped") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

// TestV2NoChannel: a v2 host without fd 3 fails to serve.
func TestV2NoChannel(t *testing.T) {
	cmd, stderr := child(t, "hang", contract.HostProtocolV2)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, testTimeout); code != 1 || !strings.Contains(stderr.String(), "no v2 channel") {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
}

// TestV2SIGTERMDuringHang: SIGTERM ends a v2 host with a hanging turn; the
// session is stopped and the host exits 0.
func TestV2SIGTERMDuringHang(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cmd, stderr, _, invDone, runEnd := startV2Hang(t, ctx, nil)
	cmd.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, cmd, 5*time.Second); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	<-invDone // answered or failed with the closed connection; either is fine
	<-runEnd
	for _, want := range []string{"invoke cancelled", "session stopped", "Serve returned"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}
