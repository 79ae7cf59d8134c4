package harnessui

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/procfs"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
)

// roleEnv makes the re-executed test binary act as a test child, a foreign
// listener or an adapter host instead of running tests (so no test needs
// another program).
const roleEnv = "FABRIC_IFACE_TEST_ROLE"

// Test child switches (role "child").
const (
	envPort        = "T_PORT"         // port to listen on
	envBind        = "T_BIND"         // address to bind, default 127.0.0.1
	envMode        = "T_MODE"         // serve (default), exit, unhealthy, foreign
	envHealthDelay = "T_HEALTH_DELAY" // /health answers 503 until this long after start
	envIgnoreTerm  = "T_IGNORE_TERM"  // "1": SIGTERM is recorded, then ignored
	envReport      = "T_REPORT"       // file the child appends its observations to
	envWatch       = "T_WATCH"        // files (list-separated) whose existence is recorded
	envTokenEnv    = "T_TOKEN_ENV"    // variable holding the token; /auth wants it as Bearer
	envForeignPid  = "T_FOREIGN_PID"  // foreign mode: file receiving the foreign listener's pid
)

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "":
		goleak.VerifyTestMain(m)
	case "child":
		os.Exit(runChild())
	case "foreign":
		os.Exit(runForeign())
	case "host":
		os.Exit(runHost())
	default:
		fmt.Fprintln(os.Stderr, "unknown role", os.Getenv(roleEnv))
		os.Exit(2)
	}
}

// report appends one line to the report file, if any.
var reportMu sync.Mutex

func report(format string, args ...any) {
	path := os.Getenv(envReport)
	if path == "" {
		return
	}
	reportMu.Lock()
	defer reportMu.Unlock()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	fmt.Fprintf(f, format+"\n", args...)
	f.Close()
}

// watched describes which watched files exist: "path=true path=false".
func watched() string {
	var parts []string
	for _, p := range filepath.SplitList(os.Getenv(envWatch)) {
		_, err := os.Stat(p)
		parts = append(parts, fmt.Sprintf("%s=%v", filepath.Base(p), err == nil))
	}
	return strings.Join(parts, " ")
}

// anyWatched reports whether a watched file exists.
func anyWatched() bool {
	for _, p := range filepath.SplitList(os.Getenv(envWatch)) {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

func runChild() int {
	start := time.Now()
	report("pid %d", os.Getpid())
	report("env DO_NOT_TRACK=%s", os.Getenv("DO_NOT_TRACK"))
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM)
	go func() {
		for range sigs {
			report("sigterm %s", watched())
			if os.Getenv(envIgnoreTerm) != "1" {
				os.Exit(0)
			}
		}
	}()
	switch os.Getenv(envMode) {
	case "exit":
		return 3
	case "foreign":
		// Stay running without listening, while a process outside our
		// process group serves the port (S2, Q5).
		exe, _ := os.Executable()
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), roleEnv+"=foreign")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		_ = os.WriteFile(os.Getenv(envForeignPid), []byte(strconv.Itoa(cmd.Process.Pid)), 0o600)
		time.Sleep(5 * time.Minute)
		return 0
	}
	delay, _ := time.ParseDuration(os.Getenv(envHealthDelay))
	unhealthy := os.Getenv(envMode) == "unhealthy"
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {
		// T1, Q1: no token or marker may exist while a child is not yet
		// known healthy.
		if anyWatched() {
			report("early %s", watched())
		}
		if unhealthy || time.Since(start) < delay {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		report("healthy")
	})
	mux.HandleFunc("/auth", func(w http.ResponseWriter, r *http.Request) {
		want := os.Getenv(os.Getenv(envTokenEnv))
		if want == "" || r.Header.Get("Authorization") != "Bearer "+want {
			w.WriteHeader(http.StatusUnauthorized)
		}
	})
	bind := os.Getenv(envBind)
	if bind == "" {
		bind = "127.0.0.1"
	}
	l, err := net.Listen("tcp", net.JoinHostPort(bind, os.Getenv(envPort)))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	time.Sleep(5 * time.Minute) // a bound in case the test runner vanished
	return 0
}

// runForeign serves /health on T_PORT, for the foreign-owner test.
func runForeign() int {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", os.Getenv(envPort)))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	go func() { _ = http.Serve(l, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})) }()
	time.Sleep(2 * time.Minute)
	return 0
}

// hostSpec is what the "host" role starts: a stand-in adapter host that
// calls Start and then waits to be killed (L7).
type hostSpec struct {
	Root, RuntimeID string
	Port            int
}

func runHost() int {
	var hs hostSpec
	if err := json.Unmarshal([]byte(os.Getenv("T_HOST_SPEC")), &hs); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	exe, _ := os.Executable()
	set, err := Start(context.Background(), Spec{
		RuntimeID: hs.RuntimeID, ArtifactRoot: hs.Root, AdapterName: "demo",
		Children: []Child{
			{
				Name: "dashboard", Kind: contract.InterfaceHTTP, Port: hs.Port, Credential: contract.CredentialBearer,
				TokenEnv: "DEMO_TOKEN", Command: exe, Args: []string{"-test.run=^$"}, HealthPath: "/health",
				Env: append(os.Environ(), roleEnv+"=child", envPort+"="+strconv.Itoa(hs.Port)),
			},
			{Name: "terminal", Kind: contract.InterfaceTerminal, Launcher: &Launcher{Argv: []string{"true"}}},
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("pid %d\nready\n", set.Process("dashboard").Pid())
	time.Sleep(5 * time.Minute)
	return 0
}

// testExe is the test binary, re-executed as children.
func testExe(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// freePort returns a loopback port nothing listens on at the moment.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// testChild is an HTTP interface served by the test binary in role child.
func testChild(t *testing.T, name string, port int, env ...string) Child {
	t.Helper()
	out := &testproc.Output{}
	t.Cleanup(func() {
		if t.Failed() && out.String() != "" {
			t.Logf("child %s output:\n%s", name, out.String())
		}
	})
	return Child{
		Name: name, Kind: contract.InterfaceHTTP, Port: port,
		Command: testExe(t), Args: []string{"-test.run=^$"},
		Env:        append(os.Environ(), append([]string{roleEnv + "=child", envPort + "=" + strconv.Itoa(port)}, env...)...),
		HealthPath: "/health", Stdout: out, Stderr: out,
	}
}

// readReport returns the report file's lines.
func readReport(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

// reportPid returns the pid a child recorded.
func reportPid(t *testing.T, path string) int {
	t.Helper()
	for _, l := range readReport(t, path) {
		if s, ok := strings.CutPrefix(l, "pid "); ok {
			pid, _ := strconv.Atoi(s)
			return pid
		}
	}
	t.Fatalf("no pid in %s", path)
	return 0
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	st, err := procfs.Default.Stat(pid)
	return err == nil && st.Live()
}

// waitGone waits until pid is no longer alive.
func waitGone(t *testing.T, pid int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still alive after %v", pid, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// files lists every regular file under root, relative to it.
func files(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return out
}

// codeOf returns the code of an *Error in err's chain.
func codeOf(err error) string {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code
	}
	return ""
}

func syscallKill(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
