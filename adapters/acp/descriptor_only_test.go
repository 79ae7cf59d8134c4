//go:build linux

package acp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
	"github.com/fabric-runtime/fabric/modelstub"
)

// TestLiveDescriptorOnly: an ACP agent Fabric has no profile for runs from
// a user's descriptor alone (runner builtin nvidia.fabric.acp, the agent
// command and its env translation as a JSON profile in runner.env), no Go
// code. codex-acp stands in for "any other ACP agent".
func TestLiveDescriptorOnly(t *testing.T) {
	livetest.Short(t, "the real codex-acp agent from harnesses/acp and Node 24")
	pc := cases[0]
	l := newLive(t, pc, &modelstub.Script{Default: &modelstub.Reply{Text: "from my agent"}})
	profile := map[string]any{
		"name": "my-agent", "command": "codex-acp",
		"args": []string{"-c", "model_provider=p", "-c", "model_providers.p.name=p", "-c", "model_providers.p.base_url={base_url}",
			"-c", "model_providers.p.env_key=MY_AGENT_KEY", "-c", "model_providers.p.wire_api=responses",
			"-c", "analytics.enabled=false", "-c", "features.plugins=false"},
		"model_args": []string{"-c", "model={model}"},
		"env":        map[string]string{"CODEX_HOME": "{home}/.codex", "MY_AGENT_KEY": "{api_key}"},
	}
	pj, _ := json.Marshal(profile)
	desc := map[string]any{
		"contract_version": "fabric.adapter/v1alpha2", "adapter_id": "example.my-acp-agent", "adapter_kind": "process",
		"runner":       map[string]any{"builtin": "nvidia.fabric.acp", "protocol": "fabric.host/v2", "env": map[string]string{"FABRIC_ACP_PROFILE": string(pj)}},
		"config":       map[string]any{"input": "agent_config", "accepts": []string{"models", "models.base_url"}},
		"capabilities": map[string]any{"streaming": true, "cancellation": true},
	}
	db, _ := json.MarshalIndent(desc, "", "  ")
	if err := os.WriteFile(filepath.Join(l.DescDir, "my-agent.fabric-adapter.json"), db, 0o644); err != nil {
		t.Fatal(err)
	}
	rt := l.Start(l.Config(adaptertest.Doc{Name: "mine", AdapterID: "example.my-acp-agent", Provider: "p", Model: pc.model}))
	res := l.Invoke(t, rt, "hello")
	if res.Status != contract.StatusSucceeded || !strings.Contains(res.Output.(string), "from my agent") {
		t.Fatalf("%s %v %+v", res.Status, res.Output, res.Error)
	}
	l.checkRequests()
}
