package harnessui

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
	"github.com/fabric-runtime/fabric/proc"
)

const runtimeID = "runtime-0123456789abcdef"

// testLog captures a Set's structured log.
type testLog struct{ buf testproc.Output }

func (l *testLog) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(&l.buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// pids returns the pids of every child the Set logged as started.
func (l *testLog) pids(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(l.buf.String()), "\n") {
		var rec struct {
			Msg       string  `json:"msg"`
			Interface string  `json:"interface"`
			Pid       float64 `json:"pid"`
		}
		if line == "" || json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if rec.Msg == "interface child started" {
			out[rec.Interface] = int(rec.Pid)
		}
	}
	return out
}

func testSpec(t *testing.T, log *testLog, children ...Child) Spec {
	t.Helper()
	s := Spec{RuntimeID: runtimeID, ArtifactRoot: t.TempDir(), AdapterName: "demo", Children: children}
	if log != nil {
		s.Logger = log.logger()
	}
	return s
}

func stopCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustStart(t *testing.T, spec Spec) *Set {
	t.Helper()
	set, err := Start(context.Background(), spec)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = set.Stop(stopCtx(t)) })
	return set
}

// assertFailedStart checks a failed start's code and that it left nothing:
// no file under the artifact root (L2, Q1) and no child running.
func assertFailedStart(t *testing.T, err error, code, name string, spec Spec, log *testLog) {
	t.Helper()
	if err == nil {
		t.Fatal("Start succeeded")
	}
	if got := codeOf(err); got != code {
		t.Fatalf("code %q, want %q: %v", got, code, err)
	}
	if e, _ := errors.AsType[*Error](err); name != "" && e.Interface != name {
		t.Errorf("interface %q, want %q: %v", e.Interface, name, err)
	}
	// The host reports the code: the error is also an *adapterkit.Error.
	if ae, ok := errors.AsType[*adapterkit.Error](err); !ok || ae.Code != code {
		t.Errorf("not an *adapterkit.Error with code %s: %v", code, err)
	}
	if left := files(t, spec.ArtifactRoot); len(left) > 0 {
		t.Errorf("a failed start left files: %v", left)
	}
	if log != nil {
		for n, pid := range log.pids(t) {
			if alive(pid) {
				t.Errorf("child %s (pid %d) still runs after a failed start", n, pid)
			}
		}
	}
}

// TestStartAndStop is the whole happy path: paths (P1-P4), tokens written
// 0600 only after health and fresh at every start (T1, Q1), C3's switches,
// the handle report, Check's levels (L4), the launcher (P4, A3), and stop
// (L5).
func TestStartAndStop(t *testing.T) {
	log := &testLog{}
	spec := testSpec(t, log)
	dir := InterfacesDir(spec.ArtifactRoot, "demo", runtimeID)
	dashToken, termToken, marker := tokenFile(dir, "dashboard"), tokenFile(dir, "terminal"), markerFile(dir, "terminal")
	watch := strings.Join([]string{dashToken, termToken, marker}, string(os.PathListSeparator))
	// A token and marker left at these paths by an earlier start (L7)
	// must not pass for this start's: the children check at every health
	// request that none exists.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{dashToken, marker} {
		if err := os.WriteFile(f, []byte("stale"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	repDash, repAPI := filepath.Join(t.TempDir(), "dash"), filepath.Join(t.TempDir(), "api")
	dashPort, apiPort := freePort(t), freePort(t)
	dash := testChild(t, "dashboard", dashPort, envReport+"="+repDash, envWatch+"="+watch, envTokenEnv+"=DEMO_TOKEN", envHealthDelay+"=300ms")
	dash.Browser, dash.Credential, dash.TokenEnv, dash.ReadyPath, dash.Path = true, contract.CredentialBearer, "DEMO_TOKEN", "/auth", "/ui/"
	api := testChild(t, "api", apiPort, envReport+"="+repAPI, envWatch+"="+watch, "DO_NOT_TRACK=0")
	term := Child{Name: "terminal", Kind: contract.InterfaceTerminal, Credential: contract.CredentialBearer, Launcher: &Launcher{
		Argv:     []string{"sh", "-c", `test "$TERM_TOKEN" = "$(cat "$1")" && echo "launched $GREETING $DO_NOT_TRACK $(pwd)"`, "sh", termToken},
		Env:      []string{"GREETING=it's ok"},
		Dir:      "/",
		TokenEnv: "TERM_TOKEN",
	}}
	spec.Children = []Child{dash, api, term}
	set := mustStart(t, spec)

	for _, rep := range []string{repDash, repAPI} {
		lines := readReport(t, rep)
		if !slices.Contains(lines, "healthy") {
			t.Fatalf("%s: child never reported healthy: %q", rep, lines)
		}
		for _, l := range lines {
			if strings.HasPrefix(l, "early") {
				t.Errorf("%s: a token or marker existed while a child was being checked (T1, Q1): %s", rep, l)
			}
		}
	}
	// C3: quiet switches are on, unless the child's environment says otherwise.
	if lines := readReport(t, repDash); !slices.Contains(lines, "env DO_NOT_TRACK=1") {
		t.Errorf("dashboard env: %q", lines)
	}
	if lines := readReport(t, repAPI); !slices.Contains(lines, "env DO_NOT_TRACK=0") {
		t.Errorf("api env: %q", lines)
	}

	// T1, P3: per-start tokens, owner-only.
	tokens := map[string]string{}
	for name, path := range map[string]string{"dashboard": dashToken, "terminal": termToken} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", path, st.Mode().Perm())
		}
		b, _ := os.ReadFile(path)
		if !regexp.MustCompile(`^[0-9a-f]{64}$`).Match(b) || string(b) != set.Token(name) {
			t.Errorf("%s does not hold the interface's 256-bit token", path)
		}
		tokens[name] = string(b)
	}
	if tokens["dashboard"] == tokens["terminal"] {
		t.Error("two interfaces share a token")
	}
	if _, err := os.Stat(tokenFile(dir, "api")); !os.IsNotExist(err) {
		t.Errorf("api has no credential but has a token file: %v", err)
	}
	for path, mode := range map[string]os.FileMode{marker: 0o600, launcherFile(dir, "terminal"): 0o700} {
		st, err := os.Stat(path)
		if err != nil || st.Mode().Perm() != mode {
			t.Errorf("%s: %v, mode want %v", path, err, mode)
		}
	}

	// Discovery: the report locates everything and holds no credential.
	want := []contract.InterfaceInfo{
		{Name: "dashboard", Kind: "http", Browser: true, Address: "127.0.0.1", Port: dashPort, Path: "/ui/",
			URL: "http://127.0.0.1:" + strconv.Itoa(dashPort) + "/ui/", Credential: "bearer", CredentialFile: dashToken},
		{Name: "api", Kind: "http", Address: "127.0.0.1", Port: apiPort, Path: "/", URL: "http://127.0.0.1:" + strconv.Itoa(apiPort) + "/"},
		{Name: "terminal", Kind: "terminal", Credential: "bearer", CredentialFile: termToken,
			Argv: []string{launcherFile(dir, "terminal")}, MarkerFile: marker},
	}
	if diff := cmp.Diff(want, set.Interfaces()); diff != "" {
		t.Errorf("Interfaces (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(dashToken, filepath.Join(spec.ArtifactRoot, ".fabric", "demo", "runtimes", runtimeID, "interfaces")+"/") {
		t.Errorf("token path %s is not under P3's directory", dashToken)
	}

	// L4: levels per interface.
	ctx := stopCtx(t)
	checks := []struct{ name, level, outcome string }{
		{"dashboard", "live", "passed"}, {"dashboard", "active", "passed"}, {"dashboard", "ready", "passed"},
		{"api", "live", "passed"}, {"api", "active", "passed"}, {"api", "ready", "unsupported"},
		{"terminal", "live", "passed"}, {"terminal", "active", "unsupported"},
		{"nope", "live", "unsupported"}, {"api", "bogus", "unsupported"},
	}
	for _, c := range checks {
		if h := set.Check(ctx, c.name, c.level); h.Outcome != c.outcome {
			t.Errorf("Check(%s, %s) = %+v, want %s", c.name, c.level, h, c.outcome)
		}
	}

	// P4, A3: the launcher runs the command with its configuration and the
	// token from the token file.
	launcher := set.Interfaces()[2].Argv[0]
	out, err := exec.Command(launcher).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "launched it's ok 1 /" {
		t.Errorf("launcher: %v: %q", err, out)
	}

	pids := log.pids(t)
	if len(pids) != 2 {
		t.Fatalf("started pids %v", pids)
	}
	if err := set.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{dashToken, termToken, marker} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s still exists after stop: %v", f, err)
		}
	}
	for n, pid := range pids {
		if alive(pid) {
			t.Errorf("%s (pid %d) runs after stop", n, pid)
		}
	}
	// The launcher stays and refuses to run without its marker.
	out, err = exec.Command(launcher).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "is not running") {
		t.Errorf("launcher after stop: %v: %q", err, out)
	}
	if h := set.Check(ctx, "dashboard", "live"); h.Outcome != "failed" {
		t.Errorf("Check after stop: %+v", h)
	}
	if err := set.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}

	// T1: a restart (same runtime id here) generates new tokens.
	spec.Children = []Child{dash}
	set2 := mustStart(t, spec)
	if b, _ := os.ReadFile(dashToken); string(b) == tokens["dashboard"] || string(b) != set2.Token("dashboard") {
		t.Error("the second start did not write a fresh token")
	}
}

// TestStopOrder (L5): Stop removes token files and markers before the first
// SIGTERM (each child records, on SIGTERM, whether they still exist), and a
// child that ignores SIGTERM is killed after StopGrace.
func TestStopOrder(t *testing.T) {
	spec := testSpec(t, nil)
	dir := InterfacesDir(spec.ArtifactRoot, "demo", runtimeID)
	watch := tokenFile(dir, "dashboard") + string(os.PathListSeparator) + markerFile(dir, "terminal")
	repA, repB := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	a := testChild(t, "dashboard", freePort(t), envReport+"="+repA, envWatch+"="+watch)
	a.Credential = contract.CredentialBearer
	b := testChild(t, "api", freePort(t), envReport+"="+repB, envWatch+"="+watch, envIgnoreTerm+"=1")
	term := Child{Name: "terminal", Kind: contract.InterfaceTerminal, Launcher: &Launcher{Argv: []string{"true"}}}
	spec.Children = []Child{a, b, term}
	set := mustStart(t, spec)
	for _, f := range filepath.SplitList(watch) {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("before stop: %v", err)
		}
	}
	begin := time.Now()
	if err := set.Stop(stopCtx(t)); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(begin)
	for _, rep := range []string{repA, repB} {
		if lines := readReport(t, rep); !slices.Contains(lines, "sigterm dashboard.token=false terminal.running=false") {
			t.Errorf("%s: want the files gone at SIGTERM, got %q", rep, lines)
		}
	}
	if info, _ := set.Process("dashboard").ExitState(); info.Code != 0 || info.Signal != "" {
		t.Errorf("dashboard ended with %v, want a clean exit on SIGTERM", info)
	}
	if info, _ := set.Process("api").ExitState(); info.Signal != "SIGKILL" {
		t.Errorf("the child ignoring SIGTERM ended with %v, want SIGKILL", info)
	}
	if elapsed < StopGrace {
		t.Errorf("stop took %v: SIGKILL came before the %v grace", elapsed, StopGrace)
	}
	if elapsed > StopGrace+proc.KillWait+15*time.Second {
		t.Errorf("stop took %v", elapsed)
	}
}

// TestPortTakenBeforeLaunch (S2, L6): a port something listens on fails
// start before any child is launched; so does a derived port (Q7).
func TestPortTakenBeforeLaunch(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().(*net.TCPAddr).Port
	for _, tc := range []struct {
		name  string
		child func(rep string) Child
	}{
		{"port", func(rep string) Child { return testChild(t, "dashboard", taken, envReport+"="+rep) }},
		{"derived port", func(rep string) Child {
			c := testChild(t, "dashboard", freePort(t), envReport+"="+rep)
			c.CheckPorts = []int{taken}
			return c
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := filepath.Join(t.TempDir(), "rep")
			c := tc.child(rep)
			c.Credential = contract.CredentialBearer
			other := testChild(t, "api", freePort(t), envReport+"="+rep)
			spec := testSpec(t, nil, other, c)
			_, err := Start(context.Background(), spec)
			assertFailedStart(t, err, CodePortTaken, "dashboard", spec, nil)
			if lines := readReport(t, rep); len(lines) > 0 {
				t.Errorf("a child was launched: %q", lines)
			}
		})
	}
}

// TestForeignOwnerAfterHealth (S2, Q5): health passes, but the socket on the
// port belongs to a process outside the child's group: start fails.
func TestForeignOwnerAfterHealth(t *testing.T) {
	log := &testLog{}
	pidFile := filepath.Join(t.TempDir(), "foreign.pid")
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, _ := strconv.Atoi(string(b)); pid > 0 {
				_ = syscallKill(pid)
			}
		}
	})
	c := testChild(t, "dashboard", freePort(t), envMode+"=foreign", envForeignPid+"="+pidFile)
	c.Credential = contract.CredentialBearer
	spec := testSpec(t, log, c)
	_, err := Start(context.Background(), spec)
	assertFailedStart(t, err, CodePortTaken, "dashboard", spec, log)
	if !strings.Contains(err.Error(), "not the child") {
		t.Errorf("error does not say the port is someone else's: %v", err)
	}
}

// TestNotLoopback (A1): a child listening on every address fails start.
func TestNotLoopback(t *testing.T) {
	log := &testLog{}
	c := testChild(t, "dashboard", freePort(t), envBind+"=0.0.0.0")
	spec := testSpec(t, log, c)
	_, err := Start(context.Background(), spec)
	assertFailedStart(t, err, CodeNotLoopback, "dashboard", spec, log)
}

// TestChildExits (L2): a child that exits fails start at once; the child
// already started is stopped and no token or marker is left.
func TestChildExits(t *testing.T) {
	log := &testLog{}
	good := testChild(t, "dashboard", freePort(t), envHealthDelay+"=1s")
	good.Credential = contract.CredentialBearer
	bad := testChild(t, "api", freePort(t), envMode+"=exit")
	term := Child{Name: "terminal", Kind: contract.InterfaceTerminal, Launcher: &Launcher{Argv: []string{"true"}}}
	spec := testSpec(t, log, good, bad, term)
	_, err := Start(context.Background(), spec)
	assertFailedStart(t, err, CodeChildExited, "api", spec, log)
	if len(log.pids(t)) != 2 {
		t.Errorf("started %v, want both children", log.pids(t))
	}
	if !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("error does not say how the child ended: %v", err)
	}
}

// TestNeverHealthy (L2, L3): a child that never passes health fails start
// at the one deadline, and nothing is left behind.
func TestNeverHealthy(t *testing.T) {
	log := &testLog{}
	sick := testChild(t, "dashboard", freePort(t), envMode+"=unhealthy")
	sick.Credential = contract.CredentialBearer
	fine := testChild(t, "api", freePort(t))
	spec := testSpec(t, log, sick, fine)
	spec.StartupTimeout = 3 * time.Second
	begin := time.Now()
	_, err := Start(context.Background(), spec)
	elapsed := time.Since(begin)
	assertFailedStart(t, err, CodeStartTimeout, "dashboard", spec, log)
	if !strings.Contains(err.Error(), "status 503") {
		t.Errorf("error does not carry the last probe's answer: %v", err)
	}
	// The deadline is the startup timeout; cleanup stays within the 15 s
	// that L3's maximum leaves below core's 90 s start limit.
	if elapsed < spec.StartupTimeout || elapsed > spec.StartupTimeout+15*time.Second {
		t.Errorf("start failed after %v, want the %v deadline (+ cleanup)", elapsed, spec.StartupTimeout)
	}
}

// TestCallerDeadline (L3): a deadline on Start's context is part of the
// one deadline.
func TestCallerDeadline(t *testing.T) {
	log := &testLog{}
	spec := testSpec(t, log, testChild(t, "dashboard", freePort(t), envMode+"=unhealthy"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := Start(ctx, spec)
	assertFailedStart(t, err, CodeStartTimeout, "dashboard", spec, log)

	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(time.Second, cancel)
	_, err = Start(ctx, spec)
	assertFailedStart(t, err, CodeStartCancelled, "dashboard", spec, log)
}

// TestConcurrentStart (L3): three children that each need most of the
// deadline pass, because they start concurrently (one after the other
// would need 27 s of a 15 s deadline).
func TestConcurrentStart(t *testing.T) {
	var children []Child
	for _, n := range []string{"one", "two", "three"} {
		children = append(children, testChild(t, n, freePort(t), envHealthDelay+"=9s"))
	}
	spec := testSpec(t, nil, children...)
	spec.StartupTimeout = 15 * time.Second
	set := mustStart(t, spec)
	if len(set.Interfaces()) != 3 {
		t.Fatal(set.Interfaces())
	}
}

// TestEqualPorts (S3): two interfaces on one port fail start, with nothing
// launched.
func TestEqualPorts(t *testing.T) {
	port := freePort(t)
	rep := filepath.Join(t.TempDir(), "rep")
	for name, children := range map[string][]Child{
		"ports": {testChild(t, "dashboard", port, envReport+"="+rep), testChild(t, "api", port, envReport+"="+rep)},
		"derived": {testChild(t, "dashboard", port, envReport+"="+rep), func() Child {
			c := testChild(t, "api", freePort(t), envReport+"="+rep)
			c.CheckPorts = []int{port}
			return c
		}()},
	} {
		t.Run(name, func(t *testing.T) {
			spec := testSpec(t, nil, children...)
			_, err := Start(context.Background(), spec)
			assertFailedStart(t, err, CodePortsEqual, "api", spec, nil)
			if lines := readReport(t, rep); len(lines) > 0 {
				t.Errorf("a child was launched: %q", lines)
			}
		})
	}
}

// TestCheckAfterChildDies (L4): a dead interface child fails its own check;
// nothing restarts it and Stop still works.
func TestCheckAfterChildDies(t *testing.T) {
	c := testChild(t, "dashboard", freePort(t), envTokenEnv+"=DEMO_TOKEN")
	c.Credential, c.TokenEnv, c.ReadyPath = contract.CredentialBearer, "DEMO_TOKEN", "/auth"
	spec := testSpec(t, nil, c)
	set := mustStart(t, spec)
	ctx := stopCtx(t)
	// ready reads the stored credential: without the file it fails.
	tok := set.Interfaces()[0].CredentialFile
	b, _ := os.ReadFile(tok)
	if err := os.WriteFile(tok, []byte("wrong"), 0o600); err != nil {
		t.Fatal(err)
	}
	if h := set.Check(ctx, "dashboard", "ready"); h.Outcome != "failed" || h.ReasonCode != contract.ReasonHealthFailed {
		t.Errorf("ready with a wrong stored credential: %+v", h)
	}
	_ = os.WriteFile(tok, b, 0o600)
	if h := set.Check(ctx, "dashboard", "ready"); h.Outcome != "passed" {
		t.Errorf("ready: %+v", h)
	}
	p := set.Process("dashboard")
	_ = p.Kill()
	<-p.Done()
	if h := set.Check(ctx, "dashboard", "live"); h.Outcome != "failed" || h.ReasonCode != contract.ReasonAgentExited {
		t.Errorf("live after the child died: %+v", h)
	}
	if err := set.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestKillHost (L7): SIGKILL of the adapter host leaves exactly the token
// files, launchers and markers (nothing removes them), and the children die
// with the host (Pdeathsig).
func TestKillHost(t *testing.T) {
	root, port := t.TempDir(), freePort(t)
	hs, _ := json.Marshal(hostSpec{Root: root, RuntimeID: runtimeID, Port: port})
	cmd := exec.Command(testExe(t), "-test.run=^$")
	cmd.Env = append(os.Environ(), roleEnv+"=host", "T_HOST_SPEC="+string(hs))
	stderr := &testproc.Output{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			for range lines {
			}
			_ = cmd.Wait()
		}
		<-readDone
	}()
	childPid := 0
	timeout := time.After(90 * time.Second)
wait:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("host ended before ready: %s", stderr.String())
			}
			if s, ok := strings.CutPrefix(l, "pid "); ok {
				childPid, _ = strconv.Atoi(s)
			}
			if l == "ready" {
				break wait
			}
		case <-timeout:
			t.Fatalf("host not ready: %s", stderr.String())
		}
	}
	if childPid == 0 || !alive(childPid) {
		t.Fatalf("child pid %d not running", childPid)
	}
	killed = true
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for range lines {
	}
	_ = cmd.Wait()
	waitGone(t, childPid, 10*time.Second)

	dir := filepath.Join(".fabric", "demo", "runtimes", runtimeID, "interfaces")
	want := []string{filepath.Join(dir, "dashboard.token"), filepath.Join(dir, "terminal"), filepath.Join(dir, "terminal.running")}
	if diff := cmp.Diff(want, files(t, root)); diff != "" {
		t.Errorf("files after the host was killed (-want +got):\n%s", diff)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		inUse, err := proc.PortInUse("", uint16(port))
		if err != nil {
			t.Fatal(err)
		}
		if !inUse {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("port %d still listened on after the host and child died", port)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
