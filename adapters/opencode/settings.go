package opencode

import (
	"fmt"
	"math"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
	"github.com/fabric-runtime/fabric/adapterkit/serverharness"
	"github.com/fabric-runtime/fabric/contract"
)

// Stable error codes of the adapter (docs: README.md).
const (
	CodeInvalidSettings  = "opencode_invalid_settings"
	CodeInvalidConfig    = "opencode_invalid_config"
	CodeAPIKeyMissing    = "opencode_api_key_missing"
	CodeBinaryNotFound   = "opencode_not_found"
	CodeStartFailed      = "opencode_start_failed"
	CodeStartTimeout     = "opencode_start_timeout"
	CodeServerExited     = "opencode_server_exited"
	CodeInvalidWorkspace = "opencode_invalid_workspace"
	// Turn failures (result.error.code).
	CodeTurnFailed = "opencode_turn_failed"
	CodeModelError = "model_error"
)

// Defaults of the settings.
const (
	DefaultAgent          = "build"
	DefaultRequestTimeout = 30 * time.Second
)

// Settings are the adapter's settings (harness.settings); the descriptor's
// settings_schema describes the same fields.
type Settings struct {
	// Agent is OpenCode's primary agent for the turns (build or plan).
	Agent string
	// RequestTimeout bounds every request to the server but the event
	// stream.
	RequestTimeout time.Duration
	// Snapshots turns OpenCode's filesystem snapshots on.
	Snapshots bool
	// StartupTimeout is the one deadline for all of start (L3).
	StartupTimeout time.Duration
	// Web and Terminal are the interfaces' settings, nil when off.
	Web      *harnessui.InterfaceSettings
	Terminal *harnessui.InterfaceSettings
}

// parseSettings decodes and checks harness settings (planning has already
// validated them against the descriptor; this is the host's own guard)
// and fills in the defaults. Interface errors are *harnessui.Error.
func parseSettings(h *contract.AgentHarnessConfig) (Settings, error) {
	s := Settings{Agent: DefaultAgent, RequestTimeout: DefaultRequestTimeout}
	var own struct {
		Agent          *string  `json:"agent"`
		RequestTimeout *float64 `json:"request_timeout_seconds"`
		Snapshots      *bool    `json:"snapshots"`
	}
	is, err := serverharness.DecodeSettings(h, descriptor, &own)
	if err != nil {
		return s, err
	}
	s.StartupTimeout = is.StartupTimeout
	if d, ok := is.Enabled(Web); ok {
		s.Web = &d
	}
	if d, ok := is.Enabled(Terminal); ok {
		s.Terminal = &d
	}
	if a := own.Agent; a != nil {
		if *a != "build" && *a != "plan" {
			return s, fmt.Errorf("settings.agent %q is not build or plan", *a)
		}
		s.Agent = *a
	}
	if own.Snapshots != nil {
		s.Snapshots = *own.Snapshots
	}
	if t := own.RequestTimeout; t != nil {
		if *t != math.Trunc(*t) || *t < 1 || *t > 300 {
			return s, fmt.Errorf("settings.request_timeout_seconds %v is not an integer in 1-300", *t)
		}
		s.RequestTimeout = time.Duration(*t) * time.Second
	}
	return s, nil
}

// openAIBaseURL is the endpoint of provider openai without base_url.
const openAIBaseURL = "https://api.openai.com/v1"

// model is the model role the runtime uses, resolved to what OpenCode
// needs. OpenCode reaches it through @ai-sdk/openai-compatible (Chat
// Completions).
type model = serverharness.Model

// selectModel picks the model role ("default", else the only one) and
// resolves its endpoint.
func selectModel(models map[string]contract.AgentModel) (model, error) {
	return serverharness.SelectModel(models, serverharness.ModelRules{
		Adapter: "OpenCode", KeyReader: "the server",
		BaseURLs: map[string]string{"openai": openAIBaseURL},
	})
}
