package opencode

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/lazy"
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

// declarations are the descriptor's interface declarations.
var declarations = lazy.Values[[]contract.InterfaceDeclaration]{New: func() ([]contract.InterfaceDeclaration, error) {
	var d struct {
		Interfaces []contract.InterfaceDeclaration `json:"interfaces"`
	}
	if err := json.Unmarshal(Descriptor, &d); err != nil {
		return nil, err
	}
	return d.Interfaces, nil
}}

// ParseSettings decodes and checks harness settings (planning has already
// validated them against the descriptor; this is the host's own guard)
// and fills in the defaults. Interface errors are *harnessui.Error.
func ParseSettings(h *contract.AgentHarnessConfig) (Settings, error) {
	s := Settings{Agent: DefaultAgent, RequestTimeout: DefaultRequestTimeout}
	var raw map[string]any
	if h != nil {
		raw = h.Settings
	}
	decls, err := declarations.Get()
	if err != nil {
		return s, fmt.Errorf("descriptor: %w", err)
	}
	is, err := harnessui.ParseSettings(raw, decls)
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
	var own struct {
		Agent          *string  `json:"agent"`
		RequestTimeout *float64 `json:"request_timeout_seconds"`
		Snapshots      *bool    `json:"snapshots"`
		// Decoded by harnessui.ParseSettings above.
		StartupTimeout json.RawMessage `json:"startup_timeout_seconds"`
		Interfaces     json.RawMessage `json:"interfaces"`
	}
	if err := adapterkit.DecodeSettings(h, &own); err != nil {
		return s, err
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

// OpenAIBaseURL is the endpoint of provider openai without base_url.
const OpenAIBaseURL = "https://api.openai.com/v1"

// Model is the model role the runtime uses, resolved to what OpenCode
// needs. OpenCode reaches it through @ai-sdk/openai-compatible (Chat
// Completions).
type Model struct {
	Role          string
	Provider      string
	Model         string
	BaseURL       string // never empty
	APIKeyEnv     string // never empty
	Temperature   *float64
	ContextWindow int
	MaxTokens     int
}

// SelectModel picks the model role ("default", else the only one) and
// resolves its endpoint.
func SelectModel(models map[string]contract.AgentModel) (Model, error) {
	role, m, err := adapterkit.Model(contract.AgentConfig{Models: models})
	if err != nil {
		return Model{}, err
	}
	out := Model{Role: role, Provider: m.Provider, Model: m.Model, Temperature: m.Temperature, ContextWindow: 128000, MaxTokens: 8192}
	if strings.TrimSpace(m.Model) == "" {
		return out, fmt.Errorf("models.%s.model is empty", role)
	}
	if m.APIKeyEnv == nil || *m.APIKeyEnv == "" {
		return out, fmt.Errorf("models.%s.api_key_env is required: the server gets the key from that variable (C1)", role)
	}
	out.APIKeyEnv = *m.APIKeyEnv
	switch {
	case m.BaseURL != nil && *m.BaseURL != "":
		out.BaseURL = *m.BaseURL
	case m.Provider == "openai":
		out.BaseURL = OpenAIBaseURL
	default:
		return out, fmt.Errorf("models.%s.base_url is required for provider %q", role, m.Provider)
	}
	if u, err := url.Parse(out.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return out, fmt.Errorf("models.%s.base_url %q is not an http(s) URL", role, out.BaseURL)
	}
	for k, v := range m.Settings {
		switch k {
		case "context_window", "max_tokens":
			n, ok := v.(float64)
			if !ok || n != math.Trunc(n) || n < 1 {
				return out, fmt.Errorf("models.%s.settings.%s must be a positive integer", role, k)
			}
			if k == "context_window" {
				out.ContextWindow = int(n)
			} else {
				out.MaxTokens = int(n)
			}
		default:
			return out, fmt.Errorf("models.%s.settings.%s is not a model setting of the OpenCode adapter", role, k)
		}
	}
	return out, nil
}
