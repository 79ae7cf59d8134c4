package conformance

import (
	"encoding/json"
	"maps"
	"sort"
	"strings"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/jsonvalue"
)

// doc is a config fragment in JSON form.
type doc = map[string]any

// merge returns a deep copy of dst with src merged in: objects merge key
// by key, every other value replaces.
func merge(dst, src doc) doc {
	out := clone(dst)
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			if dv, ok := out[k].(map[string]any); ok {
				out[k] = merge(dv, sv)
				continue
			}
		}
		out[k] = jsonvalue.Clone(v)
	}
	return out
}

// clone deep-copies m; a nil m gives an empty doc, which can be written.
func clone(m doc) doc {
	if m == nil {
		return doc{}
	}
	return jsonvalue.CloneObject(m)
}

// object returns m[key] as an object, creating it when absent.
func object(m doc, key string) doc {
	if o, ok := m[key].(map[string]any); ok {
		return o
	}
	o := doc{}
	m[key] = o
	return o
}

// skeleton is the smallest config for the profile's adapter.
func (p *Profile) skeleton() doc {
	d := doc{
		"schema_version": contract.ConfigSchemaVersion,
		"metadata":       doc{"name": "conformance"},
		"runtime":        doc{},
		"harness":        doc{"adapter_id": p.AdapterID},
	}
	if p.Descriptor != "" {
		d["discovery"] = doc{"local_paths": []any{p.Descriptor}}
	}
	return d
}

// config is the base config with the overlays applied in order.
func (p *Profile) config(overlays ...*Overlay) doc {
	d := merge(p.skeleton(), p.Base)
	for _, o := range overlays {
		d = o.apply(d)
	}
	// The harness and its adapter id always stay the profile's.
	object(d, "harness")["adapter_id"] = p.AdapterID
	return d
}

// apply merges the overlay's config and settings into d.
func (o *Overlay) apply(d doc) doc {
	if o == nil {
		return d
	}
	d = merge(d, o.Config)
	if len(o.Settings) > 0 {
		h := object(d, "harness")
		h["settings"] = merge(object(h, "settings"), o.Settings)
	}
	return d
}

// withSecret returns a copy of the overlay whose strings have
// SecretPlaceholder replaced by value.
func (o *Overlay) withSecret(value string) *Overlay {
	if o == nil {
		return nil
	}
	r := strings.NewReplacer(SecretPlaceholder, value)
	out := &Overlay{
		Settings: replaceStrings(o.Settings, r),
		Config:   replaceStrings(o.Config, r),
		Input:    replaceValue(o.Input, r),
	}
	if o.Env != nil {
		out.Env = map[string]string{}
		for k, v := range o.Env {
			out.Env[k] = r.Replace(v)
		}
	}
	return out
}

func replaceStrings(m doc, r *strings.Replacer) doc {
	if m == nil {
		return nil
	}
	return replaceValue(m, r).(map[string]any)
}

func replaceValue(v any, r *strings.Replacer) any {
	switch v := v.(type) {
	case string:
		return r.Replace(v)
	case map[string]any:
		out := make(doc, len(v))
		for k, e := range v {
			out[k] = replaceValue(e, r)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = replaceValue(e, r)
		}
		return out
	}
	return v
}

// modelRole is the role the config selects: "default", else the only one.
func modelRole(d doc) string {
	models, _ := d["models"].(map[string]any)
	if _, ok := models["default"]; ok {
		return "default"
	}
	if len(models) == 1 {
		for k := range models {
			return k
		}
	}
	return ""
}

// withAPIKeyEnv names env as the selected model role's api_key_env.
func withAPIKeyEnv(d doc, env string) doc {
	d = clone(d)
	role := modelRole(d)
	if role == "" {
		return d
	}
	object(object(d, "models"), role)["api_key_env"] = env
	return d
}

// input is the invocation input of an item.
func (p *Profile) input(o *Overlay) any {
	if o != nil && o.Input != nil {
		return o.Input
	}
	if p.Input != nil {
		return p.Input
	}
	return DefaultInput
}

// hostEnv merges the base environment with the profile's, the overlays'
// and extra variables; a nil value in extra removes the variable.
func hostEnv(base []string, p *Profile, extra map[string]*string, overlays ...*Overlay) map[string]string {
	env := map[string]string{}
	for _, kv := range base {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	maps.Copy(env, p.Env)
	for _, o := range overlays {
		if o != nil {
			maps.Copy(env, o.Env)
		}
	}
	for k, v := range extra {
		if v == nil {
			delete(env, k)
		} else {
			env[k] = *v
		}
	}
	return env
}

// environ is env as a sorted KEY=VALUE list.
func environ(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// marshal is JSON of v, or the error text.
func marshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "marshal error: " + err.Error()
	}
	return string(b)
}
