package servecmd_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/internal/cli"
	"github.com/fabric-runtime/fabric/internal/clifront"
	"github.com/fabric-runtime/fabric/internal/supervisor/servecmd"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
)

// TestMain doubles as fabric, fabric-core and fabric-serve (by program
// name; the last is also on PATH) and as the host of bundled adapters.
func TestMain(m *testing.M) {
	if served, code := bundled.ServeHost(); served {
		os.Exit(code)
	}
	testscript.Main(m, map[string]func(){
		"fabric":            func() { os.Exit(clifront.Main()) },
		clifront.CoreBinary: func() { os.Exit(cli.Main()) },
		cli.ServeBinary:     func() { os.Exit(servecmd.Main()) },
	})
}

// fabric serve and fabric-core serve without fabric-serve beside them or
// on PATH are a usage exit with one line naming both places. fabric-core
// checks serve's flags, and answers --print-systemd-unit, itself, as
// fabric-serve does; fabric hands serve to fabric-serve unchecked.
func TestServeNotFound(t *testing.T) {
	dir := testproc.ExecutableAs(t, "fabric", clifront.CoreBinary)
	fabric, core := filepath.Join(dir, "fabric"), filepath.Join(dir, clifront.CoreBinary)
	noPath := "PATH=" + t.TempDir()
	state := t.TempDir()
	beside := filepath.Join(dir, cli.ServeBinary)
	for _, tc := range []struct {
		bin        string
		args       []string
		wantStderr []string
	}{
		{fabric, []string{"serve", "--state-dir", state}, []string{beside, "nor on PATH"}},
		{fabric, []string{"serve", "--log-level", "loud"}, []string{beside, "nor on PATH"}},
		{core, []string{"serve", "--state-dir", state}, []string{beside, "nor on PATH"}},
		{core, []string{"-o", "jsonl", "serve", "--state-dir", state, "--console-listen", "off"}, []string{beside, "nor on PATH"}},
		{core, []string{"serve"}, []string{"--state-dir is required"}},
		{core, []string{"serve", "--state-dir", state, "--log-level", "loud"}, []string{"--log-level must be debug, info, warn or error"}},
		{core, []string{"serve", "--state-dir", state, "extra"}, []string{"unknown command"}},
	} {
		t.Run(filepath.Base(tc.bin)+" "+strings.Join(tc.args, " "), func(t *testing.T) {
			stdout, stderr, code := testproc.Run(t, []string{noPath}, tc.bin, tc.args...)
			if code != cli.ExitUsage || stdout != "" {
				t.Fatalf("exit %d, stdout %q; want %d and nothing; stderr: %s", code, stdout, cli.ExitUsage, stderr)
			}
			if n := strings.Count(stderr, "\n"); n != 1 {
				t.Errorf("stderr has %d lines, want 1: %q", n, stderr)
			}
			for _, want := range tc.wantStderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr %q does not name %q", stderr, want)
				}
			}
		})
	}
	stdout, stderr, code := testproc.Run(t, []string{noPath}, core, "serve", "--state-dir", state, "--print-systemd-unit")
	if code != 0 || !strings.Contains(stdout, fmt.Sprintf("ExecStart=%s serve --state-dir %s --socket %s\n", core, state, filepath.Join(state, "supervisor.sock"))) {
		t.Errorf("--print-systemd-unit: exit %d, stdout %q, stderr %q; want a unit that runs %s serve", code, stdout, stderr, core)
	}
}

// fabric serve --help, fabric-core serve --help and fabric-serve serve
// --help are the same text: the command is defined once.
func TestServeHelp(t *testing.T) {
	dir := testproc.ExecutableAs(t, "fabric", clifront.CoreBinary, cli.ServeBinary)
	want, _, code := testproc.Run(t, nil, filepath.Join(dir, "fabric"), "serve", "--help")
	if code != 0 || !strings.Contains(want, "--print-systemd-unit") {
		t.Fatalf("fabric serve --help: exit %d, %q", code, want)
	}
	for _, program := range []string{clifront.CoreBinary, cli.ServeBinary} {
		if got, _, _ := testproc.Run(t, nil, filepath.Join(dir, program), "serve", "--help"); got != want {
			t.Errorf("%s serve --help:\n%s\nfabric serve --help:\n%s", program, got, want)
		}
	}
}

// fabric serve (and fabric-core serve) replaces itself with fabric-serve,
// found beside it or else on PATH: the process that serves is the one
// started, with the same arguments (-o jsonl reaches it).
func TestServeExecs(t *testing.T) {
	onPath, err := exec.LookPath(cli.ServeBinary)
	if err != nil {
		t.Fatalf("%s is not on PATH: %v", cli.ServeBinary, err)
	}
	for _, tc := range []struct {
		name  string
		names []string
		path  string
	}{
		{"beside", []string{"fabric", cli.ServeBinary}, t.TempDir()},
		{"on PATH", []string{"fabric"}, filepath.Dir(onPath)},
		{"fabric-core, beside", []string{clifront.CoreBinary, cli.ServeBinary}, t.TempDir()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fabric := filepath.Join(testproc.ExecutableAs(t, tc.names...), tc.names[0])
			state := t.TempDir()
			cmd := exec.Command(fabric, "-o", "jsonl", "serve", "--state-dir", state, "--console-listen", "off")
			cmd.Env = append(os.Environ(), "PATH="+tc.path, "HOME="+t.TempDir(), "GORACE=atexit_sleep_ms=0")
			testproc.ServesAs(t, cmd, cli.ServeBinary, func(stdout io.Reader) (int, error) {
				line, err := readLine(stdout)
				if err != nil {
					return 0, err
				}
				var serving struct {
					Status string `json:"status"`
					PID    int    `json:"pid"`
					Socket string `json:"socket"`
				}
				if err := json.Unmarshal(line, &serving); err != nil {
					return 0, fmt.Errorf("serving line %q (one compact document with -o jsonl): %w", line, err)
				}
				if serving.Status != "serving" || serving.Socket != filepath.Join(state, "supervisor.sock") {
					t.Errorf("serving line %+v, want status serving, socket in %s", serving, state)
				}
				return serving.PID, nil
			})
		})
	}
}

// readLine reads one line from r, byte by byte (nothing past it).
func readLine(r io.Reader) ([]byte, error) {
	var line []byte
	b := make([]byte, 1)
	for {
		if _, err := r.Read(b); err != nil {
			return line, err
		}
		if b[0] == '\n' {
			return line, nil
		}
		line = append(line, b[0])
	}
}
