package acp

import _ "embed"

// Descriptors embedded in the adapter: the generic one (a user's own
// descriptor replaces it, with runner.env.FABRIC_ACP_PROFILE holding a JSON
// profile) and the bundled profiles.
var (
	//go:embed acp.fabric-adapter.json
	DescriptorGeneric []byte
	//go:embed gemini.fabric-adapter.json
	DescriptorGemini []byte
	//go:embed qwen.fabric-adapter.json
	DescriptorQwen []byte
	//go:embed codex-acp.fabric-adapter.json
	DescriptorCodexACP []byte
	//go:embed claude-agent-acp.fabric-adapter.json
	DescriptorClaude []byte
	//go:embed openclaw.fabric-adapter.json
	DescriptorOpenClaw []byte
	//go:embed droid.fabric-adapter.json
	DescriptorDroid []byte
	//go:embed kilo.fabric-adapter.json
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
