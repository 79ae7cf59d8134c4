package opencode

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
	"github.com/fabric-runtime/fabric/contract"
)

func ptr[T any](v T) *T { return &v }

func TestParseSettings(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings map[string]any
		check    func(Settings) bool
	}{
		{"defaults", nil, func(s Settings) bool {
			return s.Agent == DefaultAgent && !s.Snapshots && s.RequestTimeout == DefaultRequestTimeout && s.StartupTimeout == harnessui.DefaultStartupTimeout && s.Web == nil && s.Terminal == nil
		}},
		{"all", map[string]any{
			"agent": "plan", "request_timeout_seconds": 10.0, "snapshots": true, "startup_timeout_seconds": 75.0,
			"interfaces": map[string]any{"web": map[string]any{"port": 21000.0, "public_origins": []any{"https://x.example"}}, "terminal": map[string]any{}},
		}, func(s Settings) bool {
			return s.Agent == "plan" && s.Snapshots && s.RequestTimeout == 10*time.Second && s.StartupTimeout == 75*time.Second &&
				s.Web != nil && s.Web.Port == 21000 && len(s.Web.PublicOrigins) == 1 && s.Terminal != nil
		}},
		{"disabled", map[string]any{"interfaces": map[string]any{"web": map[string]any{"enabled": false}, "terminal": map[string]any{"enabled": false}}},
			func(s Settings) bool { return s.Web == nil && s.Terminal == nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parseSettings(&contract.AgentHarnessConfig{Settings: tc.settings})
			if err != nil || !tc.check(s) {
				t.Errorf("%+v %v", s, err)
			}
		})
	}
	for name, bad := range map[string]map[string]any{
		"agent":           {"agent": "general"},
		"timeout zero":    {"request_timeout_seconds": 0.0},
		"timeout frac":    {"request_timeout_seconds": 1.5},
		"snapshots type":  {"snapshots": "yes"},
		"unknown":         {"opencode_command": "x"},
		"startup too big": {"startup_timeout_seconds": 76.0},
		"unknown iface":   {"interfaces": map[string]any{"dashboard": map[string]any{}}},
		"web no port":     {"interfaces": map[string]any{"web": map[string]any{}}},
		"terminal port":   {"interfaces": map[string]any{"terminal": map[string]any{"port": 2000.0}}},
		"bad origin":      {"interfaces": map[string]any{"web": map[string]any{"port": 21000.0, "public_origins": []any{"https://x.example/p"}}}},
	} {
		if _, err := parseSettings(&contract.AgentHarnessConfig{Settings: bad}); err == nil {
			t.Errorf("%s: accepted %v", name, bad)
		}
	}
}

func TestSelectModel(t *testing.T) {
	for _, tc := range []struct {
		name   string
		models map[string]contract.AgentModel
		want   model
	}{
		{"base url", map[string]contract.AgentModel{"default": {Provider: "stub", Model: "m", APIKeyEnv: ptr("K"), BaseURL: ptr("http://127.0.0.1:9/v1")}},
			model{Role: "default", Provider: "stub", Name: "m", BaseURL: "http://127.0.0.1:9/v1", APIKeyEnv: "K", ContextWindow: 128000, MaxTokens: 8192}},
		{"openai default", map[string]contract.AgentModel{"only": {Provider: "openai", Model: "g", APIKeyEnv: ptr("K"), Settings: map[string]any{"context_window": 4096.0, "max_tokens": 100.0}}},
			model{Role: "only", Provider: "openai", Name: "g", BaseURL: openAIBaseURL, APIKeyEnv: "K", ContextWindow: 4096, MaxTokens: 100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := selectModel(tc.models)
			if err != nil || m != tc.want {
				t.Errorf("got %+v %v, want %+v", m, err, tc.want)
			}
		})
	}
	for name, bad := range map[string]map[string]contract.AgentModel{
		"no key":        {"default": {Provider: "openai", Model: "g"}},
		"no base_url":   {"default": {Provider: "local", Model: "g", APIKeyEnv: ptr("K")}},
		"bad url":       {"default": {Provider: "local", Model: "g", APIKeyEnv: ptr("K"), BaseURL: ptr("ftp://x")}},
		"two roles":     {"a": {Provider: "openai", Model: "g", APIKeyEnv: ptr("K")}, "b": {Provider: "openai", Model: "g", APIKeyEnv: ptr("K")}},
		"empty model":   {"default": {Provider: "openai", Model: " ", APIKeyEnv: ptr("K")}},
		"bad setting":   {"default": {Provider: "openai", Model: "g", APIKeyEnv: ptr("K"), Settings: map[string]any{"api": "x"}}},
		"bad max_token": {"default": {Provider: "openai", Model: "g", APIKeyEnv: ptr("K"), Settings: map[string]any{"max_tokens": 1.5}}},
	} {
		if m, err := selectModel(bad); err == nil {
			t.Errorf("%s: accepted %+v", name, m)
		}
	}
}

func TestBuildConfig(t *testing.T) {
	m1 := model{Role: "default", Name: "m1", BaseURL: "http://127.0.0.1:9/v1/", APIKeyEnv: "MY_KEY", ContextWindow: 1000, MaxTokens: 10}
	for _, tc := range []struct {
		name      string
		cfg       serverConfig
		wantInstr string
		check     map[string]any // path (dot-separated) -> JSON value
		absent    []string
	}{
		{"plain", serverConfig{Model: m1, Agent: "build"}, "", map[string]any{
			"model": "fabric/m1", "small_model": "fabric/m1", "autoupdate": false, "share": "disabled",
			"enabled_providers":                       []any{"fabric"},
			"provider.fabric.npm":                     "@ai-sdk/openai-compatible",
			"provider.fabric.options.baseURL":         "http://127.0.0.1:9/v1",
			"provider.fabric.options.apiKey":          "{env:FABRIC_OPENCODE_MODEL_KEY}",
			"provider.fabric.models.m1.limit.context": 1000.0,
			"provider.fabric.models.m1.limit.output":  10.0,
			"provider.fabric.models.m1.tool_call":     true,
			"agent.build.model":                       "fabric/m1",
			"permission.bash":                         "allow",
			"permission.webfetch":                     "deny",
		}, []string{"mcp", "instructions", "agent.build.prompt", "agent.build.temperature"}},
		{"replace", serverConfig{Model: model{Name: "m1", BaseURL: "http://x/v1", Temperature: ptr(0.2)}, Agent: "plan", Instructions: &contract.AgentInstruction{Content: "Be terse."}}, "",
			map[string]any{"agent.plan.prompt": "Be terse.", "agent.plan.temperature": 0.2, "provider.fabric.models.m1.temperature": true}, []string{"instructions"}},
		{"append", serverConfig{Model: m1, Agent: "build", Instructions: &contract.AgentInstruction{Content: "Also this.", Mode: contract.InstructionAppend}, InstructionsFile: "/r/instructions.md"}, "Also this.",
			map[string]any{"instructions": []any{"/r/instructions.md"}}, []string{"agent.build.prompt"}},
		{"mcp", serverConfig{Model: m1, Agent: "build", MCP: &contract.AgentMCPConfig{Servers: map[string]contract.AgentMCPServer{
			"local": {Transport: contract.MCPTransportStdio, URL: "/bin/srv", Args: []string{"-v"}, Env: map[string]string{"A": "1"}},
			"web":   {Transport: contract.MCPTransportStreamableHTTP, URL: "http://127.0.0.1:7/mcp", CustomHeaders: map[string]string{"X": "y"}},
		}}}, "", map[string]any{
			"mcp.local.type": "local", "mcp.local.command": []any{"/bin/srv", "-v"}, "mcp.local.environment.A": "1",
			"mcp.web.type": "remote", "mcp.web.url": "http://127.0.0.1:7/mcp", "mcp.web.headers.X": "y",
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, instr, err := tc.cfg.build()
			if err != nil {
				t.Fatal(err)
			}
			if instr != tc.wantInstr {
				t.Errorf("instructions %q, want %q", instr, tc.wantInstr)
			}
			var v map[string]any
			if err := json.Unmarshal(doc, &v); err != nil {
				t.Fatal(err)
			}
			for path, want := range tc.check {
				got, ok := lookup(v, path)
				gb, _ := json.Marshal(got)
				wb, _ := json.Marshal(want)
				if !ok || string(gb) != string(wb) {
					t.Errorf("%s = %s, want %s", path, gb, wb)
				}
			}
			for _, path := range tc.absent {
				if _, ok := lookup(v, path); ok {
					t.Errorf("%s is set", path)
				}
			}
		})
	}
	for name, bad := range map[string]serverConfig{
		"append without file": {Model: m1, Agent: "build", Instructions: &contract.AgentInstruction{Content: "x", Mode: contract.InstructionAppend}},
		"bad mode":            {Model: m1, Agent: "build", Instructions: &contract.AgentInstruction{Content: "x", Mode: "prepend"}},
		"mcp name":            {Model: m1, Agent: "build", MCP: &contract.AgentMCPConfig{Servers: map[string]contract.AgentMCPServer{"a b": {Transport: "stdio", URL: "x"}}}},
		"mcp transport":       {Model: m1, Agent: "build", MCP: &contract.AgentMCPConfig{Servers: map[string]contract.AgentMCPServer{"a": {Transport: "sse", URL: "x"}}}},
		"mcp filters":         {Model: m1, Agent: "build", MCP: &contract.AgentMCPConfig{Servers: map[string]contract.AgentMCPServer{"a": {Transport: "stdio", URL: "x", AllowedTools: []string{}}}}},
		"mcp headers stdio":   {Model: m1, Agent: "build", MCP: &contract.AgentMCPConfig{Servers: map[string]contract.AgentMCPServer{"a": {Transport: "stdio", URL: "x", CustomHeaders: map[string]string{"a": "b"}}}}},
		"mcp env http":        {Model: m1, Agent: "build", MCP: &contract.AgentMCPConfig{Servers: map[string]contract.AgentMCPServer{"a": {Transport: "streamable-http", URL: "x", Env: map[string]string{"a": "b"}}}}},
	} {
		if _, _, err := bad.build(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func lookup(v map[string]any, path string) (any, bool) {
	var cur any = v
	for _, k := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func TestEnv(t *testing.T) {
	s := &session{model: model{APIKeyEnv: "MY_KEY"}}
	s.dirs.Home, s.dirs.Tmp, s.marker = "/r/home", "/r/tmp", "OPENCODE_CONFIG=/r/opencode.json"
	env := s.env([]string{"PATH=/bin", "HOME=/root", "MY_KEY=secret", "OPENCODE_CONFIG_CONTENT={}", "OPENCODE_SERVER_PASSWORD=x", "FABRIC_HOST_CHANNEL_FD=3", "KEEP=1"}, "secret")
	joined := "\n" + strings.Join(env, "\n") + "\n"
	for _, want := range []string{"PATH=/bin", "KEEP=1", "HOME=/r/home", "TMPDIR=/r/tmp", "OPENCODE_CONFIG=/r/opencode.json",
		"XDG_DATA_HOME=/r/home/.local/share", "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_CLAUDE_CODE=1", keyEnv + "=secret"} {
		if !strings.Contains(joined, "\n"+want+"\n") {
			t.Errorf("env lacks %s", want)
		}
	}
	for _, gone := range []string{"HOME=/root", "MY_KEY=", "OPENCODE_CONFIG_CONTENT=", "OPENCODE_SERVER_PASSWORD=", "FABRIC_HOST_CHANNEL_FD="} {
		if strings.Contains(joined, "\n"+gone) {
			t.Errorf("env keeps %s", gone)
		}
	}
}

func TestSSEReader(t *testing.T) {
	in := ": comment\r\ndata: {\"type\":\"a\"}\r\n\r\nevent: x\ndata: {\"type\":\ndata: \"b\"}\n\n\n\ndata:{\"type\":\"c\"}"
	r := newSSEReader(strings.NewReader(in))
	var got []string
	for {
		data, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ev, err := parseEvent(data)
		if err != nil {
			t.Fatalf("%q: %v", data, err)
		}
		got = append(got, ev.Type)
	}
	if strings.Join(got, ",") != "a,b,c" {
		t.Errorf("events %v", got)
	}
	big := "data: " + strings.Repeat("x", maxEventBytes+10) + "\n\n"
	if _, err := newSSEReader(strings.NewReader(big)).Next(); err != errEventTooLarge {
		t.Errorf("oversized event: %v", err)
	}
}

// TestTurn replays a recorded event sequence of OpenCode 1.18.33 (text
// deltas, a tool call, step usage, idle) through the turn's state.
func TestTurn(t *testing.T) {
	const sid = "ses_1"
	evs := []string{
		`{"type":"server.connected","properties":{}}`,
		`{"type":"message.updated","properties":{"sessionID":"ses_1","info":{"id":"msg_u","role":"user"}}}`,
		`{"type":"message.part.updated","properties":{"sessionID":"ses_1","part":{"id":"prt_u","messageID":"msg_u","sessionID":"ses_1","type":"text","text":"question"}}}`,
		`{"type":"session.idle","properties":{"sessionID":"ses_1"}}`,
		`{"type":"session.status","properties":{"sessionID":"ses_1","status":{"type":"busy"}}}`,
		`{"type":"session.status","properties":{"sessionID":"ses_other","status":{"type":"idle"}}}`,
		`{"type":"message.updated","properties":{"sessionID":"ses_1","info":{"id":"msg_a1","role":"assistant"}}}`,
		`{"type":"message.part.updated","properties":{"sessionID":"ses_1","part":{"id":"prt_t","messageID":"msg_a1","sessionID":"ses_1","type":"tool","tool":"bash","callID":"c1","state":{"status":"running","input":{"command":"ls"}}}}}`,
		`{"type":"message.part.updated","properties":{"sessionID":"ses_1","part":{"id":"prt_t","messageID":"msg_a1","sessionID":"ses_1","type":"tool","tool":"bash","callID":"c1","state":{"status":"completed","input":{"command":"ls"},"output":"a.txt"}}}}`,
		`{"type":"message.part.updated","properties":{"sessionID":"ses_1","part":{"id":"prt_s1","messageID":"msg_a1","sessionID":"ses_1","type":"step-finish","tokens":{"total":10,"input":8,"output":2}}}}`,
		`{"type":"message.updated","properties":{"sessionID":"ses_1","info":{"id":"msg_a2","role":"assistant"}}}`,
		`{"type":"message.part.updated","properties":{"sessionID":"ses_1","part":{"id":"prt_x","messageID":"msg_a2","sessionID":"ses_1","type":"text","text":""}}}`,
		`{"type":"message.part.delta","properties":{"sessionID":"ses_1","messageID":"msg_a2","partID":"prt_x","field":"text","delta":"Hel"}}`,
		`{"type":"message.part.delta","properties":{"sessionID":"ses_1","messageID":"msg_a2","partID":"prt_x","field":"text","delta":"lo"}}`,
		`{"type":"message.part.updated","properties":{"sessionID":"ses_1","part":{"id":"prt_x","messageID":"msg_a2","sessionID":"ses_1","type":"text","text":"Hello"}}}`,
		`{"type":"message.part.updated","properties":{"sessionID":"ses_1","part":{"id":"prt_s2","messageID":"msg_a2","sessionID":"ses_1","type":"step-finish","tokens":{"total":5,"input":4,"output":1}}}}`,
		`{"type":"session.status","properties":{"sessionID":"ses_1","status":{"type":"idle"}}}`,
	}
	tr := newTurn(sid)
	var emitted []adapterkit.Event
	done := -1
	for i, raw := range evs {
		ev, err := parseEvent([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if tr.apply(ev, func(e adapterkit.Event) { emitted = append(emitted, e) }) {
			done = i
			break
		}
	}
	if done != len(evs)-1 {
		t.Fatalf("the turn ended at event %d, want %d (the idle before busy and another session's idle do not count)", done, len(evs)-1)
	}
	var kinds []string
	for _, e := range emitted {
		kinds = append(kinds, e.Kind)
	}
	if strings.Join(kinds, ",") != "tool_call,tool_result,output_delta,output_delta" {
		t.Errorf("emitted %v", kinds)
	}
	res := tr.result(contract.StatusSucceeded, map[string]any{})
	if res.Status != contract.StatusSucceeded || res.Output != "Hello" || res.Usage == nil || *res.Usage.TotalTokens != 15 || *res.Usage.InputTokens != 12 {
		t.Errorf("result %+v usage %+v", res, res.Usage)
	}

	// A model error fails the turn with model_error; an empty answer fails.
	tr = newTurn(sid)
	for _, raw := range []string{
		`{"type":"session.status","properties":{"sessionID":"ses_1","status":{"type":"busy"}}}`,
		`{"type":"message.updated","properties":{"sessionID":"ses_1","info":{"id":"m","role":"assistant","error":{"name":"APIError","data":{"message":"bad request","statusCode":400}}}}}`,
	} {
		ev, _ := parseEvent([]byte(raw))
		tr.apply(ev, nil)
	}
	res = tr.result(contract.StatusSucceeded, map[string]any{})
	if res.Status != contract.StatusFailed || res.Error == nil || res.Error.Code != CodeModelError {
		t.Errorf("model error result %+v", res)
	}
	// A session error ends the turn at the next idle even without busy.
	tr = newTurn(sid)
	ended := false
	for _, raw := range []string{
		`{"type":"session.error","properties":{"sessionID":"ses_1","error":{"name":"UnknownError","data":{"message":"agent not found"}}}}`,
		`{"type":"session.idle","properties":{"sessionID":"ses_1"}}`,
	} {
		ev, _ := parseEvent([]byte(raw))
		ended = tr.apply(ev, nil)
	}
	if res := tr.result(contract.StatusSucceeded, map[string]any{}); !ended || res.Status != contract.StatusFailed || res.Error.Code != CodeTurnFailed || !strings.Contains(res.Error.Message, "agent not found") {
		t.Errorf("session error: ended %v, result %+v", ended, res)
	}
	res = newTurn(sid).result(contract.StatusSucceeded, map[string]any{})
	if res.Status != contract.StatusFailed || res.Error == nil || res.Error.Code != CodeTurnFailed {
		t.Errorf("empty result %+v", res)
	}
	// An aborted turn is cancelled, not failed.
	res = newTurn(sid).result(contract.StatusCancelled, map[string]any{})
	if res.Status != contract.StatusCancelled || res.Error != nil {
		t.Errorf("cancelled result %+v", res)
	}
}

func TestResolveBinary(t *testing.T) {
	if _, err := resolveBinary(func(k string) string {
		if k == envBinary {
			return "/nonexistent/opencode"
		}
		return ""
	}, ""); err == nil {
		t.Error("a missing FABRIC_OPENCODE_BIN was accepted")
	}
	if _, err := resolveBinary(func(string) string { return "" }, t.TempDir()); err == nil {
		t.Error("found opencode in an empty directory")
	}
}

func TestPortScanner(t *testing.T) {
	found := make(chan int, 1)
	p := &portScanner{w: io.Discard, found: found}
	p.Write([]byte("opencode server listening on http://127.0.0.1:4"))
	p.Write([]byte("5123\nmore\n"))
	p.Write([]byte("opencode server listening on http://127.0.0.1:1\n"))
	select {
	case port := <-found:
		if port != 45123 {
			t.Errorf("port %d", port)
		}
	default:
		t.Error("no port found")
	}
}
