package contract_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kaptinlin/jsonschema"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/contract/validate"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
)

// Upstream compatibility: our southbound documents must validate against the
// JSON Schemas shipped in the npm package nemo-fabric-adapter-contract, and
// upstream descriptors must survive our AdapterDescriptor type.
//
// Locating the npm packages:
//   - FABRIC_UPSTREAM_CONTRACT_DIR: the directory holding agent-config.schema.json etc.
//   - FABRIC_UPSTREAM_PI_DIR: the directory holding pi.fabric-adapter.json.
//   - otherwise node_modules/<package> under the repository root or under harnesses/.
//
// A missing package is a live part that is not there (livetest.Missing):
// the tests skip, unless FABRIC_REQUIRE_HARNESSES=1 (set in CI), where they
// fail.

func upstreamDir(t *testing.T, env, pkg, sub, marker string) string {
	t.Helper()
	if dir := os.Getenv(env); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, marker)); err != nil {
			t.Fatalf("%s=%s: %v", env, dir, err)
		}
		return dir
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	var tried []string
	for _, base := range []string{root, filepath.Join(root, "harnesses")} {
		dir := filepath.Join(base, "node_modules", pkg, sub)
		tried = append(tried, dir)
		if _, err := os.Stat(filepath.Join(dir, marker)); err == nil {
			return dir
		}
	}
	livetest.Missing(t, "npm package "+pkg, "set "+env+" or run harnesses/install.sh", fmt.Errorf("tried %s", strings.Join(tried, ", ")))
	return ""
}

func upstreamContractDir(t *testing.T) string {
	return upstreamDir(t, "FABRIC_UPSTREAM_CONTRACT_DIR", "nemo-fabric-adapter-contract", "schemas", "agent-config.schema.json")
}

// upstreamSchema compiles one upstream schema the way the upstream
// TypeScript lifecycle host does (Ajv 2020 with its uint32, uint64 and
// double formats asserted).
func upstreamSchema(t *testing.T, dir, name string) *jsonschema.Schema {
	t.Helper()
	path := filepath.Join(dir, name+".schema.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.SetDefaultDialect(jsonschema.Draft202012)
	c.SetAssertFormat(true)
	c.RegisterFormat("uint32", uintFormat(math.MaxUint32), "number")
	c.RegisterFormat("uint64", uintFormat(1<<53-1), "number") // Number.isSafeInteger
	c.RegisterFormat("double", func(any) bool { return true }, "number")
	s, err := c.Compile(raw, "file://"+filepath.ToSlash(path))
	if err != nil {
		t.Fatalf("compile upstream %s: %v", name, err)
	}
	if refs := s.UnresolvedReferenceURIs(); len(refs) > 0 {
		t.Fatalf("upstream %s: unresolved $ref %v", name, refs)
	}
	return s
}

// uintFormat accepts integers in [0, max]; formats only constrain numbers.
func uintFormat(max float64) func(any) bool {
	return func(v any) bool {
		f, err := strconv.ParseFloat(fmt.Sprint(v), 64)
		if err != nil {
			if r, ok := v.(interface{ Float64() (float64, bool) }); ok {
				f, _ = r.Float64()
			} else {
				return true
			}
		}
		return f >= 0 && f <= max && f == math.Trunc(f)
	}
}

func validateUpstream(t *testing.T, s *jsonschema.Schema, v any) error {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if r := s.ValidateJSON(b); !r.IsValid() {
		return fmt.Errorf("%v\ndocument: %s", r.DetailedErrors(), b)
	}
	return nil
}

func TestUpstreamSouthboundDocuments(t *testing.T) {
	dir := upstreamContractDir(t)
	cases := map[string][]any{
		"agent-config": {
			sampleAgentConfig(),
			contract.AgentConfig{},
			contract.AgentConfig{Tools: &contract.AgentToolsConfig{Enabled: []string{}}},
		},
		"runtime-context": {
			sampleRuntimeContext(),
			contract.RuntimeContext{
				RuntimeID: "runtime-1", InvocationID: "invocation-1", RequestID: "request-1",
				Environment: contract.EnvironmentHandle{EnvironmentID: "environment-1", Provider: "local", ControlLocation: contract.ControlExternal, Ownership: contract.OwnershipCaller},
			},
		},
		"agent-run-request": {sampleAgentRunRequest(), contract.AgentRunRequest{Input: nil}},
		"agent-run-result": {
			sampleAgentRunResult(contract.StatusSucceeded),
			sampleAgentRunResult(contract.StatusFailed),
			sampleAgentRunResult(contract.StatusCancelled),
			contract.AgentRunResult{Status: contract.StatusSucceeded, Output: "ok"},
		},
		"adapter-descriptor": {sampleDescriptor()},
	}
	for name, docs := range cases {
		up := upstreamSchema(t, dir, name)
		for i, doc := range docs {
			if err := validateUpstream(t, up, doc); err != nil {
				t.Errorf("upstream %s rejects our sample %d: %v", name, i, err)
			}
			if err := validate.NewValidator().ValidateValue(name, doc); err != nil {
				t.Errorf("our %s rejects sample %d: %v", name, i, err)
			}
		}
	}
	// Negative controls: upstream validation is really applied.
	up := upstreamSchema(t, dir, "agent-run-result")
	if err := validateUpstream(t, up, contract.AgentRunResult{Status: contract.StatusFailed}); err == nil {
		t.Error("upstream agent-run-result accepted a failed result without error")
	}
	up = upstreamSchema(t, dir, "agent-run-request")
	if err := validateUpstream(t, up, contract.AgentRunRequest{Input: "x", RelaySessionRoot: ptr("root")}); err == nil {
		t.Log("upstream agent-run-request now accepts relay_session_root; update the AgentRunRequest doc comment")
	}
}

// TestUpstreamFieldNames walks our generated southbound schemas alongside
// upstream's and compares the property names of every object, so a renamed,
// missing or extra field is reported by its path.
func TestUpstreamFieldNames(t *testing.T) {
	dir := upstreamContractDir(t)
	// Keys we declare that upstream 0.3.0 does not, by path.
	extra := map[string]bool{
		"agent-run-request.relay_session_root": true, // see AgentRunRequest.RelaySessionRoot
	}
	total := 0
	for _, name := range []string{"agent-config", "runtime-context", "agent-run-request", "agent-run-result", "adapter-descriptor"} {
		var up map[string]any
		b, err := os.ReadFile(filepath.Join(dir, name+".schema.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &up); err != nil {
			t.Fatal(err)
		}
		ours := schemaMap(t, name)
		w := &schemaWalker{t: t, ours: ours, up: up, extra: extra, open: name == "adapter-descriptor", seen: map[string]bool{}}
		w.compare(name, ours, up)
		t.Logf("%s: compared %d objects", name, w.compared)
		total += w.compared
	}
	if total < 25 {
		t.Errorf("compared only %d objects; the schema walker is broken", total)
	}
}

type schemaWalker struct {
	t        *testing.T
	ours, up map[string]any // roots, for $ref resolution
	extra    map[string]bool
	open     bool // upstream is open: we may declare more keys
	seen     map[string]bool
	compared int
}

func resolve(root, s map[string]any) map[string]any {
	for s != nil {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		def := strings.TrimPrefix(ref, "#/$defs/")
		s, _ = root["$defs"].(map[string]any)[def].(map[string]any)
	}
	return s
}

// nonNull returns the schema without its null alternative.
func nonNull(root, s map[string]any) map[string]any {
	s = resolve(root, s)
	if s == nil {
		return nil
	}
	if alts, ok := s["anyOf"].([]any); ok {
		for _, a := range alts {
			am := a.(map[string]any)
			if am["type"] != "null" {
				return resolve(root, am)
			}
		}
	}
	return s
}

func propNames(s map[string]any) []string {
	props, _ := s["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func (w *schemaWalker) compare(path string, ours, up map[string]any) {
	ours, up = nonNull(w.ours, ours), nonNull(w.up, up)
	if ours == nil || up == nil {
		return
	}
	if w.seen[path] {
		return
	}
	w.seen[path] = true

	// Tagged unions: compare alternatives pairwise.
	if upAlts, ok := up["oneOf"].([]any); ok && up["properties"] == nil {
		ourAlts, _ := ours["oneOf"].([]any)
		if _, isObj := upAlts[0].(map[string]any)["properties"]; !isObj {
			return // an enum written as oneOf of consts
		}
		if len(ourAlts) != len(upAlts) {
			w.t.Errorf("%s: %d alternatives, upstream has %d", path, len(ourAlts), len(upAlts))
			return
		}
		for i := range upAlts {
			w.compare(fmt.Sprintf("%s[%d]", path, i), ourAlts[i].(map[string]any), upAlts[i].(map[string]any))
		}
		return
	}
	switch {
	case up["items"] != nil:
		oi, _ := ours["items"].(map[string]any)
		w.compare(path+"[]", oi, up["items"].(map[string]any))
		return
	case up["properties"] == nil:
		if ua, ok := up["additionalProperties"].(map[string]any); ok {
			oa, _ := ours["additionalProperties"].(map[string]any)
			w.compare(path+"{}", oa, ua)
		}
		return
	}

	w.compared++
	ourNames, upNames := propNames(ours), propNames(up)
	for _, n := range upNames {
		if !slices.Contains(ourNames, n) {
			w.t.Errorf("%s.%s: upstream field missing from our type", path, n)
		}
	}
	for _, n := range ourNames {
		if !slices.Contains(upNames, n) && !w.open && !w.extra[path+"."+n] {
			w.t.Errorf("%s.%s: our field is not in upstream's closed schema", path, n)
		}
	}
	if !w.open {
		if got, want := ours["additionalProperties"], up["additionalProperties"]; got != want && want == false {
			w.t.Errorf("%s: additionalProperties = %v, upstream %v", path, got, want)
		}
	}
	if diff := cmp.Diff(sortedAny(up["required"]), sortedAny(ours["required"])); diff != "" {
		w.t.Errorf("%s: required differs (-upstream +ours):\n%s", path, diff)
	}
	ourProps, _ := ours["properties"].(map[string]any)
	upProps := up["properties"].(map[string]any)
	for _, n := range upNames {
		op, _ := ourProps[n].(map[string]any)
		w.compare(path+"."+n, op, upProps[n].(map[string]any))
	}
}

func sortedAny(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		out = append(out, x.(string))
	}
	sort.Strings(out)
	return out
}

func TestUpstreamPiDescriptorRoundTrip(t *testing.T) {
	contractDir := upstreamContractDir(t)
	piDir := upstreamDir(t, "FABRIC_UPSTREAM_PI_DIR", "nemo-fabric-adapters-pi", "", "pi.fabric-adapter.json")
	orig, err := os.ReadFile(filepath.Join(piDir, "pi.fabric-adapter.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d contract.AdapterDescriptor
	if err := json.Unmarshal(orig, &d); err != nil {
		t.Fatal(err)
	}
	again, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	up := upstreamSchema(t, contractDir, "adapter-descriptor")
	if err := validateUpstream(t, up, json.RawMessage(again)); err != nil {
		t.Errorf("upstream adapter-descriptor rejects the re-marshalled pi descriptor: %v", err)
	}
	if err := validate.Validate("adapter-descriptor", orig); err != nil {
		t.Errorf("our adapter-descriptor rejects the upstream pi descriptor: %v", err)
	}
	if err := validate.Validate("adapter-descriptor", again); err != nil {
		t.Errorf("our adapter-descriptor rejects the re-marshalled pi descriptor: %v", err)
	}
	// Semantic comparison: identical once upstream's documented defaults
	// (capabilities all false, empty requirements/config/telemetry) are
	// applied to both sides.
	var want, got map[string]any
	if err := json.Unmarshal(orig, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(again, &got); err != nil {
		t.Fatal(err)
	}
	withDefaults := func(m map[string]any) map[string]any {
		caps, _ := m["capabilities"].(map[string]any)
		if caps == nil {
			caps = map[string]any{}
		}
		for _, k := range []string{"service", "streaming", "updates", "cancellation"} {
			if _, ok := caps[k]; !ok {
				caps[k] = false
			}
		}
		m["capabilities"] = caps
		for _, k := range []string{"requirements", "config", "telemetry"} {
			if _, ok := m[k]; !ok {
				m[k] = map[string]any{}
			}
		}
		return m
	}
	if diff := cmp.Diff(withDefaults(want), withDefaults(got)); diff != "" {
		t.Errorf("pi descriptor changed in a round trip through AdapterDescriptor (-upstream +ours):\n%s", diff)
	}
	if d.AdapterID != "nvidia.fabric.pi" || d.AdapterKind != contract.AdapterKindProcess || len(d.SettingsSchema) == 0 || len(d.ModelSchema) == 0 || len(d.ToolDefinitionSchema) == 0 {
		t.Errorf("typed fields not populated: %+v", d)
	}
	if r, err := d.RunnerSpec(); err != nil || r.Command != "node" || r.Script != "dist/cli.js" {
		t.Errorf("RunnerSpec = %+v, %v", r, err)
	}
}
