package adaptertest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
	"github.com/fabric-runtime/fabric/internal/testsupport/testaudit"
	"github.com/fabric-runtime/fabric/modelstub"
)

// Options configure a Rig. The zero value is a rig with an empty script,
// no descriptor and nothing added to PATH.
type Options struct {
	// Script is what the model endpoint answers.
	Script *modelstub.Script
	// StubOptions are more options of the endpoint; the rig adds
	// modelstub.WithExpectKey(Key).
	StubOptions []modelstub.Option
	// KeyEnv names the variable that carries the model key to the hosts
	// (default FABRIC_TEST_MODEL_KEY); Key is the key (default: a fresh
	// one).
	KeyEnv, Key string
	// Descriptors are written into the descriptor directory, by file name.
	Descriptors map[string][]byte
	// Path goes first on the hosts' PATH: where the harness is.
	Path []string
	// Env is added last to the hosts' environment (this process's, the
	// proxy variables and KeyEnv), so it wins over them.
	Env []string
	// ClientOptions are more options of the client, after the rig's.
	ClientOptions []fabric.Option
	// Deadline bounds each Start and Invoke (default 90 s).
	Deadline time.Duration
	// Audit writes the plan and handle of every runtime started and the
	// result of every turn into the test's output as JSON, so that a scan
	// of the verbose run for secrets covers them.
	Audit bool
}

// Rig is one live test's world. Its directories are the test's own and
// removed when it ends; so are the endpoint, the proxy and every runtime
// Start started.
type Rig struct {
	// Stub is the scripted model endpoint; it refuses any key but Key.
	Stub *modelstub.Server
	// Proxy is the sentinel proxy every host's HTTP(S) proxy variables
	// name.
	Proxy *Proxy
	// Client starts runtimes whose Go adapters this test binary hosts
	// (see Main), with Env and the state in StateDir.
	Client *fabric.Client
	// KeyEnv is the variable that carries Key in Env.
	KeyEnv, Key string
	// Env is the hosts' environment; the client also reads api_key_env
	// from it.
	Env []string
	// StateDir is the client's state; Workspace and Artifacts are for
	// the runtime's environment; DescDir holds Options.Descriptors.
	StateDir, Workspace, Artifacts, DescDir string

	t        testing.TB
	deadline time.Duration
	audit    bool
}

// New builds the rig of test t.
func New(t testing.TB, o Options) *Rig {
	t.Helper()
	r := &Rig{t: t, KeyEnv: o.KeyEnv, Key: o.Key, deadline: o.Deadline, audit: o.Audit,
		StateDir: t.TempDir(), Workspace: t.TempDir(), Artifacts: t.TempDir(), DescDir: t.TempDir()}
	if r.KeyEnv == "" {
		r.KeyEnv = "FABRIC_TEST_MODEL_KEY"
	}
	r.Key = auditedKey(r.Key)
	if r.deadline == 0 {
		r.deadline = 90 * time.Second
	}
	for name, data := range o.Descriptors {
		if err := os.WriteFile(filepath.Join(r.DescDir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := o.Script
	if script == nil {
		script = &modelstub.Script{}
	}
	r.Stub = modelstub.New(script, append([]modelstub.Option{modelstub.WithExpectKey(r.Key)}, o.StubOptions...)...)
	t.Cleanup(r.Stub.Close)
	r.Proxy = NewProxy(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r.Env = append(os.Environ(), r.Proxy.Env()...)
	r.Env = append(r.Env, r.KeyEnv+"="+r.Key)
	r.Env = append(r.Env, o.Env...)
	opts := []fabric.Option{fabric.WithHostBinary(exe), fabric.WithStateDir(r.StateDir),
		fabric.WithHostEnv(r.Env), fabric.WithEnv(livetest.Lookup(r.Env)), fabric.WithExtraPath(o.Path...)}
	r.Client = fabric.New(append(opts, o.ClientOptions...)...)
	return r
}

// Doc is the part of a live runtime's FabricConfig document that differs
// between tests; Config adds the rest.
type Doc struct {
	// Name is metadata.name (default "live").
	Name      string
	AdapterID string
	Settings  map[string]any
	// Provider (default "fabric-stub"), Model and BaseURL are the
	// default model's; BaseURL defaults to the endpoint's OpenAI URL.
	Provider, Model, BaseURL string
	// Artifacts sets environment.artifacts to the rig's Artifacts.
	Artifacts bool
	// Extra are top-level keys, set last.
	Extra map[string]any
}

// Config is the FabricConfig document of d: its adapter with settings,
// one default model on the endpoint with the key from KeyEnv, descriptor
// discovery in DescDir and a local environment in Workspace.
func (r *Rig) Config(d Doc) map[string]any {
	name, provider, baseURL, settings := d.Name, d.Provider, d.BaseURL, d.Settings
	if name == "" {
		name = "live"
	}
	if provider == "" {
		provider = "fabric-stub"
	}
	if baseURL == "" {
		baseURL, _ = r.Stub.BaseURLFor("") // the default API family
	}
	if settings == nil {
		settings = map[string]any{}
	}
	env := map[string]any{"provider": "local", "workspace": r.Workspace}
	if d.Artifacts {
		env["artifacts"] = r.Artifacts
	}
	cfg := map[string]any{
		"schema_version": "fabric.agent/v1alpha1",
		"metadata":       map[string]any{"name": name},
		"runtime":        map[string]any{},
		"harness":        map[string]any{"adapter_id": d.AdapterID, "settings": settings},
		"models": map[string]any{"default": map[string]any{
			"provider": provider, "model": d.Model, "api_key_env": r.KeyEnv, "base_url": baseURL,
		}},
		"discovery":   map[string]any{"local_paths": []any{r.DescDir}},
		"environment": env,
	}
	for k, v := range d.Extra {
		cfg[k] = v
	}
	return cfg
}

// TryStart starts a runtime of cfg, a FabricConfig document, within the
// deadline; the runtime is stopped when the test ends.
func (r *Rig) TryStart(cfg map[string]any) (*fabric.Runtime, error) {
	r.t.Helper()
	data, err := json.Marshal(cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	loaded, err := r.Client.ParseConfig(data, "agent.yaml", fabric.LoadOptions{})
	if err != nil {
		r.t.Fatalf("config: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.deadline)
	defer cancel()
	if r.audit {
		if p, err := r.Client.Plan(ctx, loaded); err == nil {
			testaudit.Log(r.t, "plan", p)
		}
	}
	rt, err := r.Client.StartRuntime(ctx, loaded)
	if err != nil {
		return nil, err
	}
	if r.audit {
		testaudit.Log(r.t, "handle", rt.Handle())
	}
	r.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), r.deadline)
		defer cancel()
		rt.Stop(ctx)
	})
	return rt, nil
}

// Start is TryStart that fails the test on an error.
func (r *Rig) Start(cfg map[string]any) *fabric.Runtime {
	r.t.Helper()
	rt, err := r.TryStart(cfg)
	if err != nil {
		r.t.Fatalf("start: %v", err)
	}
	return rt
}

// Invoke runs one turn of rt within the deadline; an error fails t (the
// rig's test or one of its subtests).
func (r *Rig) Invoke(t testing.TB, rt *fabric.Runtime, input string, opts ...fabric.InvokeOption) *contract.RunResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), r.deadline)
	defer cancel()
	res, err := rt.Invoke(ctx, input, opts...)
	if err != nil {
		t.Fatalf("invoke %q: %v", input, err)
	}
	if r.audit {
		testaudit.Log(t, "result", res)
	}
	return res
}

// CheckOffline fails the rig's test (it may be called from a subtest)
// when anything reached the sentinel proxy:
// the harness tried to reach a host other than the model endpoint.
func (r *Rig) CheckOffline() {
	r.t.Helper()
	if n := r.Proxy.Hits(); n > 0 {
		r.t.Errorf("%d connections to the sentinel proxy: the harness tried to reach a host other than the model endpoint (%q)", n, r.Proxy.Requests())
	}
}
