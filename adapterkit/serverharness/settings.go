package serverharness

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
	"github.com/fabric-runtime/fabric/contract"
)

// The settings harnessui decodes.
var interfaceKeys = []string{"startup_timeout_seconds", "interfaces"}

// DecodeSettings decodes harness settings: their interface part
// (startup_timeout_seconds and interfaces) against the interface
// declarations of the adapter's descriptor, then the rest strictly into
// own, a pointer to a struct of the adapter's own settings (as
// adapterkit.DecodeSettings: a field own does not know is an error).
// Interface errors are *harnessui.Error.
func DecodeSettings(h *contract.AgentHarnessConfig, descriptor []byte, own any) (harnessui.Settings, error) {
	is, err := interfaces(h, descriptor)
	if err != nil || h == nil {
		return is, err
	}
	rest := make(map[string]any, len(h.Settings))
	for k, v := range h.Settings {
		if !slices.Contains(interfaceKeys, k) {
			rest[k] = v
		}
	}
	return is, adapterkit.DecodeSettings(&contract.AgentHarnessConfig{Settings: rest}, own)
}

// interfaces decodes the interface part of harness settings. Its errors
// are *harnessui.Error, but for a descriptor that does not parse.
func interfaces(h *contract.AgentHarnessConfig, descriptor []byte) (harnessui.Settings, error) {
	var d struct {
		Interfaces []contract.InterfaceDeclaration `json:"interfaces"`
	}
	if err := json.Unmarshal(descriptor, &d); err != nil {
		return harnessui.Settings{}, fmt.Errorf("descriptor: %w", err)
	}
	var raw map[string]any
	if h != nil {
		raw = h.Settings
	}
	return harnessui.ParseSettings(raw, d.Interfaces)
}

// SettingsError is Start's error for settings that do not parse: an
// interface error as it is, anything else under code.
func SettingsError(code string, err error) error {
	if ie, ok := errors.AsType[*harnessui.Error](err); ok {
		return ie
	}
	return adapterkit.Wrap(code, err)
}

// Model is a model role resolved to the endpoint a server harness reaches.
type Model struct {
	Role          string
	Provider      string
	Name          string // the model's name at the provider (models.<role>.model)
	BaseURL       string // never empty
	APIKeyEnv     string // never empty
	Temperature   *float64
	ContextWindow int
	MaxTokens     int
}

// ModelRules are what an adapter adds to the model rule.
type ModelRules struct {
	// Adapter is the adapter's name in messages ("Example").
	Adapter string
	// KeyReader is who reads the key in messages ("the server").
	KeyReader string
	// BaseURLs are the default endpoints of the providers that need no
	// base_url.
	BaseURLs map[string]string
	// Setting takes a model setting other than context_window and
	// max_tokens; it returns false for one it does not know. Nil: none.
	Setting func(k string, v any) (bool, error)
}

// SelectModel picks the model role ("default", else the only one, by
// adapterkit.Model) and resolves its endpoint, its key's variable and its
// limits (128,000 tokens of context and 8,192 of output unless the model's
// settings say otherwise).
func SelectModel(models map[string]contract.AgentModel, r ModelRules) (Model, error) {
	role, m, err := adapterkit.Model(contract.AgentConfig{Models: models})
	if err != nil {
		return Model{}, err
	}
	out := Model{Role: role, Provider: m.Provider, Name: m.Model, Temperature: m.Temperature, ContextWindow: 128000, MaxTokens: 8192}
	if strings.TrimSpace(m.Model) == "" {
		return out, fmt.Errorf("models.%s.model is empty", role)
	}
	if m.APIKeyEnv == nil || *m.APIKeyEnv == "" {
		return out, fmt.Errorf("models.%s.api_key_env is required: %s gets the key from that variable (C1)", role, r.KeyReader)
	}
	out.APIKeyEnv = *m.APIKeyEnv
	switch {
	case m.BaseURL != nil && *m.BaseURL != "":
		out.BaseURL = *m.BaseURL
	case r.BaseURLs[m.Provider] != "":
		out.BaseURL = r.BaseURLs[m.Provider]
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
			continue
		}
		known := false
		if r.Setting != nil {
			if known, err = r.Setting(k, v); err != nil {
				return out, fmt.Errorf("models.%s.settings.%s %w", role, k, err)
			}
		}
		if !known {
			return out, fmt.Errorf("models.%s.settings.%s is not a model setting of the %s adapter", role, k, r.Adapter)
		}
	}
	return out, nil
}
