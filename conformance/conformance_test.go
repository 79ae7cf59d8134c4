package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/bundled"
)

// TestMain doubles as the adapter host of the bundled adapters: their
// runtimes re-execute the test binary.
func TestMain(m *testing.M) {
	if served, code := bundled.ServeHost(); served {
		os.Exit(code)
	}
	goleak.VerifyTestMain(m)
}

// withBundled are the options of every client of a run: the adapters
// under test are the bundled ones.
var withBundled = []fabric.Option{fabric.WithBundledAdapters(bundled.Adapters())}

func runSuite(t *testing.T, p Profile) Report {
	t.Helper()
	tmp := t.TempDir()
	// A race-enabled host sleeps 1s at exit unless told not to.
	env := append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	rep := Run(context.Background(), nil, p, Options{ClientOptions: withBundled, ItemTimeout: 30 * time.Second, TempDir: tmp, Env: env})
	var buf bytes.Buffer
	_ = rep.WriteText(&buf)
	t.Log("\n" + buf.String())
	if left := processesMentioning(tmp); len(left) > 0 {
		killPids(left)
		t.Errorf("processes %v outlived the suite", left)
	}
	return rep
}

// Every item applies to the scripted adapter, over both host protocols:
// none may fail and none may be skipped.
func TestBundledScriptedAdaptersPassEveryItem(t *testing.T) {
	for _, id := range []string{"fabric.scripted", "fabric.scripted.v1"} {
		t.Run(id, func(t *testing.T) {
			p, ok := BundledProfile(id)
			if !ok {
				t.Fatalf("no built-in profile for %s", id)
			}
			rep := runSuite(t, p)
			if len(rep.Items) != len(matrix()) {
				t.Fatalf("%d items, want %d", len(rep.Items), len(matrix()))
			}
			for _, it := range rep.Items {
				if it.Verdict != Pass {
					t.Errorf("%s", it)
				}
				if !Observable(it.ID) {
					continue
				}
				// Each observable item keeps the host's claim and the
				// suite's own observation apart, each naming its producer.
				switch {
				case it.Claim == nil || !strings.HasPrefix(it.Claim.By, "executor:fabric-host@sha256:"):
					t.Errorf("item %s claim = %+v, want one by the host's binary digest", it.ID, it.Claim)
				case it.Observation == nil || !it.Observation.Agrees || !strings.HasPrefix(it.Observation.By, "observer:fabric.conformance/"):
					t.Errorf("item %s observation = %+v, want an agreeing one by the suite", it.ID, it.Observation)
				}
			}
			if !rep.Passed {
				t.Error("report not passed")
			}
		})
	}
}

// A host that answers invoke with the wrong operation must fail the
// invoke item: the suite can fail.
func TestWrongOperationHostFailsInvoke(t *testing.T) {
	p, err := LoadProfile(filepath.Join("testdata", "wrongop", "profile.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rep := runSuite(t, p)
	if rep.Passed {
		t.Fatal("the report passed")
	}
	it, _ := rep.Item("7")
	if it.Verdict != Fail || !strings.Contains(it.Detail, "protocol_error") {
		t.Errorf("invoke item = %s, want a fail naming protocol_error", it)
	}
	// Items without the overlays they need are skipped, not passed.
	for _, id := range []string{"8", "9", "10", "11"} {
		if it, _ := rep.Item(id); it.Verdict != Skip {
			t.Errorf("item %s = %s, want skip", id, it)
		}
	}
}

// A host that leaves a child outside its process group must fail the
// cleanup item, and the suite must still leave nothing running.
func TestEscapingChildFailsCleanup(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		livetest.Missing(t, "setsid", "Debian package util-linux", err)
	}
	desc, err := filepath.Abs(filepath.Join("testdata", "escaper", "escaper.fabric-adapter.json"))
	if err != nil {
		t.Fatal(err)
	}
	p := Profile{AdapterID: "test.conformance.escaper", Descriptor: desc, ExpectOutput: "ok"}
	rep := runSuite(t, p)
	it, _ := rep.Item("12")
	if it.Verdict != Fail || !strings.Contains(it.Detail, "still running") {
		t.Errorf("cleanup item = %s, want a fail naming the leaked process", it)
	}
	// The host claimed a clean stop; the suite's own /proc scan saw the
	// child: the two are recorded apart and the observation decides.
	if it.Claim == nil || it.Claim.Statement != "stopped" || !strings.HasPrefix(it.Claim.By, "executor:fabric-host@sha256:") {
		t.Errorf("cleanup claim = %+v, want the host's stopped", it.Claim)
	}
	if o := it.Observation; o == nil || o.Agrees || o.By != ObserverProcScan || o.Method != MethodProcAndFS || !strings.Contains(o.Result, "still running") {
		t.Errorf("cleanup observation = %+v, want a procscan that disagrees", o)
	}
}

// A host whose escaped child keeps the runtime's FABRIC_HOME entry leaks
// nothing: stop finds the child by that entry and kills it, so the cleanup
// item passes.
func TestMarkedEscapeeIsCleanedUp(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		livetest.Missing(t, "setsid", "Debian package util-linux", err)
	}
	desc, err := filepath.Abs(filepath.Join("testdata", "escaper-marked", "escaper-marked.fabric-adapter.json"))
	if err != nil {
		t.Fatal(err)
	}
	p := Profile{AdapterID: "test.conformance.escaper-marked", Descriptor: desc, ExpectOutput: "ok"}
	rep := runSuite(t, p)
	if it, _ := rep.Item("12"); it.Verdict != Pass {
		t.Errorf("cleanup item = %s, want pass", it)
	}
}

// The cleanup item fails a host that had to be killed, and only that: a
// host whose stop is slower than its exit grace but which then exits by
// itself passes (a slow stop under load is not a leak).
func TestCleanupJudgesKillNotDuration(t *testing.T) {
	for _, tc := range []struct {
		name string
		want Verdict
		in   string
	}{
		{"slowstop", Pass, "stop took"},
		{"deaf", Fail, "killed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			desc, err := filepath.Abs(filepath.Join("testdata", tc.name, tc.name+".fabric-adapter.json"))
			if err != nil {
				t.Fatal(err)
			}
			p := Profile{AdapterID: "test.conformance." + tc.name, Descriptor: desc, ExpectOutput: "ok"}
			rep := runSuite(t, p)
			it, _ := rep.Item("12")
			if it.Verdict != tc.want || !strings.Contains(it.Detail, tc.in) {
				t.Errorf("cleanup item = %s, want %s naming %q", it, tc.want, tc.in)
			}
		})
	}
}

func TestGenericProfileSkipsInvocations(t *testing.T) {
	p := GenericProfile("fabric.scripted", "")
	rep := runSuite(t, p)
	if !rep.Passed {
		t.Fatal("the generic profile failed the scripted adapter")
	}
	for _, id := range []string{"7", "8", "10", "11"} {
		if it, _ := rep.Item(id); it.Verdict != Skip {
			t.Errorf("item %s = %s, want skip", id, it)
		}
	}
	for _, id := range []string{"1", "2", "3", "4", "6", "12", "13"} {
		if it, _ := rep.Item(id); it.Verdict != Pass {
			t.Errorf("item %s = %s, want pass", id, it)
		}
	}
}

func TestUnknownAdapterFailsDiscoveryOnly(t *testing.T) {
	rep := Run(context.Background(), nil, Profile{AdapterID: "no.such.adapter"}, Options{TempDir: t.TempDir()})
	if rep.Passed || rep.Items[0].Verdict != Fail {
		t.Fatalf("report = %+v", rep)
	}
	for _, it := range rep.Items[1:] {
		if it.Verdict != Skip {
			t.Errorf("%s, want skip", it)
		}
	}
}

func TestLoadProfile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p, err := LoadProfile(write("ok.yaml", `
adapter_id: my.adapter
descriptor: adapters/my.fabric-adapter.json
base:
  models: {default: {provider: openai, model: m}}
failed_invoke: {settings: {mode: invoke_failure}}
secret_env: MY_KEY
start_stop_only: true
`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Descriptor != filepath.Join(dir, "adapters", "my.fabric-adapter.json") || p.FailedInvoke.Settings["mode"] != "invoke_failure" || !p.StartStopOnly {
		t.Errorf("profile = %+v", p)
	}
	example, err := LoadProfile(filepath.Join("testdata", "profile.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if example.Hang.Input != "please hang" || example.UnsupportedField.Field != "runtime.max_turns" || example.Env["EXAMPLE_MODE"] != "conformance" {
		t.Errorf("example profile = %+v", example)
	}
	if _, err := LoadProfile(write("json.json", `{"adapter_id": "x", "input": {"task": 1}}`)); err != nil {
		t.Error(err)
	}
	for name, text := range map[string]string{
		"unknown.yaml": "adapter_id: x\nbogus: 1\n",
		"dup.yaml":     "adapter_id: x\nadapter_id: y\n",
		"noid.json":    `{"input": "x"}`,
		"both.yaml":    "adapter_id: x\ncapabilities_only: true\nstart_stop_only: true\n",
		"env.yaml":     "adapter_id: x\nsecret_env: 1BAD\n",
		"api.yaml":     "adapter_id: x\nmodelstub: s.yaml\nmodelstub_api: grpc\n",
		"noapi.yaml":   "adapter_id: x\nmodelstub_api: openai\n",
	} {
		if _, err := LoadProfile(write(name, text)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestGenerateInvalidSettings(t *testing.T) {
	tests := []struct {
		schema string
		key    string
		skip   bool
	}{
		{schema: "", key: invalidKey},
		{schema: `{"type":"object","additionalProperties":false}`, key: invalidKey},
		{schema: `{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"integer"}}}`, key: "a"},
		{schema: `{"type":"object","properties":{"m":{"enum":["x"]}}}`, key: "m"},
		{schema: `{"type":"object","properties":{"m":{}}}`, skip: true},
	}
	for _, tt := range tests {
		got, _, err := generateInvalidSettings(json.RawMessage(tt.schema))
		if tt.skip {
			if _, ok := err.(*errSkip); !ok {
				t.Errorf("%s: got %v, %v; want skip", tt.schema, got, err)
			}
			continue
		}
		if _, ok := got[tt.key]; err != nil || !ok {
			t.Errorf("%s: got %v, %v; want key %s", tt.schema, got, err, tt.key)
		}
	}
	if v, _ := wrongValue(doc{"type": []any{"integer", "string"}}); v != true {
		t.Errorf("wrong value for integer|string = %v", v)
	}
}

func TestReportJSONAndText(t *testing.T) {
	rep := Report{Adapter: "a", Passed: false, Items: []Item{
		{ID: "1", Name: "discovery", Verdict: Pass, Detail: "found", Elapsed: 1500 * time.Microsecond},
		{ID: "10", Name: "transport-failure", Verdict: Fail, Detail: "boom",
			Claim:       &Claim{By: "executor:fabric-host@sha256:ab", Statement: "stopped"},
			Observation: &Observation{By: ObserverProcScan, Method: MethodProcTable, Result: "pid 7 alive"}},
	}}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	items := back["items"].([]any)
	if items[0].(map[string]any)["elapsed_ms"] != 1.5 || back["counts"].(map[string]any)["fail"] != 1.0 {
		t.Errorf("json = %s", b)
	}
	if _, ok := items[0].(map[string]any)["claim"]; ok {
		t.Errorf("an item without a claim has one in JSON: %s", b)
	}
	obs, _ := items[1].(map[string]any)["observation"].(map[string]any)
	claim, _ := items[1].(map[string]any)["claim"].(map[string]any)
	if obs["agrees"] != false || obs["by"] != ObserverProcScan || claim["statement"] != "stopped" {
		t.Errorf("json = %s", b)
	}
	var buf bytes.Buffer
	if err := rep.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	if !strings.HasPrefix(lines[0], "PASS  1 discovery ") || !strings.HasPrefix(lines[1], "FAIL  10 transport-failure ") || !strings.Contains(lines[2], "FAILED") {
		t.Errorf("text =\n%s", buf.String())
	}
}

// A profile naming a modelstub script gets that endpoint served by the
// suite for the run: the scripted adapter in mode model reaches it with no
// endpoint started by hand.
func TestProfileModelStubIsServed(t *testing.T) {
	p, err := LoadProfile(filepath.Join("testdata", "modelstub", "profile.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(p.ModelStub) {
		t.Fatalf("modelstub %q not resolved against the profile", p.ModelStub)
	}
	tmp := t.TempDir()
	env := append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	rep := Run(context.Background(), nil, p, Options{ClientOptions: withBundled, ItemTimeout: 30 * time.Second, TempDir: tmp, Env: env, Only: []string{"7"}})
	if it, _ := rep.Item("7"); it.Verdict != Pass {
		t.Fatalf("invoke item = %s, want pass", it)
	}
	if rep.ModelEndpoint == nil || len(rep.ModelEndpoint.SHA256) != 64 || rep.ModelEndpoint.Requests == 0 {
		t.Errorf("model endpoint = %+v", rep.ModelEndpoint)
	}
	if _, ok := p.Base["models"].(map[string]any)["default"].(map[string]any)["base_url"]; ok {
		t.Error("Run changed the caller's profile")
	}
	p.ModelStub = filepath.Join(tmp, "missing.yaml")
	if rep := Run(context.Background(), nil, p, Options{ClientOptions: withBundled, TempDir: tmp}); rep.Passed || rep.Items[0].ID != "0" {
		t.Errorf("a missing modelstub script: %+v", rep)
	}
}
