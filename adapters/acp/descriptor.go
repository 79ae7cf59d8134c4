package acp

import _ "embed"

// Descriptors embedded in the adapter: the generic one (a user's own
// descriptor replaces it, with runner.env.FABRIC_ACP_PROFILE holding a JSON
// profile) and the bundled profiles.
var (
	//go:embed packages/nvidia.fabric.acp/acp.fabric-adapter.json
	DescriptorGeneric []byte
	//go:embed packages/nvidia.fabric.acp.gemini/gemini.fabric-adapter.json
	DescriptorGemini []byte
	//go:embed packages/nvidia.fabric.acp.qwen/qwen.fabric-adapter.json
	DescriptorQwen []byte
	//go:embed packages/nvidia.fabric.acp.codex-acp/codex-acp.fabric-adapter.json
	DescriptorCodexACP []byte
	//go:embed packages/nvidia.fabric.acp.claude-agent-acp/claude-agent-acp.fabric-adapter.json
	DescriptorClaude []byte
	//go:embed packages/nvidia.fabric.acp.openclaw/openclaw.fabric-adapter.json
	DescriptorOpenClaw []byte
	//go:embed packages/nvidia.fabric.acp.droid/droid.fabric-adapter.json
	DescriptorDroid []byte
	//go:embed packages/nvidia.fabric.acp.kilo/kilo.fabric-adapter.json
	DescriptorKilo []byte
)

// Named is one embedded descriptor and its file name.
type Named struct {
	Name string
	Data []byte
}

// Descriptors returns the embedded descriptors, in a fixed order.
func Descriptors() []Named {
	return []Named{
		{"acp.fabric-adapter.json", DescriptorGeneric},
		{"acp-gemini.fabric-adapter.json", DescriptorGemini},
		{"acp-qwen.fabric-adapter.json", DescriptorQwen},
		{"acp-codex-acp.fabric-adapter.json", DescriptorCodexACP},
		{"acp-claude-agent-acp.fabric-adapter.json", DescriptorClaude},
		{"acp-openclaw.fabric-adapter.json", DescriptorOpenClaw},
		{"acp-droid.fabric-adapter.json", DescriptorDroid},
		{"acp-kilo.fabric-adapter.json", DescriptorKilo},
	}
}
