package openclaw

import (
	"fmt"
	"github.com/fabric-runtime/fabric/internal/lazy"
	"regexp"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
	"github.com/fabric-runtime/fabric/adapterkit/serverharness"
	"github.com/fabric-runtime/fabric/contract"
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

// parseSettings decodes and checks harness settings (planning has already
// validated them against the descriptor; this is the host's own guard)
// and fills in the defaults. Interface errors are *harnessui.Error.
func parseSettings(h *contract.AgentHarnessConfig) (Settings, error) {
	s := Settings{AgentID: DefaultAgentID, PortRange: PortRange{DefaultStart, DefaultEnd}}
	var own struct {
		AgentID   *string    `json:"agent_id"`
		PortRange *PortRange `json:"port_range"`
	}
	is, err := serverharness.DecodeSettings(h, descriptor, &own)
	if err != nil {
		return s, err
	}
	s.StartupTimeout = is.StartupTimeout
	if d, ok := is.Enabled(Dashboard); ok {
		s.Dashboard = &d
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
	apiOpenAICompletions = "openai-completions"
	apiOpenAIResponses   = "openai-responses"
	apiAnthropicMessages = "anthropic-messages"
)

// Default endpoints of the providers that need no base_url.
const (
	openAIBaseURL    = "https://api.openai.com/v1"
	anthropicBaseURL = "https://api.anthropic.com"
)

// model is the model role the runtime uses, resolved to what OpenClaw
// needs.
type model struct {
	serverharness.Model
	API string // one of the api* constants
}

// selectModel picks the model role ("default", else the only one) and
// resolves its endpoint and wire API.
func selectModel(models map[string]contract.AgentModel) (model, error) {
	var api string
	m, err := serverharness.SelectModel(models, serverharness.ModelRules{
		Adapter: "OpenClaw", KeyReader: "the Gateway",
		BaseURLs: map[string]string{"openai": openAIBaseURL, "anthropic": anthropicBaseURL},
		Setting: func(k string, v any) (bool, error) {
			if k != "api" {
				return false, nil
			}
			s, _ := v.(string)
			switch s {
			case apiOpenAICompletions, apiOpenAIResponses, apiAnthropicMessages:
				api = s
				return true, nil
			}
			return true, fmt.Errorf("%v is not %s, %s or %s", v, apiOpenAICompletions, apiOpenAIResponses, apiAnthropicMessages)
		},
	})
	out := model{Model: m, API: api}
	if err != nil {
		return out, err
	}
	if out.API == "" {
		out.API = apiOpenAICompletions
		if m.Provider == "anthropic" {
			out.API = apiAnthropicMessages
		}
	}
	return out, nil
}
