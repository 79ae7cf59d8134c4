package hostproto

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabric-runtime/fabric/contract"
)

// The start payload's fast decoder against encoding/json.

var startCorpus = []struct {
	doc  string
	fast bool // the fast path takes it
}{
	{`{"agent_name":"idle","base_dir":"/tmp/x","config":{"harness":{"settings":{"response":"ok"}}},"runtime_context":{"runtime_id":"runtime-6f","invocation_id":"invocation-start-98","request_id":"request-start-7f","environment":{"environment_id":"environment-8c","provider":"local","control_location":"in_env_control","ownership":"caller_owned"},"artifacts":{"artifacts":[]},"telemetry":{"relay_enabled":false}},"capability_plan":{"routes":[],"native":{"mcp_servers":{},"skill_paths":[],"tools_configured":false},"managed":{"mcp_servers":{},"skill_paths":[],"tools_configured":false},"unsupported":{"mcp_servers":{},"skill_paths":[],"tools_configured":false},"mcp_servers":{},"skill_paths":[],"tools":{"enabled":null,"blocked":[]},"tools_configured":false},"telemetry_plan":{"providers":[],"relay_enabled":false,"adapter_outputs":[]}}`, true},
	{`{"agent_name":"a","base_dir":"/b","config":{"harness":{"settings":{"mode":"model","n":1.5},"extensions":{}},"models":{"default":{"provider":"openai","model":"gpt","api_key_env":"K","base_url":"http://127.0.0.1:1/v1","temperature":0.2,"settings":{"x":[1]},"extensions":null},"other":null},"instructions":{"system":{"content":"be brief","mode":"append"}},"runtime":{"max_turns":4294967295},"tools":{"enabled":["shell"],"blocked":null,"definitions":{"t":{"kind":"k","ref":"r","settings":{}}}},"skills":{"paths":["/s",null]},"workflow":{"entrypoint":{"kind":"k","ref":"r"},"settings":{"a":"b"}},"extensions":{"e":true}},"runtime_context":{"runtime_id":"r","telemetry":null},"capability_plan":{"routes":[{"kind":"tools","name":"shell","target":"harness_native","reason":"x"},null],"native":null,"mcp_servers":{"s":{}},"tools":{"enabled":["a"],"blocked":["b"]},"tools_configured":true},"telemetry_plan":{"providers":["relay"],"relay_enabled":true,"relay_config":{"k":1},"relay_output_dir":"/o","relay_project":null,"native_config":{},"adapter_outputs":["x"]},"service":{"service_id":"s","adapter_id":"a","service_type":"t","ownership":"o","connection":{"url":"u"},"metadata":{}}}`, true},
	{`{"config":null,"runtime_context":null,"capability_plan":null,"telemetry_plan":null,"service":null}`, true},
	{`{}`, true},
	{`{"config":{"models":{"m":{"provider":"p"},"m":{"model":"q"}}}}`, true},
	{`{"config":{"tools":{"enabled":[]}}}`, true},
	// Left to encoding/json.
	{`{"config":{"mcp":{"servers":{"s":{"transport":"stdio","url":"x"}}}}}`, false},
	{`{"capability_plan":{"mcp_servers":{"s":{"transport":"stdio"}}}}`, false},
	{`{"config":{"runtime":{"max_turns":4294967296}}}`, false},
	{`{"config":{"runtime":{"max_turns":-1}}}`, false},
	{`{"config":{"tools":{"enabled":[1]}}}`, false},
	{`{"config":{"models":{"\u00e9":{}}}}`, false},
	{"{\"config\":{\"models\":{\"\xff\":{}}}}", false},
	{`{"config":{"models":[]}}`, false},
	{`{"Agent_Name":"a"}`, false},
	{`{"agent_name":"a","agent_name":"b"}`, false},
	{`{"unknown":1}`, false},
	{`{"agent_name":1}`, false},
	{`[]`, false},
}

func TestFastStartPayloadMatchesJSON(t *testing.T) {
	for _, c := range startCorpus {
		var fast StartParts
		got := DecodeStartPayload([]byte(c.doc), &fast)
		if got != c.fast {
			t.Errorf("fast path took %s: %v, want %v", c.doc, got, c.fast)
		}
		checkStartPayload(t, []byte(c.doc))
	}
}

func FuzzFastStartPayload(f *testing.F) {
	for _, c := range startCorpus {
		f.Add([]byte(c.doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if !json.Valid(doc) {
			return
		}
		checkStartPayload(t, doc)
	})
}

// checkStartPayload: what the fast path takes, it decodes as encoding/json
// does, which then takes it without an error.
func checkStartPayload(t *testing.T, doc []byte) {
	t.Helper()
	var fast, slow StartParts
	if !DecodeStartPayload(doc, &fast) {
		return
	}
	if err := json.Unmarshal(doc, &slow); err != nil {
		t.Fatalf("fast path took %s, encoding/json: %v", doc, err)
	}
	if diff := cmp.Diff(slow, fast); diff != "" {
		t.Errorf("%s (-json +fast):\n%s", doc, diff)
	}
}

// TestStartTablesKnowEveryField: each table of the start payload knows
// exactly its type's JSON fields, but for what it leaves to encoding/json
// on purpose. A field added to these types must be taught to the tables:
// until then every start that carries it decodes with reflection again.
func TestStartTablesKnowEveryField(t *testing.T) {
	for _, c := range []struct {
		typ  reflect.Type
		o    *object
		left []string // fields left to encoding/json; "*" for all
	}{
		{reflect.TypeFor[StartParts](), &startPartsObject, nil},
		{reflect.TypeFor[contract.AgentConfig](), &agentConfigObject, nil},
		{reflect.TypeFor[contract.AgentHarnessConfig](), &harnessObject, nil},
		{reflect.TypeFor[contract.AgentModel](), &modelObject, nil},
		{reflect.TypeFor[contract.AgentInstructionsConfig](), &instructionsObject, nil},
		{reflect.TypeFor[contract.AgentInstruction](), &instructionObject, nil},
		{reflect.TypeFor[contract.AgentRuntimeConfig](), &runtimeCfgObject, nil},
		{reflect.TypeFor[contract.AgentToolsConfig](), &toolsObject, nil},
		{reflect.TypeFor[contract.AgentToolDefinition](), &toolDefObject, nil},
		{reflect.TypeFor[contract.AgentMCPConfig](), &mcpObject, []string{"servers"}},
		{reflect.TypeFor[contract.AgentSkillConfig](), &skillsObject, nil},
		{reflect.TypeFor[contract.AgentWorkflowConfig](), &workflowObject, nil},
		{reflect.TypeFor[contract.AgentWorkflowEntrypoint](), &entrypointObject, nil},
		{reflect.TypeFor[contract.CapabilityPlan](), &capPlanObject, nil},
		{reflect.TypeFor[contract.CapabilityRoute](), &capRouteObject, nil},
		{reflect.TypeFor[contract.CapabilityTargetPlan](), &targetPlanObject, nil},
		{reflect.TypeFor[contract.MCPServerConfig](), &mcpServerObject, []string{"*"}},
		{reflect.TypeFor[contract.ToolsPlan](), &toolsPlanObject, nil},
		{reflect.TypeFor[contract.TelemetryPlan](), &telPlanObject, nil},
		{reflect.TypeFor[ServiceBinding](), &serviceObject, nil},
	} {
		var want []string
		for f := range c.typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || !f.IsExported() || slices.Contains(c.left, name) || slices.Contains(c.left, "*") {
				continue
			}
			if name == "" {
				name = f.Name
			}
			want = append(want, name)
		}
		var got []string
		for _, f := range c.o.fields {
			got = append(got, f.key)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%v: the table knows %v, the type's JSON fields are %v (left to encoding/json: %v)", c.typ, got, want, c.left)
		}
	}
}
