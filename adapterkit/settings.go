package adapterkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/fabric-runtime/fabric/contract"
)

// DecodeSettings decodes the harness settings of an AgentConfig into dst
// (a pointer to the adapter's settings struct), strictly: a field dst does
// not know is an error. The plan has already validated the settings
// against the descriptor's schema; this is the host's own guard. Absent
// settings leave dst as it is. Errors start with "settings: ".
func DecodeSettings(h *contract.AgentHarnessConfig, dst any) error {
	if h == nil || len(h.Settings) == 0 {
		return nil
	}
	b, err := json.Marshal(h.Settings)
	if err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	return nil
}

// InputText is a request's input as text, as harnesses take it: a string
// as is, nothing as "", anything else as its JSON.
func InputText(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// ModelKey returns the value of the environment variable envName that a
// model's api_key_env names (field is where, for the message: say
// "models.default.api_key_env"). An unset or empty variable is an error
// naming the variable and the field, never a value.
func ModelKey(envName, field string) (string, error) {
	v, ok := os.LookupEnv(envName)
	if !ok || v == "" {
		return "", fmt.Errorf("the environment variable %s (%s) is not set", envName, field)
	}
	return v, nil
}
