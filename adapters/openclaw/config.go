package openclaw

import (
	"encoding/json"
	"strconv"
	"strings"
)

// providerID is the name of the model provider the adapter defines in
// OpenClaw's configuration (models.providers.fabric).
const providerID = "fabric"

// keyEnv is the private variable that carries the model key into the
// Gateway's environment, and only there; the configuration references it
// as ${FABRIC_OPENCLAW_MODEL_KEY} (OpenClaw substitutes it when it loads the
// file), so the key is never written to disk (C1).
const keyEnv = "FABRIC_OPENCLAW_MODEL_KEY"

// gatewayConfig is everything the generated openclaw.json depends on.
type gatewayConfig struct {
	Port      int
	AgentID   string
	Model     model
	Workspace string // the agent's working directory (agents.defaults.cwd)
	LogFile   string
	// Dashboard turns the Control UI on; AllowedOrigins are the
	// public_origins added to the loopback origins (S5).
	Dashboard      bool
	AllowedOrigins []string
}

// Build returns the Gateway's configuration (JSON, which OpenClaw reads as
// JSON5). The Gateway's token is not in it: it comes from
// OPENCLAW_GATEWAY_TOKEN in the Gateway's environment.
func (c gatewayConfig) build() ([]byte, error) {
	ref := c.Model.Name
	model := map[string]any{
		"id": c.Model.Name, "name": c.Model.Name, "reasoning": false, "input": []string{"text"},
		"contextWindow": c.Model.ContextWindow, "maxTokens": c.Model.MaxTokens,
	}
	controlUI := map[string]any{"enabled": c.Dashboard}
	if c.Dashboard {
		origins := []string{
			"http://127.0.0.1:" + strconv.Itoa(c.Port),
			"http://localhost:" + strconv.Itoa(c.Port),
		}
		origins = append(origins, c.AllowedOrigins...)
		controlUI["allowedOrigins"] = origins
		// Fetching favicons and link previews reaches arbitrary hosts.
		controlUI["automaticallyFetchFavicons"] = false
	}
	doc := map[string]any{
		"gateway": map[string]any{
			"mode":      "local",
			"port":      c.Port,
			"bind":      "loopback",
			"auth":      map[string]any{"mode": "token"},
			"controlUi": controlUI,
			// The operator terminal is a host shell: off.
			"terminal":  map[string]any{"enabled": false},
			"cliAgents": map[string]any{"enabled": false},
			"tailscale": map[string]any{"mode": "off"},
			// Configuration is FabricConfig's, regenerated at every start:
			// edits (through the Control UI or by the agent) are not applied
			// to the running Gateway (C1).
			"reload": map[string]any{"mode": "off"},
			"http": map[string]any{"endpoints": map[string]any{
				"chatCompletions": map[string]any{"enabled": true},
				"responses":       map[string]any{"enabled": false},
			}},
		},
		"update":    map[string]any{"checkOnStart": false, "auto": map[string]any{"enabled": false}},
		"telemetry": map[string]any{"enabled": false},
		"discovery": map[string]any{"mdns": map[string]any{"mode": "off"}},
		"browser":   map[string]any{"enabled": false},
		"plugins":   map[string]any{"enabled": false},
		"cron":      map[string]any{"enabled": false},
		"logging":   map[string]any{"file": c.LogFile},
		"agents": map[string]any{
			"defaults": map[string]any{
				"model":         map[string]any{"primary": providerID + "/" + ref, "fallbacks": []string{}},
				"utilityModel":  providerID + "/" + ref,
				"cwd":           c.Workspace,
				"skipBootstrap": true,
			},
			"entries": map[string]any{
				c.AgentID: map[string]any{"model": providerID + "/" + ref},
			},
		},
		"models": map[string]any{
			"mode":           "replace",
			"catalogRefresh": map[string]any{"enabled": false},
			"providers": map[string]any{
				providerID: map[string]any{
					"baseUrl": strings.TrimRight(c.Model.BaseURL, "/"),
					"apiKey":  "${" + keyEnv + "}",
					"api":     c.Model.API,
					"models":  []any{model},
				},
			},
		},
	}
	return json.MarshalIndent(doc, "", "  ")
}
