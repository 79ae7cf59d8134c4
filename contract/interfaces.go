package contract

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Harness interfaces (dashboards, APIs, terminal UIs) are the interfaces
// contract's discovery side: a descriptor declares the interfaces its
// adapter supports (AdapterDescriptor.Interfaces), a config enables them
// under harness.settings.interfaces, and a runtime handle reports the ones
// running (RuntimeHandle.Interfaces), never a credential value.

// Interface kinds.
const (
	InterfaceHTTP     = "http"
	InterfaceTerminal = "terminal"
)

// Interface credential schemes: how a client presents the interface's
// credential. Every scheme but CredentialNone means the adapter generates a
// token at each start and stores it in a file (interfaces contract T1, P3).
const (
	CredentialNone   = "none"
	CredentialBearer = "bearer"
	CredentialBasic  = "basic"
	CredentialHeader = "header"
	CredentialCookie = "cookie"
)

// Interface lifecycles: what an interface lives with. The P0 contract
// runs interfaces with managed runtimes only (L1).
const (
	InterfaceLifecycleRuntime = "runtime"
	InterfaceLifecycleService = "service"
)

// InterfaceDeclaration is one interface an adapter supports, declared in
// its descriptor's "interfaces" list. The descriptor's settings_schema
// carries the matching harness.settings.interfaces fragment, generated from
// these declarations (S8; see adapterkit/harnessui).
type InterfaceDeclaration struct {
	// Name is the key under harness.settings.interfaces and the file name
	// under the runtime's interfaces directory (P3, P4).
	Name string `json:"name" jsonschema:"pattern=^[a-z][a-z0-9_-]*$,maxLength=63"`
	// Kind is http (a loopback port, S2) or terminal (a launcher a person
	// runs, no port, S4).
	Kind string `json:"kind" jsonschema:"enum=http,enum=terminal"`
	// Description is shown in the generated settings schema.
	Description string `json:"description,omitempty"`
	// Browser marks an interface meant for a web browser.
	Browser bool `json:"browser,omitempty"`
	// PublicOrigins marks a browser interface that accepts the
	// public_origins setting (S5).
	PublicOrigins bool `json:"public_origins,omitempty"`
	// Credential is the scheme of the interface's credential; empty means
	// none.
	Credential string `json:"credential,omitempty" jsonschema:"enum=none,enum=bearer,enum=basic,enum=header,enum=cookie"`
	// Lifecycles lists what the interface can live with; empty means
	// runtime only.
	Lifecycles []string `json:"lifecycles,omitempty" jsonschema:"uniqueItems=true,enum=runtime,enum=service"`
	// HealthLevels lists the check levels the interface answers (live,
	// active, ready).
	HealthLevels []string `json:"health_levels,omitempty" jsonschema:"uniqueItems=true,enum=live,enum=active,enum=ready"`
	// Settings are adapter-specific fields of this interface's settings
	// object (S6): field name to JSON Schema. They may not reuse the
	// contract's own field names (enabled, port, public_origins).
	Settings map[string]any `json:"settings,omitempty"`
}

// InterfaceInfo is one enabled interface as a runtime handle reports it:
// where it is and where its credential is stored, never the credential
// itself (T1, P5).
type InterfaceInfo struct {
	Name string `json:"name"`
	Kind string `json:"kind" jsonschema:"enum=http,enum=terminal"`
	// Browser marks an interface meant for a web browser.
	Browser bool `json:"browser,omitempty"`
	// Address, Port and Path locate an HTTP interface on loopback (A1);
	// URL is the three joined, without any credential.
	Address string `json:"address,omitempty"`
	Port    int    `json:"port,omitempty" jsonschema:"minimum=1,maximum=65535"`
	Path    string `json:"path,omitempty"`
	URL     string `json:"url,omitempty"`
	// Credential is the credential's scheme; CredentialFile the absolute
	// path of the owner-only file holding it (P3). Both are empty for an
	// interface without a credential.
	Credential     string `json:"credential,omitempty" jsonschema:"enum=none,enum=bearer,enum=basic,enum=header,enum=cookie"`
	CredentialFile string `json:"credential_file,omitempty"`
	// Argv is the command a person runs to open a terminal interface: its
	// launcher (P4), which carries the adapter's configuration.
	Argv []string `json:"argv,omitempty"`
	// MarkerFile is the terminal interface's marker (P4): it exists while
	// the runtime runs.
	MarkerFile string `json:"marker_file,omitempty"`
}

var interfaceNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_-]*$`) })

// ReservedInterfaceFields are the field names every interface's settings
// object may carry by contract; declared Settings may not reuse them (a new
// slice at each call).
func ReservedInterfaceFields() []string { return []string{"enabled", "port", "public_origins"} }

// Interface returns the declaration with the given name.
func (d *AdapterDescriptor) Interface(name string) (InterfaceDeclaration, bool) {
	for _, in := range d.Interfaces {
		if in.Name == name {
			return in, true
		}
	}
	return InterfaceDeclaration{}, false
}

// ValidateInterfaceDeclarations checks a descriptor's interface
// declarations: valid unique names, known kinds, schemes and lifecycles,
// public_origins only on browser HTTP interfaces, and no declared setting
// that reuses a contract field. The error names the offending entry as
// "interfaces[i]".
func ValidateInterfaceDeclarations(decls []InterfaceDeclaration) error {
	var errs []error
	seen := map[string]bool{}
	for i, in := range decls {
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("interfaces[%d]: %s", i, fmt.Sprintf(format, args...)))
		}
		switch {
		case !interfaceNameRE().MatchString(in.Name) || len(in.Name) > 63:
			bad("name %q must match %s and be at most 63 bytes", in.Name, interfaceNameRE())
		case seen[in.Name]:
			bad("name %q is declared twice", in.Name)
		}
		seen[in.Name] = true
		if in.Kind != InterfaceHTTP && in.Kind != InterfaceTerminal {
			bad("kind %q is not %s or %s", in.Kind, InterfaceHTTP, InterfaceTerminal)
		}
		switch in.Credential {
		case "", CredentialNone, CredentialBearer, CredentialBasic, CredentialHeader, CredentialCookie:
		default:
			bad("credential %q is not none, bearer, basic, header or cookie", in.Credential)
		}
		for _, l := range in.Lifecycles {
			if l != InterfaceLifecycleRuntime && l != InterfaceLifecycleService {
				bad("lifecycle %q is not runtime or service", l)
			}
		}
		for _, l := range in.HealthLevels {
			if l != LevelLive && l != LevelActive && l != LevelReady {
				bad("health level %q is not live, active or ready", l)
			}
		}
		if in.PublicOrigins && (!in.Browser || in.Kind != InterfaceHTTP) {
			bad("public_origins is for browser HTTP interfaces only (S5)")
		}
		if in.Browser && in.Kind != InterfaceHTTP {
			bad("a browser interface must be of kind http")
		}
		for field := range in.Settings {
			if reserved := ReservedInterfaceFields(); slices.Contains(reserved, field) {
				bad("settings.%s reuses a contract field (%s)", field, strings.Join(reserved, ", "))
			}
		}
	}
	return errors.Join(errs...)
}
