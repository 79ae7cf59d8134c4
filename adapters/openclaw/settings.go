package openclaw

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/lazy"
)

// Stable error codes of the adapter (docs: README.md).
const (
	CodeInvalidSettings  = "openclaw_invalid_settings"
	CodeInvalidConfig    = "openclaw_invalid_config"
	CodeAPIKeyMissing    = "openclaw_api_key_missing"
	CodeBinaryNotFound   = "openclaw_not_found"
	CodeNodeUnsupported  = "openclaw_node_unsupported"
	CodePortUnavailable  = "openclaw_port_unavailable"
	CodeStartFailed      = "openclaw_start_failed"
	CodeStartTimeout     = "openclaw_start_timeout"
	CodeGatewayExited    = "openclaw_gateway_exited"
	CodeInvalidWorkspace = "openclaw_invalid_workspace"
	// Turn failures (result.error.code).
	CodeTurnFailed  = "openclaw_turn_failed"
	CodeModelError  = "model_error"
	CodeHTTPError   = "openclaw_http_error"
	CodeRateLimited = "model_rate_limited"
)

// Port footprint of one Gateway (OpenClaw's multiple-gateways guide): the
// base port, the browser-control port base+2, and CDP ports up to
// base+110. A runtime reserves all of it and checks base and base+2 (Q7).
const (
	Footprint    = 111
	BrowserPort  = 2
	DefaultStart = 18789
	DefaultEnd   = 32767
)

// DefaultAgentID is agent_id's default, as upstream's.
const DefaultAgentID = "default"

// PortRange is the port_range setting.
type PortRange struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Settings are the adapter's settings (harness.settings); the descriptor's
// settings_schema describes the same fields.
type Settings struct {
	AgentID   string
	PortRange PortRange
	// StartupTimeout is the one deadline for all of start (L3).
	StartupTimeout time.Duration
	// Dashboard is the dashboard interface's settings, nil when off.
	Dashboard *harnessui.InterfaceSettings
}

var agentIDRE = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`) }}

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
	s := Settings{AgentID: DefaultAgentID, PortRange: PortRange{DefaultStart, DefaultEnd}}
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
	if d, ok := is.Enabled(Dashboard); ok {
		s.Dashboard = &d
	}
	var own struct {
		AgentID   *string    `json:"agent_id"`
		PortRange *PortRange `json:"port_range"`
		// Decoded by harnessui.ParseSettings above.
		StartupTimeout json.RawMessage `json:"startup_timeout_seconds"`
		Interfaces     json.RawMessage `json:"interfaces"`
	}
	if err := adapterkit.DecodeSettings(h, &own); err != nil {
		return s, err
	}
	if id := own.AgentID; id != nil {
		if !agentIDRE.Get().MatchString(*id) {
			return s, fmt.Errorf("settings.agent_id must match %s", agentIDRE.Get())
		}
		s.AgentID = *id
	}
	if r := own.PortRange; r != nil {
		if r.Start < 1024 || r.End > 65535 || r.End-r.Start+1 < Footprint {
			return s, fmt.Errorf("settings.port_range %d-%d must lie in 1024-65535 and span at least %d ports (base..base+%d)", r.Start, r.End, Footprint, Footprint-1)
		}
		s.PortRange = *r
	}
	if d := s.Dashboard; d != nil && d.Port+Footprint-1 > 65535 {
		return s, fmt.Errorf("interfaces.dashboard.port %d leaves no room for the Gateway's derived ports (up to port+%d)", d.Port, Footprint-1)
	}
	return s, nil
}

// Wire APIs OpenClaw speaks to a model endpoint (its provider "api").
const (
	APIOpenAICompletions = "openai-completions"
	APIOpenAIResponses   = "openai-responses"
	APIAnthropicMessages = "anthropic-messages"
)

// Default endpoints of the providers that need no base_url.
const (
	OpenAIBaseURL    = "https://api.openai.com/v1"
	AnthropicBaseURL = "https://api.anthropic.com"
)

// Model is the model role the runtime uses, resolved to what OpenClaw
// needs.
type Model struct {
	Role          string
	Provider      string
	Model         string
	BaseURL       string // never empty
	APIKeyEnv     string // never empty
	API           string // one of the API* constants
	ContextWindow int
	MaxTokens     int
}

// SelectModel picks the model role ("default", else the only one) and
// resolves its endpoint and wire API.
func SelectModel(models map[string]contract.AgentModel) (Model, error) {
	role, m, err := adapterkit.Model(contract.AgentConfig{Models: models})
	if err != nil {
		return Model{}, err
	}
	out := Model{Role: role, Provider: m.Provider, Model: m.Model, ContextWindow: 128000, MaxTokens: 8192}
	if strings.TrimSpace(m.Model) == "" {
		return out, fmt.Errorf("models.%s.model is empty", role)
	}
	if m.APIKeyEnv == nil || *m.APIKeyEnv == "" {
		return out, fmt.Errorf("models.%s.api_key_env is required: the Gateway gets the key from that variable (C1)", role)
	}
	out.APIKeyEnv = *m.APIKeyEnv
	switch {
	case m.BaseURL != nil && *m.BaseURL != "":
		out.BaseURL = *m.BaseURL
	case m.Provider == "openai":
		out.BaseURL = OpenAIBaseURL
	case m.Provider == "anthropic":
		out.BaseURL = AnthropicBaseURL
	default:
		return out, fmt.Errorf("models.%s.base_url is required for provider %q", role, m.Provider)
	}
	if u, err := url.Parse(out.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return out, fmt.Errorf("models.%s.base_url %q is not an http(s) URL", role, out.BaseURL)
	}
	out.API = APIOpenAICompletions
	if m.Provider == "anthropic" {
		out.API = APIAnthropicMessages
	}
	for k, v := range m.Settings {
		switch k {
		case "api":
			s, _ := v.(string)
			switch s {
			case APIOpenAICompletions, APIOpenAIResponses, APIAnthropicMessages:
				out.API = s
			default:
				return out, fmt.Errorf("models.%s.settings.api %v is not %s, %s or %s", role, v, APIOpenAICompletions, APIOpenAIResponses, APIAnthropicMessages)
			}
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
			return out, fmt.Errorf("models.%s.settings.%s is not a model setting of the OpenClaw adapter", role, k)
		}
	}
	return out, nil
}
