package service

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/runtime"
)

// Error codes (stable; docs/services.md).
const (
	CodeInterfacesUnsupported = "service_interfaces_unsupported" // CapabilityError
	CodeServiceUnsupported    = "service_unsupported"            // CapabilityError
	CodeProtocolUnsupported   = "service_protocol_unsupported"   // CapabilityError
	CodeAdapterMismatch       = "service_adapter_mismatch"       // CapabilityError
	CodeUnknownServiceType    = "unknown_service_type"           // ConfigError
	CodeInvalidReference      = "invalid_service_reference"      // ConfigError
	CodeCredentialValue       = "service_credential_value"       // ConfigError (reference) / RuntimeError (adapter report)
	CodeInvalidEnvName        = "invalid_env_name"               // ConfigError
	CodeCredentialEnvMissing  = "service_credential_env_missing" // ConfigError
	CodeInUse                 = "service_in_use"                 // StateError
	CodeReleased              = "service_released"               // StateError
	CodeFailed                = "service_failed"                 // StateError
	CodeHandleMismatch        = "service_handle_mismatch"        // StateError
)

// InterfacesPath is the config path services reject.
const InterfacesPath = "harness.settings.interfaces"

// RejectInterfaces fails when cfg enables harness interfaces, which
// services do not run (the interfaces contract defers service-bound
// interfaces). The SDK calls it once, before planning or starting
// anything, for every path that prepares, attaches or binds a service;
// Prepare, Attach and Acquire take it as done.
func RejectInterfaces(cfg *contract.FabricConfig, stage string) error {
	if cfg == nil || cfg.Harness == nil {
		return nil
	}
	if _, ok := cfg.Harness.Settings["interfaces"]; !ok {
		return nil
	}
	return &contract.CapabilityError{Failure: contract.Failure{
		Stage: stage, Code: CodeInterfacesUnsupported, Path: InterfacesPath,
		Message: "services do not run harness interfaces; remove harness.settings.interfaces or start a runtime without a service",
	}}
}

// CheckAdapter fails unless the plan's adapter provides services: its
// descriptor declares capabilities.service and its host speaks protocol
// v2, which carries the service methods.
func CheckAdapter(p *contract.RunPlan, stage string) error {
	if err := runtime.CheckPlan(p, stage); err != nil {
		return err
	}
	d := &p.AdapterDescriptor.Descriptor
	if !d.Capabilities.Service {
		return capErr(stage, CodeServiceUnsupported, "harness.adapter_id", fmt.Sprintf("adapter %s does not declare capabilities.service", d.AdapterID), d.AdapterID)
	}
	if p.HostProtocol != contract.HostProtocolV2 {
		return capErr(stage, CodeProtocolUnsupported, "harness.adapter_id", fmt.Sprintf("services need host protocol %s; adapter %s speaks %q", contract.HostProtocolV2, d.AdapterID, p.HostProtocol), d.AdapterID)
	}
	return nil
}

func capErr(stage, code, path, msg, adapterID string) error {
	return &contract.CapabilityError{Failure: contract.Failure{Stage: stage, Code: code, Path: path, Message: msg, Metadata: map[string]any{"adapter_id": adapterID}}}
}

func configErr(code, path, msg string) error {
	return &contract.ConfigError{Failure: contract.Failure{Stage: contract.StagePrepare, Code: code, Path: path, Message: msg}}
}

// ServiceTypesKey is the descriptor's capabilities.metadata key listing
// the service types the adapter provides, the default first.
const ServiceTypesKey = "service_types"

// ServiceTypes lists the service types a descriptor provides: its
// capabilities.metadata.service_types, else one type named after the
// adapter.
func ServiceTypes(d *contract.AdapterDescriptor) []string {
	var out []string
	if list, ok := d.Capabilities.Metadata[ServiceTypesKey].([]any); ok {
		for _, v := range list {
			if s, ok := v.(string); ok && s != "" {
				out = append(out, s)
			}
		}
	}
	if len(out) == 0 {
		out = []string{d.AdapterID}
	}
	return out
}

var envNamePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// credentialWords mark a connection key whose value would be a credential.
var credentialWords = []string{"token", "secret", "password", "passwd", "passphrase", "credential", "api_key", "apikey", "private_key", "authorization", "bearer", "cookie"}

// referenceSuffixes mark keys whose values name or locate a credential
// without being one.
var referenceSuffixes = []string{"_env", "_url", "_uri", "_path", "_file", "_type", "_id", "_name", "_header"}

// isCredentialKey reports whether a connection key would hold a
// credential value.
func isCredentialKey(k string) bool {
	l := strings.ToLower(k)
	for _, s := range referenceSuffixes {
		if strings.HasSuffix(l, s) {
			return false
		}
	}
	for _, w := range credentialWords {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// credentialRefs walks a connection and returns its credential references
// (path -> variable name, for every key ending in _env) and the first
// problem: a key that would hold a credential value, a URL with a
// password, a bearer value, or an _env value that is no variable name.
func credentialRefs(conn map[string]any, prefix string) (map[string]string, *contract.Failure) {
	refs := map[string]string{}
	var walk func(v any, path string) *contract.Failure
	walk = func(v any, path string) *contract.Failure {
		switch v := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				p := path + "." + k
				e := v[k]
				if strings.HasSuffix(strings.ToLower(k), "_env") {
					name, ok := e.(string)
					if !ok || !envNamePattern().MatchString(name) {
						return &contract.Failure{Code: CodeInvalidEnvName, Path: p, Message: "a credential reference must be an environment variable name"}
					}
					refs[p] = name
					continue
				}
				if s, ok := e.(string); ok && s != "" && isCredentialKey(k) {
					return &contract.Failure{Code: CodeCredentialValue, Path: p, Message: fmt.Sprintf("%q would hold a credential value; name the environment variable that holds it instead (for example %s_env)", k, k)}
				}
				if f := walk(e, p); f != nil {
					return f
				}
			}
		case []any:
			for i, e := range v {
				if f := walk(e, fmt.Sprintf("%s[%d]", path, i)); f != nil {
					return f
				}
			}
		case string:
			if looksLikeCredential(v) {
				return &contract.Failure{Code: CodeCredentialValue, Path: path, Message: "the value carries a credential (a URL with a password or a bearer value)"}
			}
		}
		return nil
	}
	if f := walk(conn, prefix); f != nil {
		return nil, f
	}
	return refs, nil
}

func looksLikeCredential(s string) bool {
	l := strings.ToLower(strings.TrimSpace(s))
	if strings.HasPrefix(l, "bearer ") || strings.HasPrefix(l, "basic ") {
		return true
	}
	if strings.Contains(s, "://") {
		if u, err := url.Parse(s); err == nil && u.User != nil {
			if _, ok := u.User.Password(); ok {
				return true
			}
		}
	}
	return false
}

// containsValue reports whether a string in v (keys included) contains
// one of secrets.
func containsValue(v any, secrets []string) bool {
	switch v := v.(type) {
	case string:
		for _, s := range secrets {
			if s != "" && strings.Contains(v, s) {
				return true
			}
		}
	case map[string]any:
		for k, e := range v {
			if containsValue(k, secrets) || containsValue(e, secrets) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if containsValue(e, secrets) {
				return true
			}
		}
	}
	return false
}

// ValidateReference checks a caller's ServiceReference against the plan's
// adapter and resolves its credential references: it returns the
// environment variables (name to value) that hosts attached or bound to
// the service receive. lookup reads the caller's environment. The error
// names the offending field and never holds a credential value.
func ValidateReference(p *contract.RunPlan, ref *contract.ServiceReference, lookup func(string) (string, bool)) (map[string]string, error) {
	d := &p.AdapterDescriptor.Descriptor
	switch {
	case strings.TrimSpace(ref.AdapterID) == "":
		return nil, configErr(CodeInvalidReference, "adapter_id", "the service reference names no adapter")
	case ref.AdapterID != d.AdapterID:
		return nil, capErr(contract.StagePrepare, CodeAdapterMismatch, "adapter_id", fmt.Sprintf("the service reference is for adapter %s, the config selects %s", ref.AdapterID, d.AdapterID), d.AdapterID)
	case strings.TrimSpace(ref.ServiceType) == "":
		return nil, configErr(CodeInvalidReference, "service_type", "the service reference names no service type")
	}
	if types := ServiceTypes(d); !slices.Contains(types, ref.ServiceType) {
		return nil, configErr(CodeUnknownServiceType, "service_type", fmt.Sprintf("adapter %s provides no service type %q (known: %s)", d.AdapterID, ref.ServiceType, strings.Join(types, ", ")))
	}
	refs, f := credentialRefs(ref.Connection, "connection")
	if f != nil {
		return nil, configErr(f.Code, f.Path, f.Message)
	}
	if f := metadataCredential(ref.Metadata); f != nil {
		return nil, configErr(f.Code, f.Path, f.Message)
	}
	env := map[string]string{}
	paths := make([]string, 0, len(refs))
	for p := range refs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, path := range paths {
		name := refs[path]
		v, ok := lookup(name)
		if !ok || v == "" {
			return nil, configErr(CodeCredentialEnvMissing, path, fmt.Sprintf("environment variable %s, which the reference names, is not set", name))
		}
		env[name] = v
	}
	secrets := make([]string, 0, len(env))
	for _, v := range env {
		secrets = append(secrets, v)
	}
	// A credential pasted next to its reference under an innocuous key.
	if containsValue(ref.Connection, secrets) || containsValue(ref.Metadata, secrets) {
		return nil, configErr(CodeCredentialValue, "connection", "the reference contains the value of a credential it names")
	}
	return env, nil
}

// metadataCredential applies the connection's key rules to metadata.
func metadataCredential(md map[string]any) *contract.Failure {
	_, f := credentialRefs(md, "metadata")
	return f
}

// checkReport checks what a service host reported: the connection and
// metadata must hold no credential (by key, by shape, or by the value of
// any credential the service or its reference hands out).
func checkReport(conn, md map[string]any, secrets []string) *contract.Failure {
	if _, f := credentialRefs(conn, "connection"); f != nil {
		return f
	}
	if f := metadataCredential(md); f != nil {
		return f
	}
	if containsValue(conn, secrets) || containsValue(md, secrets) {
		return &contract.Failure{Code: CodeCredentialValue, Path: "connection", Message: "the service reported a credential value in its connection or metadata"}
	}
	return nil
}
