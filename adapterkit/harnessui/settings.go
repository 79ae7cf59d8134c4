package harnessui

import (
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"sort"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/lazy"
)

// Deadlines of the contract.
const (
	// DefaultStartupTimeout and MaxStartupTimeout bound
	// startup_timeout_seconds, one deadline for all of start (L3).
	DefaultStartupTimeout = 60 * time.Second
	MaxStartupTimeout     = 75 * time.Second
	// StopGrace is how long Stop waits after SIGTERM before SIGKILL (L5).
	StopGrace = 5 * time.Second
)

// Settings keys of the contract.
const (
	SettingInterfaces     = "interfaces"
	SettingStartupTimeout = "startup_timeout_seconds"
)

// Settings is the part of harness.settings the interfaces contract owns.
type Settings struct {
	// StartupTimeout is startup_timeout_seconds (L3), DefaultStartupTimeout
	// when unset.
	StartupTimeout time.Duration
	// Interfaces holds every interface named under
	// harness.settings.interfaces, enabled or not (S1).
	Interfaces map[string]InterfaceSettings
}

// InterfaceSettings is one entry of harness.settings.interfaces.
type InterfaceSettings struct {
	// Enabled is false only when the entry says enabled: false (S1).
	Enabled bool
	// Port is the exact loopback port of an HTTP interface (S2, L6); zero
	// for a terminal (S4).
	Port int
	// PublicOrigins are extra origins a browser interface accepts (S5).
	PublicOrigins []string
	// Fields are the adapter-specific fields (S6), as decoded JSON values.
	Fields map[string]any
}

// Enabled returns the settings of the named interface when it is present
// and enabled.
func (s Settings) Enabled(name string) (InterfaceSettings, bool) {
	in, ok := s.Interfaces[name]
	return in, ok && in.Enabled
}

// EnabledNames returns the names of the enabled interfaces, sorted.
func (s Settings) EnabledNames() []string {
	var names []string
	for n, in := range s.Interfaces {
		if in.Enabled {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

var originRE = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^https?://[^/?#@\s]+$`) }}

// ParseSettings decodes the contract's part of harness.settings against
// the adapter's interface declarations. Planning has already validated
// the settings against the descriptor's settings_schema (S8); ParseSettings
// checks the same rules again, so an adapter never runs on settings the
// contract forbids, and adds S3 (equal ports), which no schema can express.
// Errors are *Error with CodeInvalid or CodePortsEqual.
func ParseSettings(settings map[string]any, decls []contract.InterfaceDeclaration) (Settings, error) {
	out := Settings{StartupTimeout: DefaultStartupTimeout}
	if v, ok := settings[SettingStartupTimeout]; ok && v != nil {
		n, ok := number(v)
		if !ok || n != math.Trunc(n) || n < 1 || n > MaxStartupTimeout.Seconds() {
			return out, errorf(CodeInvalid, "", nil, "harness.settings.%s must be a whole number of seconds from 1 to %d (L3)", SettingStartupTimeout, int(MaxStartupTimeout.Seconds()))
		}
		out.StartupTimeout = time.Duration(n) * time.Second
	}
	raw, ok := settings[SettingInterfaces]
	if !ok || raw == nil {
		return out, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return out, errorf(CodeInvalid, "", nil, "harness.settings.interfaces must be an object (S1)")
	}
	out.Interfaces = make(map[string]InterfaceSettings, len(m))
	ports := map[int]string{}
	for _, name := range sortedKeys(m) {
		path := "harness.settings.interfaces." + name
		decl, ok := declared(decls, name)
		if !ok {
			return out, errorf(CodeInvalid, name, nil, "%s: the adapter has no interface %q (S7, S8)", path, name)
		}
		entry, ok := m[name].(map[string]any)
		if !ok {
			return out, errorf(CodeInvalid, name, nil, "%s must be an object (S1)", path)
		}
		in := InterfaceSettings{Enabled: true}
		for _, field := range sortedKeys(entry) {
			v := entry[field]
			switch field {
			case "enabled":
				b, ok := v.(bool)
				if !ok {
					return out, errorf(CodeInvalid, name, nil, "%s.enabled must be a boolean (S1)", path)
				}
				in.Enabled = b
			case "port":
				if decl.Kind != contract.InterfaceHTTP {
					return out, errorf(CodeInvalid, name, nil, "%s.port: terminal interfaces take no port (S4)", path)
				}
				n, ok := number(v)
				if !ok || n != math.Trunc(n) || n < 1 || n > 65535 {
					return out, errorf(CodeInvalid, name, nil, "%s.port must be an integer from 1 to 65535 (S2)", path)
				}
				in.Port = int(n)
			case "public_origins":
				if !decl.PublicOrigins {
					return out, errorf(CodeInvalid, name, nil, "%s.public_origins: interface %q does not accept public_origins (S5)", path, name)
				}
				list, ok := v.([]any)
				if !ok {
					return out, errorf(CodeInvalid, name, nil, "%s.public_origins must be a list of origins (S5)", path)
				}
				for i, o := range list {
					s, ok := o.(string)
					if !ok || !originRE.Get().MatchString(s) {
						return out, errorf(CodeInvalid, name, nil, "%s.public_origins[%d] must be an origin scheme://host[:port] (S5)", path, i)
					}
					if slices.Contains(in.PublicOrigins, s) {
						return out, errorf(CodeInvalid, name, nil, "%s.public_origins[%d] repeats %s", path, i, s)
					}
					in.PublicOrigins = append(in.PublicOrigins, s)
				}
			default:
				if _, ok := decl.Settings[field]; !ok {
					return out, errorf(CodeInvalid, name, nil, "%s.%s is not a field of interface %q (S6, S8)", path, field, name)
				}
				if in.Fields == nil {
					in.Fields = map[string]any{}
				}
				in.Fields[field] = v
			}
		}
		if in.Enabled && decl.Kind == contract.InterfaceHTTP {
			if in.Port == 0 {
				return out, errorf(CodeInvalid, name, nil, "%s.port is required: an HTTP interface needs an exact loopback port (S2)", path)
			}
			if other, dup := ports[in.Port]; dup {
				return out, errorf(CodePortsEqual, name, nil, "interfaces %s and %s both use port %d (S3)", other, name, in.Port)
			}
			ports[in.Port] = name
		}
		out.Interfaces[name] = in
	}
	return out, nil
}

func declared(decls []contract.InterfaceDeclaration, name string) (contract.InterfaceDeclaration, bool) {
	for _, d := range decls {
		if d.Name == name {
			return d, true
		}
	}
	return contract.InterfaceDeclaration{}, false
}

// number converts the numeric types JSON and YAML decoders produce.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case uint64:
		return float64(n), true
	case uint32:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
