package modelstub

import (
	"context"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestOfficialSDKClients drives the stub with the official OpenAI,
// Anthropic and Google GenAI JavaScript SDKs, as pinned in harnesses/ (the
// harnesses are built on them). It is skipped when they are not installed
// (harnesses/install.sh).
func TestOfficialSDKClients(t *testing.T) {
	livetest.Short(t, "Node and the official OpenAI, Anthropic and Google SDKs from harnesses/")
	mods, err := filepath.Abs(filepath.Join("..", "harnesses", "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	node := filepath.Join(mods, ".bin", "node")
	for _, p := range []string{node, filepath.Join(mods, "openai"), filepath.Join(mods, "@anthropic-ai", "sdk"), filepath.Join(mods, "@google", "genai")} {
		if _, err := os.Stat(p); err != nil {
			livetest.Missing(t, p, "run harnesses/install.sh", nil)
		}
	}
	// Node resolves ES module imports next to the script.
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "sdkclients.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "sdkclients.mjs")
	if err := os.WriteFile(script, src, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(mods, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	const key = "sk-sdk-check-0123456789"
	s := newServer(t, `
rules:
  - match: {contains: STUBTOOL}
    reply: {tool_call: {command: "echo STUB_TOOL_OK"}}
  - match: {contains: SLOW}
    reply: {text: "one two three four five", chunks: 5, interval_ms: 5}
  - match: {contains: RATE}
    reply: {error: {status: 429}}
`, WithExpectKey(key))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, s.URL(), key)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_PROXY=127.0.0.1", "HTTP_PROXY=", "HTTPS_PROXY=")
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("SDK checks failed: %v", err)
	}
	for _, r := range s.Requests() {
		if !r.KeyOK {
			t.Errorf("request %d (%s) failed the key check", r.Seq, r.Path)
		}
	}
}
