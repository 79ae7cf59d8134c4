//go:build linux

package scripted_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/adapters/scripted"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostproto"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
	"github.com/fabric-runtime/fabric/internal/wire"
	"golang.org/x/sys/unix"
)

func hostCmd(protocol string) (*exec.Cmd, *testproc.Output) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), hostproto.EnvBundledAdapter+"="+scripted.ID, hostproto.EnvProtocol+"="+protocol, "GORACE=atexit_sleep_ms=0")
	stderr := new(testproc.Output)
	cmd.Stderr = stderr
	return cmd, stderr
}

func waitState(t *testing.T, cmd *exec.Cmd) *os.ProcessState {
	t.Helper()
	return testproc.Wait(t, cmd, testTimeout)
}

// TestExitOnStartAndStderr (v1): the host writes the stderr setting, then
// exits with status 3 without answering start.
func TestExitOnStartAndStderr(t *testing.T) {
	cmd, stderr := hostCmd(contract.HostProtocolV1)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"operation": "start", "payload": startParams(map[string]any{"mode": "exit_on_start", "stderr": "token=s3cr3t"})})
	stdin.Write(append(b, '\n'))
	out, _ := io.ReadAll(stdout)
	st := waitState(t, cmd)
	if st.ExitCode() != 3 {
		t.Errorf("exit %v, want status 3; stderr:\n%s", st, stderr)
	}
	if len(out) != 0 {
		t.Errorf("answered start: %q", out)
	}
	if !strings.Contains(stderr.String(), "token=s3cr3t") {
		t.Errorf("stderr setting not written:\n%s", stderr)
	}
}

// TestCrashMidInvoke (v2 on fd 3): one event reaches the core, then the host
// dies of SIGKILL and the channel ends.
func TestCrashMidInvoke(t *testing.T) {
	cmd, stderr := hostCmd(contract.HostProtocolV2)
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	coreFile, hostFile := os.NewFile(uintptr(fds[0]), "core"), os.NewFile(uintptr(fds[1]), "host")
	coreConn, err := net.FileConn(coreFile)
	coreFile.Close()
	if err != nil {
		t.Fatal(err)
	}
	cmd.ExtraFiles = []*os.File{hostFile}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	hostFile.Close()
	var mu sync.Mutex
	var events []hostproto.EventParams
	conn := wire.NewConn(coreConn, coreConn, wire.Options{Handler: wire.HandlerFunc(func(ctx context.Context, req *wire.Request) (any, error) {
		var p hostproto.EventParams
		if json.Unmarshal(req.Params, &p) == nil {
			mu.Lock()
			events = append(events, p)
			mu.Unlock()
		}
		return nil, nil
	})})
	runEnd := make(chan error, 1)
	go func() { runEnd <- conn.Run(context.Background()) }()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := conn.Call(ctx, "start", startParams(map[string]any{"mode": "crash_mid_invoke"}), nil); err != nil {
		t.Fatalf("start: %v\n%s", err, stderr)
	}
	err = conn.Call(ctx, "invoke", invokeParams("i1", "x"), nil)
	if !errors.Is(err, wire.ErrConnClosed) {
		t.Errorf("invoke: %v, want the connection to end", err)
	}
	st := waitState(t, cmd)
	if ws, ok := st.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("host ended with %v, want SIGKILL", st)
	}
	<-runEnd
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 1 || events[0].InvocationID != "i1" {
		t.Errorf("events %+v, want one", events)
	}
}

// TestV1HangEndsOnSIGTERM: in v1 a hanging turn ends only with SIGTERM.
func TestV1HangEndsOnSIGTERM(t *testing.T) {
	cmd, stderr := hostCmd(contract.HostProtocolV1)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(stdout)
	b, _ := json.Marshal(map[string]any{"operation": "start", "payload": startParams(map[string]any{"mode": "hang"})})
	stdin.Write(append(b, '\n'))
	if line, err := out.ReadString('\n'); err != nil || !strings.Contains(line, "succeeded") {
		t.Fatalf("start: %q %v\n%s", line, err, stderr)
	}
	b, _ = json.Marshal(map[string]any{"operation": "invoke", "payload": invokeParams("i1", "x")})
	stdin.Write(append(b, '\n'))
	time.Sleep(100 * time.Millisecond)
	if cmd.ProcessState != nil {
		t.Fatal("host exited during the hang")
	}
	cmd.Process.Signal(syscall.SIGTERM)
	rest, _ := io.ReadAll(out)
	if st := waitState(t, cmd); st.ExitCode() != 0 {
		t.Errorf("exit %v\n%s", st, stderr)
	}
	if len(rest) != 0 {
		t.Errorf("answered after SIGTERM: %q", rest)
	}
	stdin.Close()
}
