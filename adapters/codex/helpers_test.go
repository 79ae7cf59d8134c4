//go:build linux

package codex_test

import (
	"bufio"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/adapters/codex"
	"github.com/fabric-runtime/fabric/internal/testsupport/harnesstest"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
	"github.com/fabric-runtime/fabric/modelstub"
)

// keyEnv names the variable carrying the test's model key.
const keyEnv = "FABRIC_CODEX_TEST_KEY"

// testKey is the key the stub expects.
const testKey = "sk-fabric-codex-test-4f1c"

// testModel is the model name the runtime asks for.
const testModel = "gpt-5.1-codex"

// harnessBinDir returns a directory holding the pinned codex: the npm
// launcher's (harnesses/node_modules/.bin), else the vendored native
// binary's. It skips the test when the harnesses are not installed, unless
// FABRIC_REQUIRE_HARNESSES=1; with FABRIC_CODEX_BIN set it returns "".
func harnessBinDir(t testing.TB) string {
	t.Helper()
	nm, err := filepath.Abs(filepath.Join("..", "..", "harnesses", "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{filepath.Join(nm, ".bin"),
		filepath.Join(nm, "@openai", "codex-linux-x64", "vendor", "x86_64-unknown-linux-musl", "bin"),
		filepath.Join(nm, "@openai", "codex-linux-arm64", "vendor", "aarch64-unknown-linux-musl", "bin")}
	for _, dir := range dirs {
		if _, err := codex.ResolveBinary(func(string) string { return "" }, dir); err == nil {
			return dir
		}
	}
	if os.Getenv(codex.EnvBinary) != "" {
		return ""
	}
	livetest.Missing(t, "the Codex CLI (in "+nm+")", "run harnesses/install.sh", nil)
	return ""
}

// live is one test's world: the adaptertest rig with the Codex adapter's
// descriptor, the stub expecting testKey, and codex on PATH.
type live struct{ *adaptertest.Rig }

func newLive(t testing.TB, script *modelstub.Script, opts ...modelstub.Option) *live {
	t.Helper()
	var path []string
	if bin := harnessBinDir(t); bin != "" {
		path = append(path, bin)
	}
	return &live{harnesstest.NewRig(t, adaptertest.Options{Script: script, StubOptions: opts, KeyEnv: keyEnv, Key: testKey,
		Descriptors: map[string][]byte{"codex.fabric-adapter.json": codex.Descriptor()}, Path: path, Deadline: 60 * time.Second})}
}

// config builds an agent config for the Codex adapter against the stub.
func (l *live) config(settings map[string]any, extra map[string]any) map[string]any {
	return l.Config(adaptertest.Doc{Name: "codex-live", AdapterID: codex.ID, Settings: settings, Model: testModel, Extra: extra})
}

// noRetries makes codex give up on the first model error.
func noRetries() map[string]any {
	return map[string]any{"config_overrides": map[string]any{
		"model_providers.fabric.request_max_retries": 0,
		"model_providers.fabric.stream_max_retries":  0,
	}}
}

// codexPid finds the codex process the host started.
func codexPid(t testing.TB, hostPid int) int {
	t.Helper()
	for _, pid := range testproc.Pids() {
		if ppid, _, comm, ok := testproc.Stat(pid); ok && ppid == hostPid && strings.HasPrefix(comm, "codex") {
			return pid
		}
	}
	t.Fatalf("no codex child of host %d", hostPid)
	return 0
}

// remoteAddrs returns the remote addresses of the TCP sockets pid holds.
func remoteAddrs(pid int) ([]netip.AddrPort, error) {
	inodes := map[string]bool{}
	fdDir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(fdDir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join(fdDir, e.Name()))
		if err == nil && strings.HasPrefix(target, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")] = true
		}
	}
	var out []netip.AddrPort
	for _, file := range []string{"tcp", "tcp6"} {
		f, err := os.Open(fmt.Sprintf("/proc/%d/net/%s", pid, file))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || !inodes[fields[9]] {
				continue
			}
			if ap, ok := parseProcAddr(fields[2]); ok {
				out = append(out, ap)
			}
		}
		f.Close()
	}
	return out, nil
}

// parseProcAddr parses a /proc/net/tcp address (hex, host byte order per
// 32-bit word).
func parseProcAddr(s string) (netip.AddrPort, bool) {
	host, port, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, false
	}
	p, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		return netip.AddrPort{}, false
	}
	var b []byte
	for i := 0; i+8 <= len(host); i += 8 {
		w, err := strconv.ParseUint(host[i:i+8], 16, 32)
		if err != nil {
			return netip.AddrPort{}, false
		}
		b = append(b, byte(w), byte(w>>8), byte(w>>16), byte(w>>24))
	}
	a, ok := netip.AddrFromSlice(b)
	if !ok {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(a.Unmap(), uint16(p)), true
}
