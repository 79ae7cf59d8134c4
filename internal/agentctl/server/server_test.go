package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/agentctl"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
)

// envDial makes the test binary a one-shot client (run as another user).
const envDial = "AGENTCTL_TEST_DIAL"

// TestMain doubles as the adapter host of the runtimes the tests start and
// as a client run under another uid.
func TestMain(m *testing.M) {
	if served, code := bundled.ServeHost(); served {
		os.Exit(code)
	}
	if sock := os.Getenv(envDial); sock != "" {
		resp, err := (&agentctl.Client{Socket: sock}).Do(context.Background(), &agentctl.Request{Operation: agentctl.OpCheck})
		if err != nil {
			fmt.Println("error:", err)
		} else {
			b, _ := json.Marshal(resp)
			fmt.Println(string(b))
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

type testServer struct {
	*Server
	dir    string
	cancel context.CancelFunc
	done   chan Result
	last   Result
}

func shortDir(t testing.TB) string {
	t.Helper()
	// t.TempDir paths can exceed a Unix socket's 107 bytes.
	dir, err := os.MkdirTemp("", "actl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func startServer(t testing.TB, dir string, mutate ...func(*Options)) *testServer {
	t.Helper()
	opts := Options{
		Socket: filepath.Join(dir, "ctl.sock"),
		Client: fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithStateDir(filepath.Join(dir, "hosts"))),
		Logger: slog.New(slog.DiscardHandler),
	}
	if testing.Verbose() {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	for _, m := range mutate {
		m(&opts)
	}
	s, err := Listen(opts)
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ts := &testServer{Server: s, dir: dir, cancel: cancel, done: make(chan Result, 1)}
	go func() { ts.done <- s.Serve(ctx) }()
	t.Cleanup(func() { ts.shutdown(t) })
	return ts
}

// shutdown stops the server once and returns its result.
func (ts *testServer) shutdown(t testing.TB) Result {
	ts.cancel()
	select {
	case r, ok := <-ts.done:
		if ok {
			close(ts.done)
			ts.last = r
		}
		return ts.last
	case <-time.After(2 * time.Minute):
		t.Fatal("serve did not shut down")
	}
	return Result{}
}

func (ts *testServer) do(t testing.TB, req *agentctl.Request) *agentctl.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := (&agentctl.Client{Socket: ts.socket}).Do(ctx, req)
	if err != nil {
		t.Fatalf("%s: %v", req.Operation, err)
	}
	return resp
}

func writeConfig(t testing.TB, dir, name, settings string) string {
	t.Helper()
	p := filepath.Join(dir, name+".yaml")
	cfg := fmt.Sprintf("schema_version: fabric.agent/v1alpha1\nmetadata: {name: %s}\nruntime: {}\nharness:\n  adapter_id: fabric.scripted\n  settings: %s\n", name, settings)
	if err := os.WriteFile(p, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func (ts *testServer) start(t testing.TB, name, settings string) contract.RuntimeHandle {
	t.Helper()
	resp := ts.do(t, &agentctl.Request{Operation: agentctl.OpStart, Agent: name, Config: writeConfig(t, ts.dir, name, settings)})
	if resp.Status != agentctl.StatusSucceeded {
		t.Fatalf("start: %+v", resp.Error)
	}
	var h contract.RuntimeHandle
	if err := json.Unmarshal(resp.Output, &h); err != nil {
		t.Fatal(err)
	}
	return h
}

func (ts *testServer) status(t testing.TB) agentctl.Status {
	t.Helper()
	resp := ts.do(t, &agentctl.Request{Operation: agentctl.OpStatus})
	var st agentctl.Status
	if err := json.Unmarshal(resp.Output, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestSocketIsPrivateAndSingle(t *testing.T) {
	dir := shortDir(t)
	old := syscall.Umask(0) // the socket must not depend on a careful umask
	ts := startServer(t, dir)
	syscall.Umask(old)
	fi, err := os.Stat(ts.socket)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != fs.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v, want socket 0600", fi.Mode())
	}
	_, err = Listen(Options{Socket: ts.socket})
	var ae *agentctl.Error
	if !errors.As(err, &ae) || ae.Code != agentctl.CodeServeAlreadyRunning {
		t.Fatalf("second Listen: %v, want serve_already_running", err)
	}
	// Another socket in the same directory shares marker and journal: refused too.
	_, err = Listen(Options{Socket: filepath.Join(dir, "other.sock")})
	if !errors.As(err, &ae) || ae.Code != agentctl.CodeServeAlreadyRunning {
		t.Fatalf("Listen in the same directory: %v, want serve_already_running", err)
	}
}

func TestStaleSocketIsReplaced(t *testing.T) {
	dir := shortDir(t)
	path := filepath.Join(dir, "ctl.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close() // the file stays, nobody answers
	ts := startServer(t, dir)
	if resp := ts.do(t, &agentctl.Request{Operation: agentctl.OpCheck}); resp.Status != agentctl.StatusSucceeded {
		t.Fatalf("check: %+v", resp.Error)
	}
}

func TestNonSocketPathIsRefused(t *testing.T) {
	dir := shortDir(t)
	path := filepath.Join(dir, "ctl.sock")
	if err := os.WriteFile(path, []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Listen(Options{Socket: path})
	var ae *agentctl.Error
	if !errors.As(err, &ae) || ae.Code != agentctl.CodeSocketUnavailable {
		t.Fatalf("Listen: %v, want socket_unavailable", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "data" {
		t.Fatal("the file was touched")
	}
}

func TestPeerOfAnotherUserIsRefused(t *testing.T) {
	ts := startServer(t, shortDir(t), func(o *Options) { o.AllowPeer = func(uint32) bool { return false } })
	resp := ts.do(t, &agentctl.Request{Operation: agentctl.OpStatus})
	if resp.Status != agentctl.StatusFailed || resp.Error.Code != agentctl.CodePermissionDenied {
		t.Fatalf("got %+v", resp)
	}
}

// As root, run a client as uid 65534: the 0600 socket refuses it, and even
// with the mode opened up, SO_PEERCRED does.
func TestOtherUserIsRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run a client as another user")
	}
	dir, err := os.MkdirTemp("/tmp", "actl-peer")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "client.test")
	copyFile(t, exe, bin, 0o755)
	ts := startServer(t, dir)
	run := func() string {
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), envDial+"="+ts.socket)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("client as uid 65534: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := run(); !strings.Contains(out, "serve_unreachable") || !strings.Contains(out, "permission denied") {
		t.Fatalf("0600 socket: %s", out)
	}
	if err := os.Chmod(ts.socket, 0o666); err != nil {
		t.Fatal(err)
	}
	if out := run(); !strings.Contains(out, `"code":"permission_denied"`) {
		t.Fatalf("open socket: %s", out)
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// rawExchange sends line on a fresh connection, optionally half-closing
// afterwards, and returns the answer.
func rawExchange(t *testing.T, socket, line string, halfClose bool) *agentctl.Response {
	t.Helper()
	c, err := net.Dial("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	if _, err := io.WriteString(c, line); err != nil {
		t.Fatal(err)
	}
	if halfClose {
		if err := c.(*net.UnixConn).CloseWrite(); err != nil {
			t.Fatal(err)
		}
	}
	b, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil {
		t.Fatalf("read: %v (%q)", err, b)
	}
	resp, err := agentctl.DecodeResponse(b)
	if err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return resp
}

func TestHalfClosedClientIsAnswered(t *testing.T) {
	ts := startServer(t, shortDir(t))
	// No trailing newline: the end of input ends the line.
	resp := rawExchange(t, ts.socket, `{"protocol_version":"fabric.agent-ctl/v1alpha1","operation_id":"op-raw","operation":"status"}`, true)
	if resp.Status != agentctl.StatusSucceeded || resp.OperationID != "op-raw" {
		t.Fatalf("got %+v", resp)
	}
	// A half-closed invoke is not mistaken for a client that left.
	h := ts.start(t, "slow", `{delay_ms: 300, response: "done"}`)
	resp = rawExchange(t, ts.socket, fmt.Sprintf(`{"protocol_version":"fabric.agent-ctl/v1alpha1","operation_id":"op-inv","operation":"invoke","agent":"slow","runtime_id":%q,"request":{"input":"x"}}`+"\n", h.RuntimeID), true)
	var res contract.RunResult
	if err := json.Unmarshal(resp.Output, &res); err != nil || res.Status != contract.StatusSucceeded {
		t.Fatalf("invoke: %+v %s", resp.Error, resp.Output)
	}
}

func TestMalformedRequestsAreAnsweredWithTheirField(t *testing.T) {
	ts := startServer(t, shortDir(t))
	resp := rawExchange(t, ts.socket, `{"protocol_version":"fabric.agent-ctl/v1alpha1","operation_id":"op-1","operation":"stop","agent":"a"}`+"\n", false)
	if resp.Error == nil || resp.Error.Code != agentctl.CodeInvalidRequest || resp.Error.Field != "runtime_id" || resp.OperationID != "op-1" || resp.Operation != "stop" {
		t.Fatalf("got %+v %+v", resp, resp.Error)
	}
	resp = rawExchange(t, ts.socket, "not json\n", false)
	if resp.Error == nil || resp.Error.Code != agentctl.CodeInvalidRequest || resp.OperationID != "unknown" {
		t.Fatalf("got %+v %+v", resp, resp.Error)
	}
}

func TestSlowRequestLineTimesOut(t *testing.T) {
	ts := startServer(t, shortDir(t), func(o *Options) { o.ReadTimeout = 200 * time.Millisecond })
	c, err := net.Dial("unix", ts.socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	io.WriteString(c, `{"protocol_version":`)
	b, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	resp, err := agentctl.DecodeResponse(b)
	if err != nil || resp.Error.Code != agentctl.CodeInvalidRequest {
		t.Fatalf("got %s, %v", b, err)
	}
}

// A client that goes away during an invocation cancels it: the runtime
// is free again.
func TestClientHangupCancelsInvocation(t *testing.T) {
	ts := startServer(t, shortDir(t))
	h := ts.start(t, "hang", `{mode: hang}`)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := (&agentctl.Client{Socket: ts.socket}).Do(ctx, &agentctl.Request{Operation: agentctl.OpInvoke, Agent: "hang", RuntimeID: h.RuntimeID, Request: &contract.RunRequest{Input: "x"}})
		done <- err
	}()
	busy := func(want string) func() bool {
		return func() bool {
			st := ts.status(t)
			return len(st.Runtimes) == 1 && st.Runtimes[0].Activity == want
		}
	}
	testproc.Eventually(t, time.Minute, "busy", busy(agentctl.ActivityBusy))
	cancel()
	var ae *agentctl.Error
	if err := <-done; !errors.As(err, &ae) || ae.Code != agentctl.CodeCancelled {
		t.Fatalf("client: %v", err)
	}
	testproc.Eventually(t, time.Minute, "idle after the client left", busy(agentctl.ActivityIdle))
}

func TestInvokeTimeoutCancels(t *testing.T) {
	ts := startServer(t, shortDir(t))
	h := ts.start(t, "hang", `{mode: hang}`)
	resp := ts.do(t, &agentctl.Request{Operation: agentctl.OpInvoke, Agent: "hang", RuntimeID: h.RuntimeID, TimeoutSeconds: 0.2, Request: &contract.RunRequest{Input: "x"}})
	var res contract.RunResult
	if err := json.Unmarshal(resp.Output, &res); err != nil {
		t.Fatal(err)
	}
	if resp.Status != agentctl.StatusSucceeded || res.Status != contract.StatusCancelled || res.Error == nil || res.Error.Metadata["cancelled_by"] != "timeout_seconds" {
		t.Fatalf("got %+v %+v", resp, res.Error)
	}
}

// Concurrent invokes on one runtime: exactly one runs, the others are
// runtime_busy at once; check and status are answered meanwhile.
func TestOneInvocationAtATime(t *testing.T) {
	ts := startServer(t, shortDir(t))
	h := ts.start(t, "slow", `{delay_ms: 500}`)
	var wg sync.WaitGroup
	codes := make(chan string, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := ts.do(t, &agentctl.Request{Operation: agentctl.OpInvoke, Agent: "slow", RuntimeID: h.RuntimeID, Request: &contract.RunRequest{Input: "x"}})
			if resp.Error != nil {
				codes <- resp.Error.Code
			} else {
				codes <- "ok"
			}
		}()
	}
	wg.Wait()
	close(codes)
	n := map[string]int{}
	for c := range codes {
		n[c]++
	}
	if n["ok"] < 1 || n["ok"]+n[agentctl.CodeRuntimeBusy] != 8 {
		t.Fatalf("outcomes %v", n)
	}
}

// A leftover process group from an earlier serve (recorded in the marker
// with its pid and start time) is killed and the marker cleared; a pid
// whose start time differs is left alone.
func TestLeftoverGroupIsKilledAndMarkerCleared(t *testing.T) {
	dir := shortDir(t)
	leftover := exec.Command("sleep", "600")
	leftover.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := leftover.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { leftover.Wait(); close(exited) }()
	bystander := exec.Command("sleep", "600")
	bystander.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := bystander.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { bystander.Process.Kill(); bystander.Wait() }()

	m := agentctl.Marker{SchemaVersion: agentctl.MarkerSchemaVersion, WrittenAt: "2026-01-01T00:00:00Z", ServePid: 1, BootID: bootID(),
		Runtimes: []agentctl.UncleanRuntime{
			{RuntimeID: "runtime-left", Agent: "a", HostPid: leftover.Process.Pid, HostStartTicks: startTicks(leftover.Process.Pid), What: agentctl.UncleanStopFailed},
			{RuntimeID: "runtime-reused", Agent: "a", HostPid: bystander.Process.Pid, HostStartTicks: startTicks(bystander.Process.Pid) + 1, What: agentctl.UncleanStopTimedOut},
		}}
	b, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, agentctl.MarkerFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, dir)
	select {
	case <-exited:
	case <-time.After(time.Minute):
		t.Fatal("the leftover group was not killed")
	}
	if err := bystander.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("a process with a reused pid was signalled: %v", err)
	}
	st := ts.status(t)
	if st.Unclean == nil || !st.Unclean.Cleared || len(st.Unclean.Runtimes) != 2 {
		t.Fatalf("unclean %+v", st.Unclean)
	}
	got := map[string]string{}
	for _, e := range st.Unclean.Runtimes {
		got[e.RuntimeID] = e.Confirmation
	}
	if got["runtime-left"] != confirmedKilled || got["runtime-reused"] != confirmedPidReused {
		t.Fatalf("confirmations %v", got)
	}
	if _, err := os.Stat(filepath.Join(dir, agentctl.MarkerFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("marker still there: %v", err)
	}
}

// A marker others could have written is not acted on, is reported unknown,
// and is left for the operator.
func TestUntrustedMarkerIsIgnored(t *testing.T) {
	dir := shortDir(t)
	path := filepath.Join(dir, agentctl.MarkerFile)
	victim := exec.Command("sleep", "600")
	victim.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { victim.Process.Kill(); victim.Wait() }()
	m := agentctl.Marker{SchemaVersion: agentctl.MarkerSchemaVersion, Runtimes: []agentctl.UncleanRuntime{
		{RuntimeID: "runtime-x", HostPid: victim.Process.Pid, HostStartTicks: startTicks(victim.Process.Pid), What: agentctl.UncleanStopFailed}}}
	b, _ := json.Marshal(m)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, dir)
	resp := ts.do(t, &agentctl.Request{Operation: agentctl.OpCheck})
	var rep contract.CheckReport
	if err := json.Unmarshal(resp.Output, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Outcome != contract.OutcomeUnknown || len(rep.Observations) != 2 || rep.Observations[1].Outcome != contract.OutcomeUnknown {
		t.Fatalf("report %+v", rep)
	}
	if err := victim.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatal("a process named by an untrusted marker was signalled")
	}
	ts.shutdown(t)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("untrusted marker removed: %v", err)
	}
}

// Shutdown cancels a running invocation (server_stopping), stops every
// runtime concurrently and leaves nothing behind.
func TestShutdownStopsEverything(t *testing.T) {
	dir := shortDir(t)
	ts := startServer(t, dir)
	var pids []int
	for i := range 3 {
		h := ts.start(t, fmt.Sprintf("agent%d", i), `{mode: hang}`)
		_ = h
	}
	for _, r := range ts.status(t).Runtimes {
		pids = append(pids, r.HostPid)
	}
	first := ts.status(t).Runtimes[0]
	answered := make(chan *agentctl.Response, 1)
	go func() {
		answered <- ts.do(t, &agentctl.Request{Operation: agentctl.OpInvoke, Agent: first.AgentName, RuntimeID: first.RuntimeID, Request: &contract.RunRequest{Input: "x"}})
	}()
	testproc.Eventually(t, time.Minute, "busy", func() bool {
		for _, r := range ts.status(t).Runtimes {
			if r.RuntimeID == first.RuntimeID && r.Activity == agentctl.ActivityBusy {
				return true
			}
		}
		return false
	})
	res := ts.shutdown(t)
	if res.Stopped != 3 || len(res.Unclean) != 0 || res.Marker != nil {
		t.Fatalf("result %+v", res)
	}
	resp := <-answered
	if resp.Error == nil || resp.Error.Code != agentctl.CodeServerStopping || !resp.Error.Retryable {
		t.Fatalf("in-flight invoke: %+v", resp)
	}
	for _, pid := range pids {
		if how, err := confirmGone(pid, 0, "", false, 0); err != nil {
			t.Fatalf("host %d: %s %v", pid, how, err)
		}
	}
	for _, name := range []string{"ctl.sock", JournalFile, agentctl.MarkerFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s left behind: %v", name, err)
		}
	}
}

// While serve waits for runtimes to stop, check still answers (failed,
// server_stopping), new work is refused, and a forced end records the
// runtime it could not confirm in fabric.unclean.
func TestShutdownInProgress(t *testing.T) {
	dir := shortDir(t)
	ts := startServer(t, dir)
	cfg := filepath.Join(dir, "frozen.yaml")
	if err := os.WriteFile(cfg, []byte("schema_version: fabric.agent/v1alpha1\nmetadata: {name: frozen}\nruntime: {limits: {stop_seconds: 10}}\nharness: {adapter_id: fabric.scripted}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	resp := ts.do(t, &agentctl.Request{Operation: agentctl.OpStart, Agent: "frozen", Config: cfg})
	if resp.Status != agentctl.StatusSucceeded {
		t.Fatal(resp.Error)
	}
	host := ts.status(t).Runtimes[0].HostPid
	if err := syscall.Kill(host, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(host, syscall.SIGKILL) // lets the abandoned stop finish
	ts.cancel()
	var rep contract.CheckReport
	testproc.Eventually(t, time.Minute, "a stopping server", func() bool {
		resp := ts.do(t, &agentctl.Request{Operation: agentctl.OpCheck})
		return json.Unmarshal(resp.Output, &rep) == nil && rep.Server != nil && rep.Server.State == agentctl.ServerStopping
	})
	if rep.Outcome != contract.OutcomeFailed || rep.ReasonCode == nil || *rep.ReasonCode != contract.ReasonServerStopping {
		t.Fatalf("check while stopping: %+v", rep)
	}
	resp = ts.do(t, &agentctl.Request{Operation: agentctl.OpStart, Agent: "frozen", Config: cfg})
	if resp.Error == nil || resp.Error.Code != agentctl.CodeServerStopping {
		t.Fatalf("start while stopping: %+v", resp)
	}
	ts.Force()
	res := ts.shutdown(t)
	if len(res.Unclean) != 1 || res.Unclean[0].What != agentctl.UncleanStopTimedOut || res.Unclean[0].HostPid != host || res.Marker == nil {
		t.Fatalf("result %+v", res)
	}
	m, err := readMarkerFile(*res.Marker, agentctl.MarkerSchemaVersion)
	if err != nil || len(m.Runtimes) != 1 || m.Runtimes[0].HostStartTicks == 0 {
		t.Fatalf("marker %+v %v", m, err)
	}
}
