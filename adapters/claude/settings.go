package claude

import (
	"fmt"
	"slices"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/contract"
)

// Permission modes (settings "permission_mode").
const (
	PermissionDefault     = "default"
	PermissionAcceptEdits = "acceptEdits"
	PermissionBypass      = "bypassPermissions"
	PermissionPlan        = "plan"
	PermissionDontAsk     = "dontAsk"
	PermissionAuto        = "auto"
)

// Setting sources (settings "setting_sources").
const (
	SourceUser    = "user"
	SourceProject = "project"
	SourceLocal   = "local"
)

// defaultInitializeTimeout bounds the wait for the answer to initialize.
const defaultInitializeTimeout = 60 * time.Second

// Settings are the adapter's settings (AgentConfig.Harness.Settings); the
// descriptor's settings_schema describes the same fields and the plan
// validates them. Start checks them again, so that a host driven directly
// cannot pass what the schema forbids.
type Settings struct {
	// SettingSources are the Claude Code setting sources to load; empty
	// loads none (no ambient settings). "user" is the runtime's private
	// config dir, not the operator's ~/.claude.
	SettingSources []string `json:"setting_sources,omitempty"`
	// MaxBudgetUSD caps the API spend of one turn (--max-budget-usd).
	MaxBudgetUSD *float64 `json:"max_budget_usd,omitempty"`
	// PermissionMode is Claude Code's permission mode (default "default").
	PermissionMode string `json:"permission_mode,omitempty"`
	// Bare starts Claude Code with --bare.
	Bare bool `json:"bare,omitempty"`
	// MaxRetries sets CLAUDE_CODE_MAX_RETRIES.
	MaxRetries *int `json:"max_retries,omitempty"`
	// Effort is the effort level (--effort).
	Effort string `json:"effort,omitempty"`
	// Env is extra environment of the claude process; Fabric's own
	// variables win over it.
	Env map[string]string `json:"env,omitempty"`
	// InitializeTimeoutSeconds bounds the wait for the initialize answer
	// (default 60 seconds).
	InitializeTimeoutSeconds *float64 `json:"initialize_timeout_seconds,omitempty"`
}

func (s Settings) initializeTimeout() time.Duration {
	if s.InitializeTimeoutSeconds == nil {
		return defaultInitializeTimeout
	}
	return time.Duration(*s.InitializeTimeoutSeconds * float64(time.Second))
}

// parseSettings decodes and checks the harness settings.
func parseSettings(h *contract.AgentHarnessConfig) (Settings, error) {
	var s Settings
	if err := adapterkit.DecodeSettings(h, &s); err != nil {
		return s, err
	}
	if s.PermissionMode == "" {
		s.PermissionMode = PermissionDefault
	}
	switch s.PermissionMode {
	case PermissionDefault, PermissionAcceptEdits, PermissionBypass, PermissionPlan, PermissionDontAsk, PermissionAuto:
	default:
		return s, fmt.Errorf("settings.permission_mode: unknown mode %q", s.PermissionMode)
	}
	for i, src := range s.SettingSources {
		switch src {
		case SourceUser, SourceProject, SourceLocal:
		default:
			return s, fmt.Errorf("settings.setting_sources[%d]: unknown source %q (want user, project or local)", i, src)
		}
		if slices.Index(s.SettingSources, src) != i {
			return s, fmt.Errorf("settings.setting_sources[%d]: %q is listed twice", i, src)
		}
	}
	if s.MaxBudgetUSD != nil && !(*s.MaxBudgetUSD > 0) {
		return s, fmt.Errorf("settings.max_budget_usd: must be greater than 0")
	}
	if s.MaxRetries != nil && (*s.MaxRetries < 0 || *s.MaxRetries > 100) {
		return s, fmt.Errorf("settings.max_retries: must be 0 to 100")
	}
	switch s.Effort {
	case "", "low", "medium", "high", "xhigh", "max":
	default:
		return s, fmt.Errorf("settings.effort: unknown level %q", s.Effort)
	}
	for k := range s.Env {
		if !isEnvName(k) {
			return s, fmt.Errorf("settings.env: %q is not an environment variable name", k)
		}
	}
	if t := s.InitializeTimeoutSeconds; t != nil && (!(*t > 0) || *t > 90) {
		return s, fmt.Errorf("settings.initialize_timeout_seconds: must be greater than 0 and at most 90")
	}
	return s, nil
}

func isEnvName(s string) bool {
	for i, r := range s {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return s != ""
}
