package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/agentctl"
	"github.com/fabric-runtime/fabric/internal/agentctl/cli"
	"github.com/fabric-runtime/fabric/internal/agentctl/servecmd"
	"github.com/fabric-runtime/fabric/internal/procfs"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
)

// TestMain doubles as the adapter host (serve re-executes this binary for
// bundled adapters) and as the fabric-agent-ctl and fabric-agent-ctl-serve
// binaries of the scripts (the second found on PATH).
func TestMain(m *testing.M) {
	if served, code := bundled.ServeHost(); served {
		os.Exit(code)
	}
	testscript.Main(m, map[string]func(){
		"fabric-agent-ctl": func() { os.Exit(cli.Main()) },
		cli.ServeBinary:    func() { os.Exit(servecmd.Main()) },
	})
}

// pollLimit bounds every wait of the scripts; generous, since the machine
// may be busy. No script asserts a duration except a check's own deadline.
const pollLimit = 60 * time.Second

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("..", "testdata", "script"),
		Setup: func(env *testscript.Env) error {
			env.Setenv(agentctl.EnvSocket, filepath.Join(env.WorkDir, "ctl.sock"))
			env.Setenv("HOME", env.WorkDir)
			// Race-built hosts would otherwise sleep at exit.
			if v := os.Getenv("GORACE"); v != "" {
				env.Setenv("GORACE", v)
			} else {
				env.Setenv("GORACE", "atexit_sleep_ms=0")
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":     cmdExitcode,
			"jsonq":        cmdJSONQ,
			"waitserve":    cmdWaitServe,
			"waitactivity": cmdWaitActivity,
			"signal":       cmdSignal,
			"waitgone":     cmdWaitGone,
			"filemode":     cmdFileMode,
			"bigrequest":   cmdBigRequest,
		},
	})
}

// exitcode WANT CMD [ARGS...] runs CMD like exec and checks its exit code.
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode WANT CMD [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %v", err)
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("exitcode: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// jsonq [-env NAME] FILE PATH [WANT | -le N | -ge N] reads the JSON value
// at a dotted PATH of FILE (stdout and stderr are the last command's
// output). Numeric segments index arrays; @len is an array's length. With
// WANT it compares the value's text; with -env it stores it in NAME.
func cmdJSONQ(ts *testscript.TestScript, neg bool, args []string) {
	envName := ""
	if len(args) >= 2 && args[0] == "-env" {
		envName, args = args[1], args[2:]
	}
	if len(args) < 2 || len(args) > 4 {
		ts.Fatalf("usage: jsonq [-env NAME] FILE PATH [WANT | -le N | -ge N]")
	}
	var doc any
	if err := json.Unmarshal([]byte(ts.ReadFile(args[0])), &doc); err != nil {
		ts.Fatalf("jsonq: %s is not JSON: %v", args[0], err)
	}
	v, err := jsonPath(doc, args[1])
	if err != nil {
		if neg && len(args) == 2 {
			return // ! jsonq FILE PATH: the path does not exist
		}
		ts.Fatalf("jsonq: %v", err)
	}
	text := jsonText(v)
	if envName != "" {
		ts.Setenv(envName, text)
	}
	ok := true
	switch {
	case len(args) == 2:
		if neg {
			ts.Fatalf("jsonq: %s exists: %s", args[1], text)
		}
		return
	case len(args) == 4 && (args[2] == "-le" || args[2] == "-ge"):
		n, err1 := strconv.ParseFloat(text, 64)
		bound, err2 := strconv.ParseFloat(args[3], 64)
		if err1 != nil || err2 != nil {
			ts.Fatalf("jsonq: %s = %s is not a number", args[1], text)
		}
		ok = (args[2] == "-le" && n <= bound) || (args[2] == "-ge" && n >= bound)
	case len(args) == 3:
		ok = text == args[2]
	default:
		ts.Fatalf("usage: jsonq [-env NAME] FILE PATH [WANT | -le N | -ge N]")
	}
	if ok == neg {
		ts.Fatalf("jsonq: %s = %q, want %s%s", args[1], text, map[bool]string{true: "not ", false: ""}[neg], strings.Join(args[2:], " "))
	}
}

func jsonPath(doc any, path string) (any, error) {
	v := doc
	for _, seg := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			next, ok := x[seg]
			if !ok {
				return nil, fmt.Errorf("%s: no member %q", path, seg)
			}
			v = next
		case []any:
			if seg == "@len" {
				v = float64(len(x))
				continue
			}
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(x) {
				return nil, fmt.Errorf("%s: no element %q in an array of %d", path, seg, len(x))
			}
			v = x[i]
		default:
			return nil, fmt.Errorf("%s: %q indexes a %T", path, seg, v)
		}
	}
	return v, nil
}

func jsonText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return "null"
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func (s scriptClient) do(req *agentctl.Request, wait time.Duration) (*agentctl.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	return (&agentctl.Client{Socket: s.socket}).Do(ctx, req)
}

type scriptClient struct{ socket string }

func socketOf(ts *testscript.TestScript) scriptClient {
	return scriptClient{ts.Getenv(agentctl.EnvSocket)}
}

// waitserve waits until serve answers a server check on $FABRIC_AGENT_CTL_SOCKET.
func cmdWaitServe(ts *testscript.TestScript, neg bool, args []string) {
	c := socketOf(ts)
	deadline := time.Now().Add(pollLimit)
	for {
		resp, err := c.do(&agentctl.Request{Operation: agentctl.OpCheck}, 5*time.Second)
		if err == nil && resp.Status == agentctl.StatusSucceeded {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("serve did not answer on %s within %v: %v", c.socket, pollLimit, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitactivity RUNTIME_ID ACTIVITY waits until status shows the runtime
// with that activity (idle, busy, stopping).
func cmdWaitActivity(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: waitactivity RUNTIME_ID ACTIVITY")
	}
	c := socketOf(ts)
	deadline := time.Now().Add(pollLimit)
	last := "none"
	for {
		resp, err := c.do(&agentctl.Request{Operation: agentctl.OpStatus, RuntimeID: args[0]}, 5*time.Second)
		if err == nil && resp.Status == agentctl.StatusSucceeded {
			var st agentctl.Status
			if json.Unmarshal(resp.Output, &st) == nil && len(st.Runtimes) == 1 {
				last = st.Runtimes[0].Activity
				if last == args[1] {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			ts.Fatalf("runtime %s is %s, not %s, after %v (%v)", args[0], last, args[1], pollLimit, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var signals = map[string]syscall.Signal{
	"TERM": syscall.SIGTERM, "INT": syscall.SIGINT, "KILL": syscall.SIGKILL,
	"STOP": syscall.SIGSTOP, "CONT": syscall.SIGCONT,
}

// signal SIG PID sends a signal to a process.
func cmdSignal(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: signal TERM|INT|KILL|STOP|CONT PID")
	}
	sig, ok := signals[args[0]]
	pid, err := strconv.Atoi(args[1])
	if !ok || err != nil || pid <= 1 {
		ts.Fatalf("signal: bad signal or pid: %v", args)
	}
	ts.Check(syscall.Kill(pid, sig))
}

// waitgone PID waits until a process has exited (a zombie counts as gone).
func cmdWaitGone(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: waitgone PID")
	}
	deadline := time.Now().Add(pollLimit)
	for {
		pid, _ := strconv.Atoi(args[0])
		st, err := procfs.Default.Stat(pid)
		if errors.Is(err, fs.ErrNotExist) || err == nil && !st.Live() {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("process %s still runs after %v", args[0], pollLimit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// filemode FILE MODE checks a file's permission bits (octal).
func cmdFileMode(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: filemode FILE MODE")
	}
	want, err := strconv.ParseUint(args[1], 8, 32)
	ts.Check(err)
	fi, err := os.Lstat(ts.MkAbs(args[0]))
	ts.Check(err)
	if got := fi.Mode().Perm(); (uint64(got) == want) == neg {
		ts.Fatalf("%s has mode %#o, want %s%#o", args[0], got, map[bool]string{true: "not ", false: ""}[neg], want)
	}
}

// bigrequest NBYTES sends a well-formed invoke request of about NBYTES on
// a raw connection and prints serve's answer.
func cmdBigRequest(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: bigrequest NBYTES")
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	req := &agentctl.Request{ProtocolVersion: agentctl.ProtocolVersion, OperationID: "op-big", Operation: agentctl.OpInvoke,
		Agent: "demo", RuntimeID: "runtime-x", Request: &contract.RunRequest{Input: strings.Repeat("a", n)}}
	line, err := agentctl.EncodeRequest(req)
	ts.Check(err)
	conn, err := net.Dial("unix", socketOf(ts).socket)
	ts.Check(err)
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(pollLimit))
	go func() { _, _ = conn.Write(line) }() // serve may stop reading early
	var resp []byte
	buf := make([]byte, 4096)
	for {
		k, err := conn.Read(buf)
		resp = append(resp, buf[:k]...)
		if err != nil || strings.Contains(string(resp), "\n") {
			break
		}
	}
	fmt.Fprint(ts.Stdout(), string(resp))
}

// ctlIn puts this test binary into a fresh directory as fabric-agent-ctl
// (TestMain runs it as the client by that name), with fabric-agent-ctl-serve
// beside it when serveBeside, and returns the client's path.
func ctlIn(t *testing.T, serveBeside bool) string {
	t.Helper()
	names := []string{"fabric-agent-ctl"}
	if serveBeside {
		names = append(names, cli.ServeBinary)
	}
	return filepath.Join(testproc.ExecutableAs(t, names...), "fabric-agent-ctl")
}

// pathWithServe is a PATH on which fabric-agent-ctl-serve is found (the
// directory testscript.Main made for TestMain's commands).
func pathWithServe(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath(cli.ServeBinary)
	if err != nil {
		t.Fatalf("%s is not on PATH: %v", cli.ServeBinary, err)
	}
	return filepath.Dir(p)
}

func exitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return 0
}

// serve without fabric-agent-ctl-serve beside it or on PATH fails with a
// usage exit and one line naming both places; its flags are still checked
// first, as before the split.
func TestServeNotFound(t *testing.T) {
	ctl := ctlIn(t, false)
	empty := t.TempDir()
	for _, tc := range []struct {
		args       []string
		wantStderr []string
	}{
		{[]string{"serve"}, []string{filepath.Join(filepath.Dir(ctl), cli.ServeBinary), "nor on PATH"}},
		{[]string{"--socket", "x.sock", "serve", "--shutdown-timeout", "1s"}, []string{filepath.Join(filepath.Dir(ctl), cli.ServeBinary), "nor on PATH"}},
		{[]string{"serve", "--log-level", "loud"}, []string{"--log-level must be debug, info, warn or error"}},
		{[]string{"serve", "extra"}, []string{"unknown command"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			cmd := exec.Command(ctl, tc.args...)
			cmd.Env = append(os.Environ(), "PATH="+empty)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if got := exitCode(t, cmd.Run()); got != agentctl.ExitUsage {
				t.Fatalf("exit %d, want %d; stderr: %s", got, agentctl.ExitUsage, stderr.String())
			}
			if n := strings.Count(stderr.String(), "\n"); n != 1 {
				t.Errorf("stderr has %d lines, want 1: %q", n, stderr.String())
			}
			for _, want := range tc.wantStderr {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr %q does not name %q", stderr.String(), want)
				}
			}
			var doc struct {
				Status string `json:"status"`
				Error  struct {
					Code string `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil || doc.Status != agentctl.StatusFailed || doc.Error.Code != agentctl.CodeUsage {
				t.Errorf("stdout %q is not a usage failure (%v)", stdout.String(), err)
			}
		})
	}
}

// serve replaces fabric-agent-ctl with fabric-agent-ctl-serve, found
// beside it or else on PATH: the process that serves is the one started.
func TestServeExecs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		beside bool
		path   string
	}{
		{"beside", true, t.TempDir()},
		{"on PATH", false, pathWithServe(t)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctl := ctlIn(t, tc.beside)
			socket := filepath.Join(t.TempDir(), "ctl.sock")
			cmd := exec.Command(ctl, "serve", "--socket", socket)
			cmd.Env = append(os.Environ(), "PATH="+tc.path, "HOME="+t.TempDir(), "GORACE=atexit_sleep_ms=0")
			testproc.ServesAs(t, cmd, cli.ServeBinary, func(stdout io.Reader) (int, error) {
				var serving struct {
					Status string `json:"status"`
					PID    int    `json:"pid"`
					Socket string `json:"socket"`
				}
				err := json.NewDecoder(stdout).Decode(&serving)
				if err == nil && (serving.Status != agentctl.ServerServing || serving.Socket != socket) {
					t.Errorf("serving line %+v, want status %s, socket %s", serving, agentctl.ServerServing, socket)
				}
				return serving.PID, err
			})
		})
	}
}

// A client waiting for serve's answer turns SIGINT into the cancelled
// failure document (exit 1), as it did when it caught signals from the
// start: it catches them once connected, before it sends the request.
func TestInterruptWhileWaiting(t *testing.T) {
	ctl := ctlIn(t, false)
	socket := filepath.Join(t.TempDir(), "ctl.sock")
	ln, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cmd := exec.Command(ctl, "--socket", socket, "check")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	conn, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The request arrived: the client sent it after it began catching
	// SIGINT, and now waits for the answer, which never comes.
	if _, err := bufio.NewReader(conn).ReadBytes('\n'); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if got := exitCode(t, cmd.Wait()); got != agentctl.ExitFailed {
		t.Fatalf("exit %d, want %d; stderr: %s", got, agentctl.ExitFailed, stderr.String())
	}
	var doc struct {
		Status    string `json:"status"`
		Operation string `json:"operation"`
		Error     struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("stdout %q: %v", stdout.String(), err)
	}
	if doc.Status != agentctl.StatusFailed || doc.Operation != agentctl.OpCheck || doc.Error.Code != agentctl.CodeCancelled {
		t.Errorf("stdout %s, want a failed check with code %s", stdout.String(), agentctl.CodeCancelled)
	}
	if !strings.Contains(stderr.String(), "cancelled before serve answered") {
		t.Errorf("stderr %q", stderr.String())
	}
}
