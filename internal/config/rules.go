package config

import (
	"reflect"

	"github.com/fabric-runtime/fabric/contract"
)

// Rules that the contract's tags cannot express.

// interpolated reports whether ${VAR} is replaced in the named field. As
// upstream, only these MCP server fields are interpolated: url, each
// args element, and the values (not keys) of env and custom_headers.
func interpolated(owner reflect.Type, name string) bool {
	if owner != reflect.TypeFor[contract.MCPServerConfig]() {
		return false
	}
	switch name {
	case "url", "args", "env", "custom_headers":
		return true
	}
	return false
}

// hostPath reports whether the named field holds a file-system path that
// is resolved against base_dir (see resolvePaths for when).
func hostPath(owner reflect.Type, name string) bool {
	switch owner {
	case reflect.TypeFor[contract.SkillsConfig]():
		return name == "paths"
	case reflect.TypeFor[contract.DiscoveryConfig]():
		return name == "local_paths"
	case reflect.TypeFor[contract.RuntimeConfig]():
		return name == "artifacts"
	case reflect.TypeFor[contract.EnvironmentConfig]():
		return name == "workspace" || name == "artifacts"
	}
	return false
}

// freeText reports whether the named field is prose, where "${...}" is
// ordinary text not worth a warning.
func freeText(owner reflect.Type, name string) bool {
	switch owner {
	case reflect.TypeFor[contract.MetadataConfig]():
		return name == "description"
	case reflect.TypeFor[contract.InstructionConfig]():
		return name == "content"
	}
	return false
}

// checkStruct applies the rules that involve several fields of one object.
// obj has been walked: null members are gone and defaults are filled in.
func (w *walker) checkStruct(t reflect.Type, obj *value, path string) {
	if t == reflect.TypeFor[contract.MCPAuthentication]() {
		w.checkServiceAccount(obj, path)
	}
}

// checkServiceAccount requires client_id, client_secret_env and token_url
// for service_account authentication (upstream's oneOf).
func (w *walker) checkServiceAccount(obj *value, path string) {
	typ := obj.get("type")
	if typ == nil || typ.kind != kindString || typ.text != "service_account" {
		return
	}
	for _, name := range []string{"client_id", "client_secret_env", "token_url"} {
		v := obj.get(name)
		switch {
		case v == nil:
			w.rep.failf(CodeMissingField, childPath(path, name), obj.line, "%s is required for service_account authentication", name)
		case v.kind == kindString && name != "client_secret_env" && isBlank(v.text):
			// A blank client_secret_env is already an invalid_env_name.
			w.rep.failf(CodeInvalidValue, childPath(path, name), v.line, "%s must not be blank for service_account authentication", name)
		}
	}
}
