package openclaw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
	"github.com/fabric-runtime/fabric/adapterkit/serverharness"
	"github.com/fabric-runtime/fabric/contract"
)

func ptr[T any](v T) *T { return &v }

func TestParseSettings(t *testing.T) {
	s, err := parseSettings(nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.AgentID != DefaultAgentID || s.PortRange != (PortRange{DefaultStart, DefaultEnd}) || s.StartupTimeout != harnessui.DefaultStartupTimeout || s.Dashboard != nil {
		t.Errorf("defaults %+v", s)
	}
	s, err = parseSettings(&contract.AgentHarnessConfig{Settings: map[string]any{
		"agent_id": "ops", "port_range": map[string]any{"start": 20000.0, "end": 20221.0},
		"startup_timeout_seconds": 75.0,
		"interfaces":              map[string]any{"dashboard": map[string]any{"port": 21000.0, "public_origins": []any{"https://x.example"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if s.AgentID != "ops" || s.PortRange != (PortRange{20000, 20221}) || s.StartupTimeout != 75*time.Second ||
		s.Dashboard == nil || s.Dashboard.Port != 21000 || len(s.Dashboard.PublicOrigins) != 1 {
		t.Errorf("parsed %+v", s)
	}
	// A disabled dashboard is off.
	s, err = parseSettings(&contract.AgentHarnessConfig{Settings: map[string]any{
		"interfaces": map[string]any{"dashboard": map[string]any{"enabled": false}},
	}})
	if err != nil || s.Dashboard != nil {
		t.Errorf("disabled dashboard: %+v, %v", s.Dashboard, err)
	}
	for name, bad := range map[string]map[string]any{
		"agent id":        {"agent_id": "Not Valid"},
		"small range":     {"port_range": map[string]any{"start": 20000.0, "end": 20100.0}},
		"range type":      {"port_range": "20000-21000"},
		"unknown":         {"openclaw_command": "x"},
		"timeout too big": {"startup_timeout_seconds": 76.0},
		"unknown iface":   {"interfaces": map[string]any{"terminal": map[string]any{}}},
		"no port":         {"interfaces": map[string]any{"dashboard": map[string]any{}}},
		"port too high":   {"interfaces": map[string]any{"dashboard": map[string]any{"port": 65500.0}}},
		"bad origin":      {"interfaces": map[string]any{"dashboard": map[string]any{"port": 21000.0, "public_origins": []any{"https://x.example/path"}}}},
	} {
		if _, err := parseSettings(&contract.AgentHarnessConfig{Settings: bad}); err == nil {
			t.Errorf("%s: accepted %v", name, bad)
		}
	}
}

func TestSelectModel(t *testing.T) {
	m, err := selectModel(map[string]contract.AgentModel{"default": {Provider: "stub", Model: "m", APIKeyEnv: ptr("K"), BaseURL: ptr("http://127.0.0.1:9/v1")}})
	if err != nil || m.API != apiOpenAICompletions || m.BaseURL != "http://127.0.0.1:9/v1" || m.APIKeyEnv != "K" {
		t.Fatalf("%+v %v", m, err)
	}
	m, err = selectModel(map[string]contract.AgentModel{"only": {Provider: "anthropic", Model: "claude", APIKeyEnv: ptr("K")}})
	if err != nil || m.API != apiAnthropicMessages || m.BaseURL != anthropicBaseURL || m.Role != "only" {
		t.Fatalf("%+v %v", m, err)
	}
	m, err = selectModel(map[string]contract.AgentModel{"default": {Provider: "openai", Model: "g", APIKeyEnv: ptr("K"), Settings: map[string]any{"api": "openai-responses", "max_tokens": 1000.0}}})
	if err != nil || m.API != apiOpenAIResponses || m.BaseURL != openAIBaseURL || m.MaxTokens != 1000 {
		t.Fatalf("%+v %v", m, err)
	}
	for name, bad := range map[string]map[string]contract.AgentModel{
		"no key":      {"default": {Provider: "openai", Model: "g"}},
		"no base_url": {"default": {Provider: "local", Model: "g", APIKeyEnv: ptr("K")}},
		"two roles":   {"a": {Provider: "openai", Model: "g", APIKeyEnv: ptr("K")}, "b": {Provider: "openai", Model: "g", APIKeyEnv: ptr("K")}},
		"bad api":     {"default": {Provider: "openai", Model: "g", APIKeyEnv: ptr("K"), Settings: map[string]any{"api": "gemini"}}},
		"bad url":     {"default": {Provider: "x", Model: "g", APIKeyEnv: ptr("K"), BaseURL: ptr("ftp://h")}},
	} {
		if _, err := selectModel(bad); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestGatewayConfig: the configuration names only FabricConfig's endpoint,
// references the key by keyEnv and never holds it, keeps the Gateway on
// loopback, turns off what calls out on its own, and maps public_origins.
func TestGatewayConfig(t *testing.T) {
	c := gatewayConfig{Port: 21000, AgentID: "default", Workspace: "/ws", LogFile: "/l/openclaw.log",
		Model: model{Model: serverharness.Model{Name: "m1", BaseURL: "http://127.0.0.1:9/v1/", ContextWindow: 1000, MaxTokens: 10}, API: apiOpenAICompletions}}
	data, err := c.build()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	get := func(path string) any {
		var v any = doc
		for _, k := range strings.Split(path, ".") {
			m, _ := v.(map[string]any)
			v = m[k]
		}
		return v
	}
	for path, want := range map[string]any{
		"gateway.bind": "loopback", "gateway.port": 21000.0, "gateway.auth.mode": "token",
		"gateway.controlUi.enabled": false, "gateway.terminal.enabled": false,
		"update.checkOnStart": false, "telemetry.enabled": false, "models.catalogRefresh.enabled": false,
		"models.mode": "replace", "plugins.enabled": false, "cron.enabled": false, "browser.enabled": false,
		"discovery.mdns.mode": "off", "logging.file": "/l/openclaw.log",
		"models.providers.fabric.baseUrl": "http://127.0.0.1:9/v1", "models.providers.fabric.apiKey": "${" + keyEnv + "}",
		"models.providers.fabric.api": apiOpenAICompletions, "agents.defaults.cwd": "/ws",
		"gateway.http.endpoints.chatCompletions.enabled": true,
	} {
		if got := get(path); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
	if get("agents.entries.default.model") != "fabric/m1" {
		t.Errorf("agent entry %v", get("agents.entries"))
	}
	if get("gateway.controlUi.allowedOrigins") != nil {
		t.Error("allowed origins without the dashboard")
	}
	c.Dashboard, c.AllowedOrigins = true, []string{"https://a.example"}
	data, _ = c.build()
	doc = nil
	json.Unmarshal(data, &doc)
	if get("gateway.controlUi.enabled") != true || fmt.Sprint(get("gateway.controlUi.allowedOrigins")) != "[http://127.0.0.1:21000 http://localhost:21000 https://a.example]" {
		t.Errorf("controlUi %v", get("gateway.controlUi"))
	}
}

func TestNodeSupported(t *testing.T) {
	for v, want := range map[string]bool{
		"v24.22.3": true, "v24.16.0": true, "v24.15.9": false, "v25.0.0": false, "v26.0.0": false,
		"v26.1.0": true, "v27.2.0": true, "v20.20.2": false, "garbage": false, "": false,
	} {
		if got := nodeSupported(v); got != want {
			t.Errorf("nodeSupported(%q) = %v", v, got)
		}
	}
}

func TestResolveBinaryMissing(t *testing.T) {
	dir := t.TempDir()
	_, err := resolveBinary(context.Background(), func(string) string { return "" }, dir)
	if err == nil {
		t.Fatal("found openclaw in an empty directory")
	}
	_, err = resolveBinary(context.Background(), func(k string) string {
		if k == envBinary {
			return "/nonexistent/openclaw"
		}
		return ""
	}, dir)
	if err == nil || !strings.Contains(err.Error(), envBinary) {
		t.Fatalf("err %v", err)
	}
}

// TestPickBase: bases tile the range, are reserved exclusively, and are
// released.
func TestPickBase(t *testing.T) {
	r := PortRange{Start: 45000, End: 45000 + 3*Footprint - 1}
	var got []*reservation
	for range 3 {
		res, err := pickBase(r)
		if err != nil {
			t.Fatal(err)
		}
		if (res.Base-r.Start)%Footprint != 0 {
			t.Errorf("base %d is not on a tile", res.Base)
		}
		got = append(got, res)
	}
	if got[0].Base == got[1].Base || got[1].Base == got[2].Base || got[0].Base == got[2].Base {
		t.Errorf("bases %d %d %d", got[0].Base, got[1].Base, got[2].Base)
	}
	if _, err := pickBase(r); err == nil {
		t.Error("a fourth base in a three-tile range")
	}
	got[1].release()
	res, err := pickBase(r)
	if err != nil || res.Base != got[1].Base {
		t.Errorf("after release: %v, %v", res, err)
	}
	res.release()
	got[0].release()
	got[2].release()
}

// TestChatStream: the SSE answer is assembled from its deltas, usage is
// read, and error answers become *httpError.
func TestChatStream(t *testing.T) {
	var got chatRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(401)
			io.WriteString(w, `{"error":{"message":"unauthorized"}}`)
			return
		}
		json.NewDecoder(r.Body).Decode(&got)
		if got.Messages[0].Content == "fail" {
			w.WriteHeader(500)
			io.WriteString(w, `{"error":{"message":"agent failed"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, d := range []string{"Hel", "lo"} {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", d)
		}
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
		io.WriteString(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}}\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	var deltas []string
	req := chatRequest{Model: "openclaw/default", User: "fabric:r", Stream: true, Messages: []chatMessage{{Role: "user", Content: "hi"}}}
	out, err := chat(context.Background(), srv.Client(), srv.URL, "tok", req, func(d string) { deltas = append(deltas, d) })
	if err != nil || out.Text != "Hello" || out.FinishReason != "stop" || out.Usage == nil || out.Usage.TotalTokens != 5 {
		t.Fatalf("%+v %v", out, err)
	}
	if strings.Join(deltas, "|") != "Hel|lo" || got.User != "fabric:r" || got.Model != "openclaw/default" {
		t.Errorf("deltas %v request %+v", deltas, got)
	}
	req.Messages[0].Content = "fail"
	_, err = chat(context.Background(), srv.Client(), srv.URL, "tok", req, nil)
	var he *httpError
	if !errors.As(err, &he) || he.Status != 500 || he.Message != "agent failed" {
		t.Errorf("err %v", err)
	}
	_, err = chat(context.Background(), srv.Client(), srv.URL, "wrong", req, nil)
	if !errors.As(err, &he) || he.Status != 401 || strings.Contains(err.Error(), "wrong") {
		t.Errorf("err %v", err)
	}
}
