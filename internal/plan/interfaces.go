package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/fabric-runtime/fabric/contract"
)

// interfacesPath is where a config enables harness interfaces.
const interfacesPath = "harness.settings.interfaces"

// checkInterfaces applies the interfaces contract to harness.settings.interfaces
// from the descriptor alone (S8). A descriptor that declares interfaces
// carries the generated fragment in its settings_schema, whose validation
// (checkSettings) already rejects unknown names and fields; this check
// covers what that cannot: a descriptor that declares no interfaces but
// whose settings_schema would let the key through, and a descriptor whose
// settings_schema lacks the fragment. Equal ports are left to start (S3).
func (r *resolver) checkInterfaces() {
	raw, ok := r.cfg.Harness.Settings["interfaces"]
	if !ok || raw == nil || r.reported(interfacesPath) {
		return
	}
	d := &r.entry.Descriptor
	if len(d.Interfaces) == 0 {
		r.unsupported("interfaces_unsupported", interfacesPath, "the descriptor declares no interfaces")
		return
	}
	m, ok := raw.(map[string]any)
	if !ok {
		r.fail("invalid_settings", interfacesPath, "must be an object of named interfaces (S1)")
		return
	}
	for _, name := range sortedKeys(m) {
		if _, ok := d.Interface(name); !ok {
			names := make([]string, len(d.Interfaces))
			for i, in := range d.Interfaces {
				names[i] = in.Name
			}
			r.unsupported("unknown_interface", interfacesPath+"."+name, fmt.Sprintf("the descriptor declares the interfaces %s", strings.Join(names, ", ")))
		}
	}
	if !r.settingsSchemaHasInterfaces() {
		r.unsupported("interfaces_schema_missing", interfacesPath, "the descriptor declares interfaces but its settings_schema lacks the interfaces fragment, so their fields cannot be checked (S8)")
	}
}

// reported says whether a finding at path, or below it, was recorded.
func (r *resolver) reported(path string) bool {
	for _, err := range r.errs {
		var f *contract.Failure
		if ce, ok := errors.AsType[*contract.ConfigError](err); ok {
			f = &ce.Failure
		} else if ke, ok := errors.AsType[*contract.CapabilityError](err); ok {
			f = &ke.Failure
		}
		if f != nil && (f.Path == path || strings.HasPrefix(f.Path, path+".")) {
			return true
		}
	}
	return false
}

func (r *resolver) settingsSchemaHasInterfaces() bool {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(r.entry.Descriptor.SettingsSchema, &s) != nil {
		return false
	}
	_, ok := s.Properties["interfaces"]
	return ok
}
