//go:build linux

package deploy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
)

// bins holds the binaries TestMain built: the end-to-end tests drive them
// as a user would, each command its own process.
var bins string

func TestMain(m *testing.M) {
	testproc.MainWithBinaries(m, &bins, "./cmd/fabric", "./cmd/fabric-core", "./cmd/fabric-serve", "./cmd/fabric-host", "./cmd/fabric-agent-ctl", "./cmd/fabric-agent-ctl-serve")
}

// codexConfig is the Codex agent the live tests deploy: read-only, no
// approvals, no model retries (a retry would be a second model turn); its
// model route comes from the deployment's inference attachment.
const codexConfig = `schema_version: fabric.agent/v1alpha1
metadata: {name: codex}
runtime: {timeout_seconds: 180}
harness:
  adapter_id: nvidia.fabric.codex
  settings:
    sandbox: read-only
    approval_mode: deny_all
    config_overrides:
      model_providers.fabric.request_max_retries: 0
      model_providers.fabric.stream_max_retries: 0
models:
  default: {provider: openai, model: gpt-5.1-codex}
`

// liveIntegrations are the integrations of the live deployments: the MCP
// reference server from npm on port (HTTP) as tools, and a brokered model
// route to the scripted endpoint at baseURL as model.
func liveIntegrations(port int, baseURL string) string {
	return fmt.Sprintf(`    tools:
      kind: mcpServer
      transport: http
      run: {command: [mcp-server-everything, streamableHttp], port: %d, env: {PORT: "%d"}}
    model: {kind: inference, api: openai-responses, base_url: %q, credential: {env: %s}, brokered: true}
`, port, port, baseURL, upstreamKeyEnv)
}

// scriptedWriter is the scripted agent the live deployments run beside
// Codex, with the integration references refs.
func scriptedWriter(refs string) string {
	return `        - name: writer
          integrationRefs: [` + refs + `]
          fabric:
            schema_version: fabric.agent/v1alpha1
            metadata: {name: writer}
            runtime: {}
            harness: {adapter_id: fabric.scripted, settings: {response: "turn {turn}: {input}"}}
`
}

// world is one test's deployment: a directory with the document, the
// environment every command runs with, and helpers to run the verbs.
type world struct {
	t   testing.TB
	dir string
	env []string
}

func newWorld(t testing.TB, extraEnv ...string) *world {
	t.Helper()
	w := &world{t: t, dir: t.TempDir()}
	path := bins + string(os.PathListSeparator) + os.Getenv("PATH")
	if hp := os.Getenv("FABRIC_HARNESS_PATH"); hp != "" {
		path = hp + string(os.PathListSeparator) + path
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") {
			w.env = append(w.env, kv)
		}
	}
	w.env = append(w.env, "PATH="+path)
	w.env = append(w.env, extraEnv...)
	t.Cleanup(func() { w.cleanup() })
	return w
}

// write puts a file into the world's directory.
func (w *world) write(name, content string) string {
	w.t.Helper()
	p := filepath.Join(w.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
	return p
}

// run runs a binary and returns stdout, stderr and the exit code.
func (w *world) run(timeout time.Duration, name string, args ...string) (stdout, stderr []byte, code int) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bins, name), args...)
	cmd.Dir, cmd.Env = w.dir, w.env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code = cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		w.t.Fatalf("%s %v: %v\n%s", name, args, err, e.Bytes())
	}
	return o.Bytes(), e.Bytes(), code
}

// deploy runs `fabric deploy VERB FILE ARGS...` and decodes its JSON into
// out (when not nil); it fails the test on an exit code other than want.
func (w *world) deploy(want int, out any, verb, file string, args ...string) []byte {
	w.t.Helper()
	o, e, code := w.run(5*time.Minute, "fabric", append([]string{"deploy", verb, file}, args...)...)
	if code != want {
		w.t.Fatalf("fabric deploy %s exited %d, want %d\nstdout: %s\nstderr: %s", verb, code, want, o, e)
	}
	if out != nil {
		// Decode into a zero value: fields the output omits must not keep
		// what an earlier call left in a reused variable.
		reflect.ValueOf(out).Elem().SetZero()
		if err := json.Unmarshal(o, out); err != nil {
			w.t.Fatalf("fabric deploy %s: %v\n%s", verb, err, o)
		}
	}
	return o
}

// ctl runs fabric-agent-ctl against socket and decodes its JSON.
func (w *world) ctl(socket string, out any, args ...string) int {
	w.t.Helper()
	o, e, code := w.run(3*time.Minute, "fabric-agent-ctl", append([]string{"--socket", socket}, args...)...)
	if out != nil {
		reflect.ValueOf(out).Elem().SetZero()
		if err := json.Unmarshal(o, out); err != nil {
			w.t.Fatalf("fabric-agent-ctl %v: %v\nstdout: %s\nstderr: %s", args, err, o, e)
		}
	}
	return code
}

// cleanup destroys whatever a failed test left running: every supervisor
// started from this world's directory.
func (w *world) cleanup() {
	for _, pid := range testproc.Mentioning(w.dir) {
		_, _, comm, ok := testproc.Stat(pid)
		if ok && strings.HasPrefix(comm, "fabric") {
			_ = syscallKill(pid)
		}
	}
}

// status is the subset of `fabric deploy status` the tests read.
type status struct {
	Supervisor struct {
		State  string `json:"state"`
		Record *struct {
			Pid int `json:"pid"`
		} `json:"record"`
	} `json:"supervisor"`
	Drift []struct {
		Resource, Action string
	} `json:"drift"`
	Status *struct {
		Supervisor struct {
			Pid        int    `json:"pid"`
			ModelProxy string `json:"model_proxy"`
		} `json:"supervisor"`
		Agents []struct {
			Name      string `json:"name"`
			State     string `json:"state"`
			Reason    string `json:"reason"`
			Action    string `json:"action"`
			RuntimeID string `json:"runtime_id"`
			HostPid   int    `json:"host_pid"`
			Restarts  int    `json:"restarts"`
			Usage     map[string]struct {
				Requests     int64 `json:"requests"`
				InputTokens  int64 `json:"input_tokens"`
				OutputTokens int64 `json:"output_tokens"`
			} `json:"usage"`
		} `json:"agents"`
		Services []struct {
			ID    string `json:"id"`
			State string `json:"state"`
			Pid   int    `json:"pid"`
			URL   string `json:"url"`
		} `json:"services"`
		Lost []string `json:"lost"`
	} `json:"status"`
}

func (s *status) agent(name string) (state, runtimeID string, hostPid, restarts int) {
	if s.Status == nil {
		return "", "", 0, 0
	}
	for _, a := range s.Status.Agents {
		if a.Name == name {
			return a.State, a.RuntimeID, a.HostPid, a.Restarts
		}
	}
	return "", "", 0, 0
}

// applyResult is the subset of apply's output the tests read.
type applyResult struct {
	Outcome string `json:"outcome"`
	Changes []struct {
		Resource, Action, Reason string
	} `json:"changes"`
	Recovery   []string `json:"recovery"`
	Connection struct {
		Socket    string            `json:"socket"`
		Endpoints map[string]string `json:"endpoints"`
	} `json:"connection"`
	Supervisor struct {
		Pid               int  `json:"pid"`
		RestartedOnReboot bool `json:"restarted_on_reboot"`
	} `json:"supervisor"`
}

func (r *applyResult) action(resource string) string {
	for _, c := range r.Changes {
		if c.Resource == resource {
			return c.Action
		}
	}
	return ""
}
