package acp

import (
	"bytes"
	_ "embed"
)

// Descriptors embedded in the adapter: the generic one (a user's own
// descriptor replaces it, with runner.env.FABRIC_ACP_PROFILE holding a JSON
// profile) and the bundled profiles.
var (
	//go:embed packages/nvidia.fabric.acp/acp.fabric-adapter.json
	descriptorGeneric []byte
	//go:embed packages/nvidia.fabric.acp.gemini/gemini.fabric-adapter.json
	descriptorGemini []byte
	//go:embed packages/nvidia.fabric.acp.qwen/qwen.fabric-adapter.json
	descriptorQwen []byte
	//go:embed packages/nvidia.fabric.acp.codex-acp/codex-acp.fabric-adapter.json
	descriptorCodexACP []byte
	//go:embed packages/nvidia.fabric.acp.claude-agent-acp/claude-agent-acp.fabric-adapter.json
	descriptorClaude []byte
	//go:embed packages/nvidia.fabric.acp.openclaw/openclaw.fabric-adapter.json
	descriptorOpenClaw []byte
	//go:embed packages/nvidia.fabric.acp.droid/droid.fabric-adapter.json
	descriptorDroid []byte
	//go:embed packages/nvidia.fabric.acp.kilo/kilo.fabric-adapter.json
	descriptorKilo []byte
)

// Named is one embedded descriptor and its file name.
type Named struct {
	Name string
	Data []byte
}

// Descriptors returns the embedded descriptors, in a fixed order (copies:
// the embedded bytes stay unchanged).
func Descriptors() []Named {
	return []Named{
		{"acp.fabric-adapter.json", bytes.Clone(descriptorGeneric)},
		{"acp-gemini.fabric-adapter.json", bytes.Clone(descriptorGemini)},
		{"acp-qwen.fabric-adapter.json", bytes.Clone(descriptorQwen)},
		{"acp-codex-acp.fabric-adapter.json", bytes.Clone(descriptorCodexACP)},
		{"acp-claude-agent-acp.fabric-adapter.json", bytes.Clone(descriptorClaude)},
		{"acp-openclaw.fabric-adapter.json", bytes.Clone(descriptorOpenClaw)},
		{"acp-droid.fabric-adapter.json", bytes.Clone(descriptorDroid)},
		{"acp-kilo.fabric-adapter.json", bytes.Clone(descriptorKilo)},
	}
}
