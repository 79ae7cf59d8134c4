package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
	"github.com/fabric-runtime/fabric/modelstub"
)

// TestRealHarnesses is acceptance 17: 2 tasks x {codex, claude} x 2
// repeats against the scripted model endpoint; each agent writes a file
// with a tool call and the command grader checks it; tokens come from the
// stub's usage and the cost from the spec's pricing where the harness
// reports none.
func TestRealHarnesses(t *testing.T) {
	livetest.Short(t, "the pinned codex and claude harnesses")
	harnessPath := os.Getenv("FABRIC_HARNESS_PATH")
	for _, bin := range []string{"codex", "claude"} {
		found := false
		for _, d := range filepath.SplitList(harnessPath + string(os.PathListSeparator) + os.Getenv("PATH")) {
			if st, err := os.Stat(filepath.Join(d, bin)); err == nil && st.Mode()&0o111 != 0 {
				found = true
			}
		}
		if !found {
			livetest.Missing(t, bin, "run harnesses/install.sh and put its --print-path on FABRIC_HARNESS_PATH", nil)
		}
	}
	sc, err := modelstub.ParseScript([]byte(`
default: {text: "done"}
rules:
  - match: {contains: WRITE_ANSWER}
    reply: {tool_call: {command: "echo fabric-batch > answer.txt"}}
  - match: {contains: WRITE_ANSWER}
    reply: {text: "The answer file is written."}
`))
	if err != nil {
		t.Fatal(err)
	}
	stub := modelstub.New(sc)
	t.Cleanup(stub.Close)
	sandbox := "workspace-write"
	if _, err := exec.LookPath("bwrap"); err != nil {
		sandbox = "danger-full-access"
	}
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"codex.yaml": fmt.Sprintf(`schema_version: fabric.agent/v1alpha1
metadata: {name: codex-batch}
runtime: {timeout_seconds: 180}
harness:
  adapter_id: nvidia.fabric.codex
  settings:
    sandbox: %s
    config_overrides: {model_providers.fabric.request_max_retries: 0, model_providers.fabric.stream_max_retries: 0}
models:
  default: {provider: stub, model: gpt-5-codex, api_key_env: FABRIC_STUB_API_KEY, base_url: "%s"}
`, sandbox, stub.OpenAIBaseURL()),
		"claude.yaml": fmt.Sprintf(`schema_version: fabric.agent/v1alpha1
metadata: {name: claude-batch}
runtime: {timeout_seconds: 180, max_turns: 4}
harness:
  adapter_id: nvidia.fabric.claude
  settings: {permission_mode: bypassPermissions, max_retries: 0}
models:
  default: {provider: stub, model: claude-sonnet-4-5, api_key_env: FABRIC_STUB_API_KEY, base_url: "%s"}
`, stub.AnthropicBaseURL()),
		"tasks/one/prompt.md":      "WRITE_ANSWER into answer.txt (task one)",
		"tasks/one/tests/check.sh": "grep -q fabric-batch answer.txt\n",
		"tasks/two/prompt.md":      "WRITE_ANSWER into answer.txt (task two)",
		"tasks/two/tests/check.sh": "grep -q fabric-batch answer.txt\n",
		"batch.yaml": `schema_version: fabric.batch/v1alpha1
metadata: {name: real}
tasks: {dir: tasks}
configs:
  - {id: codex, config: codex.yaml}
  - {id: claude, config: claude.yaml}
repeats: 2
grader: {kind: command, command: [sh, "{tests_dir}/check.sh"]}
limits: {concurrency: 2, run_timeout_seconds: 240}
pricing:
  - {model: gpt-5-codex, input_per_mtok: 1.25, output_per_mtok: 10}
  - {model: claude-sonnet-4-5, input_per_mtok: 3, output_per_mtok: 15}
report: {k: [1, 2]}
`,
	})
	cmd := fabric(dir, "batch", "run", "batch.yaml", "--dir", "run", "-o", "json")
	cmd.Env = append(cmd.Env, "FABRIC_STUB_API_KEY=placeholder-not-a-secret", "PATH="+harnessPath+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("fabric batch run: %v\n%s\n%s", err, out, stderr)
	}
	s := summary(t, filepath.Join(dir, "run"))
	for _, c := range s.Configs {
		if c.Passed != 4 || c.Planned != 4 {
			t.Errorf("config %s: %d of %d passed, want 4 of 4 (errors %v)", c.Config, c.Passed, c.Planned, c.Errors)
		}
		if c.Tokens == nil || c.Tokens.Input == 0 || c.Tokens.Output == 0 {
			t.Errorf("config %s: tokens %+v, want the stub's usage", c.Config, c.Tokens)
		}
		// Claude Code reports a cost of its own; Codex reports none, so
		// the spec's pricing prices it. The two are never mixed.
		source := contract.CostPriced
		if c.Config == "claude" {
			source = contract.CostReported
		}
		if c.CostUSD.Total == nil || *c.CostUSD.Total <= 0 || c.CostUSD.SourceCounts[source] != 4 {
			t.Errorf("config %s: cost %+v (sources %v), want 4 trials costed %s", c.Config, c.CostUSD, c.CostUSD.SourceCounts, source)
		}
	}
	if len(s.Harnesses) != 2 || !strings.Contains(strings.Join(s.Harnesses, ","), "codex") {
		t.Errorf("harnesses %v", s.Harnesses)
	}
	if artifacts := os.Getenv("FABRIC_TEST_ARTIFACTS"); artifacts != "" {
		b, _ := os.ReadFile(filepath.Join(dir, "run", "report", "index.html"))
		_ = os.WriteFile(filepath.Join(artifacts, "batch-real-harnesses.html"), b, 0o644)
	}
	noOrphans(t, dir)
}
