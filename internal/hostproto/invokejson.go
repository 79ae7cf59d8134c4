package hostproto

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/wire"
)

// The invoke path's two messages, in both directions, without reflection:
// the core encodes InvokeParams and decodes the AgentRunResult, the host
// decodes the invoke payload and encodes the result. Every fast path
// declines (reports false) what it does not handle, an unknown or repeated
// key, a value of an unexpected type, an escaped key, and encoding/json
// then decides, errors included: it stays the reference, and
// invokejson_test.go checks that both agree and that the fields handled
// here are exactly the types' fields. The decoders are given JSON that the
// wire layer has already validated. See docs/design/wire.md for why these
// stay (the v2 invoke budget).

// AppendJSON encodes p as encoding/json does with HTML escaping off, the
// encoding wire.Conn uses (wire.JSONAppender).
func (p *InvokeParams) AppendJSON(dst []byte) ([]byte, error) {
	if b, ok := appendInvokeParams(dst, p, false); ok {
		return b, nil
	}
	return appendJSONNoEscape(dst, p)
}

// MarshalInvokeParams is json.Marshal(p) (v1 sends the payload so).
func MarshalInvokeParams(p *InvokeParams) ([]byte, error) {
	if b, ok := appendInvokeParams(nil, p, true); ok {
		return b, nil
	}
	return json.Marshal(p)
}

// DecodeRunResult is json.Unmarshal(raw, r) for a raw that is one valid
// JSON value.
func DecodeRunResult(raw []byte, r *contract.AgentRunResult) error {
	var fast contract.AgentRunResult
	if fastRunResult(raw, &fast) {
		*r = fast
		return nil
	}
	return json.Unmarshal(raw, r)
}

// MarshalRunResult is json.Marshal(r).
func MarshalRunResult(r *contract.AgentRunResult) ([]byte, error) {
	if b, ok := appendRunResult(nil, r); ok {
		return b, nil
	}
	return json.Marshal(r)
}

// DecodeInvokePayload decodes an invoke payload, which must be one valid
// JSON value, into its two members, leaving a member that is absent or null
// nil (the host tells a missing member from an empty one). It reports false
// for what it leaves to encoding/json.
func DecodeInvokePayload(raw []byte, rc **contract.RuntimeContext, req **contract.AgentRunRequest) bool {
	var p invokeParts
	if !fastInvokePayload(raw, &p) {
		return false
	}
	*rc, *req = p.RuntimeContext, p.Request
	return true
}

// invokeParts is an invoke payload with presence.
type invokeParts struct {
	RuntimeContext *contract.RuntimeContext  `json:"runtime_context"`
	Request        *contract.AgentRunRequest `json:"request"`
}

// appendJSONNoEscape appends v as encoding/json encodes it with HTML
// escaping off.
func appendJSONNoEscape(dst []byte, v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return dst, err
	}
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

// seen records the keys of one object, to send repeated keys (which
// encoding/json merges) to the fallback.
type seen uint32

func (s *seen) first(bit uint) bool {
	if *s&(1<<bit) != 0 {
		return false
	}
	*s |= 1 << bit
	return true
}

// ---- the core's side: result in, params out ----

func fastRunResult(raw []byte, r *contract.AgentRunResult) bool {
	var s seen
	return wire.ObjectMembers(raw, func(key, val []byte) bool {
		switch string(key) {
		case "status":
			return s.first(0) && wire.StringField(val, &r.Status)
		case "output":
			return s.first(1) && wire.ValueField(val, &r.Output)
		case "error":
			if !s.first(2) {
				return false
			}
			if wire.IsNull(val) {
				r.Error = nil
				return true
			}
			r.Error = new(contract.AgentRunError)
			return fastRunError(val, r.Error)
		case "usage":
			if !s.first(3) {
				return false
			}
			if wire.IsNull(val) {
				r.Usage = nil
				return true
			}
			r.Usage = new(contract.RunUsage)
			return fastUsage(val, r.Usage)
		case "artifacts":
			if !s.first(4) {
				return false
			}
			if wire.IsNull(val) {
				r.Artifacts = nil
				return true
			}
			r.Artifacts = []contract.AgentArtifact{}
			return wire.ArrayElements(val, func(elem []byte) bool {
				var a contract.AgentArtifact
				if !wire.IsNull(elem) && !fastArtifact(elem, &a) {
					return false
				}
				r.Artifacts = append(r.Artifacts, a)
				return true
			})
		case "extensions":
			return s.first(5) && wire.ObjectField(val, &r.Extensions)
		}
		return false
	})
}

func fastRunError(raw []byte, e *contract.AgentRunError) bool {
	var s seen
	return wire.ObjectMembers(raw, func(key, val []byte) bool {
		switch string(key) {
		case "code":
			return s.first(0) && wire.StringField(val, &e.Code)
		case "message":
			return s.first(1) && wire.StringField(val, &e.Message)
		case "retryable":
			return s.first(2) && wire.BoolField(val, &e.Retryable)
		case "extensions":
			return s.first(3) && wire.ObjectField(val, &e.Extensions)
		}
		return false
	})
}

func fastUsage(raw []byte, u *contract.RunUsage) bool {
	var s seen
	return wire.ObjectMembers(raw, func(key, val []byte) bool {
		switch string(key) {
		case "input_tokens":
			return s.first(0) && wire.Uint64PtrField(val, &u.InputTokens)
		case "output_tokens":
			return s.first(1) && wire.Uint64PtrField(val, &u.OutputTokens)
		case "total_tokens":
			return s.first(2) && wire.Uint64PtrField(val, &u.TotalTokens)
		case "cost_usd":
			return s.first(3) && wire.Float64PtrField(val, &u.CostUSD)
		case "extensions":
			return s.first(4) && wire.ObjectField(val, &u.Extensions)
		}
		return false
	})
}

func fastArtifact(raw []byte, a *contract.AgentArtifact) bool {
	var s seen
	return wire.ObjectMembers(raw, func(key, val []byte) bool {
		switch string(key) {
		case "name":
			return s.first(0) && wire.StringField(val, &a.Name)
		case "kind":
			return s.first(1) && wire.StringField(val, &a.Kind)
		case "path":
			return s.first(2) && wire.StringField(val, &a.Path)
		case "media_type":
			return s.first(3) && wire.StringPtrField(val, &a.MediaType)
		case "extensions":
			return s.first(4) && wire.ObjectField(val, &a.Extensions)
		}
		return false
	})
}

// appendInvokeParams appends p exactly as encoding/json encodes it (with or
// without HTML escaping), or reports false if p holds a value it leaves to
// encoding/json (see wire.AppendValue). fastjson_test.go checks both agree
// and that the fields written here are exactly the types' fields.
func appendInvokeParams(dst []byte, p *InvokeParams, esc bool) ([]byte, bool) {
	var ok bool
	dst = append(dst, `{"runtime_context":`...)
	if dst, ok = appendRuntimeContext(dst, &p.RuntimeContext, esc); !ok {
		return dst, false
	}
	dst = append(dst, `,"request":`...)
	if dst, ok = appendRunRequest(dst, &p.Request, esc); !ok {
		return dst, false
	}
	return append(dst, '}'), true
}

func appendRuntimeContext(dst []byte, rc *contract.RuntimeContext, esc bool) ([]byte, bool) {
	var ok bool
	dst = append(dst, `{"runtime_id":`...)
	dst = wire.AppendString(dst, rc.RuntimeID, esc)
	dst = append(dst, `,"invocation_id":`...)
	dst = wire.AppendString(dst, rc.InvocationID, esc)
	dst = append(dst, `,"request_id":`...)
	dst = wire.AppendString(dst, rc.RequestID, esc)
	dst = append(dst, `,"environment":`...)
	if dst, ok = appendEnvironment(dst, &rc.Environment, esc); !ok {
		return dst, false
	}
	dst = append(dst, `,"artifacts":`...)
	// ArtifactManifest.MarshalJSON uses json.Marshal, which escapes HTML
	// whatever the outer encoder does.
	if dst, ok = appendManifest(dst, &rc.Artifacts, true); !ok {
		return dst, false
	}
	if t := rc.Telemetry; t != nil {
		dst = append(dst, `,"telemetry":{"relay_enabled":`...)
		dst = strconv.AppendBool(dst, t.RelayEnabled)
		if t.ConfigPath != nil {
			dst = append(dst, `,"config_path":`...)
			dst = wire.AppendString(dst, *t.ConfigPath, esc)
		}
		if len(t.Env) > 0 {
			dst = append(dst, `,"env":`...)
			dst = wire.AppendStringMap(dst, t.Env, esc)
		}
		if len(t.Metadata) > 0 {
			dst = append(dst, `,"metadata":`...)
			if dst, ok = wire.AppendObject(dst, t.Metadata, esc); !ok {
				return dst, false
			}
		}
		dst = append(dst, '}')
	}
	return append(dst, '}'), true
}

func appendEnvironment(dst []byte, e *contract.EnvironmentHandle, esc bool) ([]byte, bool) {
	var ok bool
	dst = append(dst, `{"environment_id":`...)
	dst = wire.AppendString(dst, e.EnvironmentID, esc)
	dst = append(dst, `,"provider":`...)
	dst = wire.AppendString(dst, e.Provider, esc)
	dst = append(dst, `,"control_location":`...)
	dst = wire.AppendString(dst, e.ControlLocation, esc)
	dst = append(dst, `,"ownership":`...)
	dst = wire.AppendString(dst, e.Ownership, esc)
	if e.Workspace != nil {
		dst = append(dst, `,"workspace":`...)
		dst = wire.AppendString(dst, *e.Workspace, esc)
	}
	if e.Artifacts != nil {
		dst = append(dst, `,"artifacts":`...)
		dst = wire.AppendString(dst, *e.Artifacts, esc)
	}
	if len(e.Env) > 0 {
		dst = append(dst, `,"env":`...)
		dst = wire.AppendStringMap(dst, e.Env, esc)
	}
	if len(e.Connection) > 0 {
		dst = append(dst, `,"connection":`...)
		if dst, ok = wire.AppendObject(dst, e.Connection, esc); !ok {
			return dst, false
		}
	}
	if len(e.Metadata) > 0 {
		dst = append(dst, `,"metadata":`...)
		if dst, ok = wire.AppendObject(dst, e.Metadata, esc); !ok {
			return dst, false
		}
	}
	return append(dst, '}'), true
}

func appendManifest(dst []byte, m *contract.ArtifactManifest, esc bool) ([]byte, bool) {
	dst = append(dst, '{')
	if m.Root != nil {
		dst = append(dst, `"root":`...)
		dst = wire.AppendString(dst, *m.Root, esc)
		dst = append(dst, ',')
	}
	dst = append(dst, `"artifacts":[`...)
	for i := range m.Artifacts {
		a := &m.Artifacts[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"name":`...)
		dst = wire.AppendString(dst, a.Name, esc)
		dst = append(dst, `,"kind":`...)
		dst = wire.AppendString(dst, a.Kind, esc)
		dst = append(dst, `,"path":`...)
		dst = wire.AppendString(dst, a.Path, esc)
		if a.MediaType != nil {
			dst = append(dst, `,"media_type":`...)
			dst = wire.AppendString(dst, *a.MediaType, esc)
		}
		if len(a.Metadata) > 0 {
			var ok bool
			dst = append(dst, `,"metadata":`...)
			if dst, ok = wire.AppendObject(dst, a.Metadata, esc); !ok {
				return dst, false
			}
		}
		dst = append(dst, '}')
	}
	return append(dst, "]}"...), true
}

func appendRunRequest(dst []byte, r *contract.AgentRunRequest, esc bool) ([]byte, bool) {
	var ok bool
	dst = append(dst, `{"input":`...)
	if dst, ok = wire.AppendValue(dst, r.Input, esc); !ok {
		return dst, false
	}
	if len(r.Context) > 0 {
		dst = append(dst, `,"context":`...)
		if dst, ok = wire.AppendObject(dst, r.Context, esc); !ok {
			return dst, false
		}
	}
	if len(r.Extensions) > 0 {
		dst = append(dst, `,"extensions":`...)
		if dst, ok = wire.AppendObject(dst, r.Extensions, esc); !ok {
			return dst, false
		}
	}
	if r.RelaySessionRoot != nil {
		dst = append(dst, `,"relay_session_root":`...)
		dst = wire.AppendString(dst, *r.RelaySessionRoot, esc)
	}
	return append(dst, '}'), true
}

// ---- the host's side: payload in, result out ----

func fastInvokePayload(raw []byte, p *invokeParts) bool {
	var s seen
	return wire.ObjectMembers(raw, func(key, val []byte) bool {
		switch string(key) {
		case "runtime_context":
			if !s.first(0) {
				return false
			}
			if wire.IsNull(val) {
				p.RuntimeContext = nil
				return true
			}
			p.RuntimeContext = new(contract.RuntimeContext)
			return fastRuntimeContext(val, p.RuntimeContext)
		case "request":
			if !s.first(1) {
				return false
			}
			if wire.IsNull(val) {
				p.Request = nil
				return true
			}
			p.Request = new(contract.AgentRunRequest)
			return fastRunRequest(val, p.Request)
		}
		return false
	})
}

func fastRuntimeContext(raw []byte, rc *contract.RuntimeContext) bool {
	var s seen
	return wire.ObjectMembers(raw, func(key, val []byte) bool {
		switch string(key) {
		case "runtime_id":
			return s.first(0) && wire.StringField(val, &rc.RuntimeID)
		case "invocation_id":
			return s.first(1) && wire.StringField(val, &rc.InvocationID)
		case "request_id":
			return s.first(2) && wire.StringField(val, &rc.RequestID)
		case "environment":
			return s.first(3) && (wire.IsNull(val) || fastEnvironment(val, &rc.Environment))
		case "artifacts":
			return s.first(4) && (wire.IsNull(val) || fastManifest(val, &rc.Artifacts))
		case "telemetry":
			if !s.first(5) {
				return false
			}
			if wire.IsNull(val) {
				rc.Telemetry = nil
				return true
			}
			rc.Telemetry = new(contract.RuntimeTelemetryContext)
			return fastTelemetry(val, rc.Telemetry)
		}
		return false
	})
}

func fastEnvironment(raw []byte, e *contract.EnvironmentHandle) bool {
	var s seen
	return wire.ObjectMembers(raw, func(key, val []byte) bool {
		switch string(key) {
		case "environment_id":
			return s.first(0) && wire.StringField(val, &e.EnvironmentID)
		case "provider":
			return s.first(1) && wire.StringField(val, &e.Provider)
		case "control_location":
			return s.first(2) && wire.StringField(val, &e.ControlLocation)
		case "ownership":
			return s.first(3) && wire.StringField(val, &e.Ownership)
		case "workspace":
			return s.first(4) && wire.StringPtrField(val, &e.Workspace)
		case "artifacts":
			return s.first(5) && wire.StringPtrField(val, &e.Artifacts)
		case "env":
			return s.first(6) && wire.StringMapField(val, &e.Env)
		case "connection":
			return s.first(7) && wire.ObjectField(val, &e.Connection)
		case "metadata":
			return s.first(8) && wire.ObjectField(val, &e.Metadata)
		}
		return false
	})
}

func fastManifest(raw []byte, m *contract.ArtifactManifest) bool {
	var s seen
	return wire.ObjectMembers(raw, func(key, val []byte) bool {
		switch string(key) {
		case "root":
			return s.first(0) && wire.StringPtrField(val, &m.Root)
		case "artifacts":
			if !s.first(1) {
				return false
			}
			if wire.IsNull(val) {
				m.Artifacts = nil
				return true
			}
			m.Artifacts = []contract.ArtifactRef{}
			return wire.ArrayElements(val, func(elem []byte) bool {
				var a contract.ArtifactRef
				if !wire.IsNull(elem) && !fastArtifactRef(elem, &a) {
					return false
				}
				m.Artifacts = append(m.Artifacts, a)
				return true
			})
		}
		return false
	})
}

func fastArtifactRef(raw []byte, a *contract.ArtifactRef) bool {
	var s seen
	return wire.ObjectMembers(raw, func(key, val []byte) bool {
		switch string(key) {
		case "name":
			return s.first(0) && wire.StringField(val, &a.Name)
		case "kind":
			return s.first(1) && wire.StringField(val, &a.Kind)
		case "path":
			return s.first(2) && wire.StringField(val, &a.Path)
		case "media_type":
			return s.first(3) && wire.StringPtrField(val, &a.MediaType)
		case "metadata":
			return s.first(4) && wire.ObjectField(val, &a.Metadata)
		}
		return false
	})
}

func fastTelemetry(raw []byte, t *contract.RuntimeTelemetryContext) bool {
	var s seen
	return wire.ObjectMembers(raw, func(key, val []byte) bool {
		switch string(key) {
		case "relay_enabled":
			return s.first(0) && wire.BoolField(val, &t.RelayEnabled)
		case "config_path":
			return s.first(1) && wire.StringPtrField(val, &t.ConfigPath)
		case "env":
			return s.first(2) && wire.StringMapField(val, &t.Env)
		case "metadata":
			return s.first(3) && wire.ObjectField(val, &t.Metadata)
		}
		return false
	})
}

func fastRunRequest(raw []byte, r *contract.AgentRunRequest) bool {
	var s seen
	return wire.ObjectMembers(raw, func(key, val []byte) bool {
		switch string(key) {
		case "input":
			return s.first(0) && wire.ValueField(val, &r.Input)
		case "context":
			return s.first(1) && wire.ObjectField(val, &r.Context)
		case "extensions":
			return s.first(2) && wire.ObjectField(val, &r.Extensions)
		case "relay_session_root":
			return s.first(3) && wire.StringPtrField(val, &r.RelaySessionRoot)
		}
		return false
	})
}

// appendRunResult appends r exactly as json.Marshal encodes it, or reports
// false if r holds a value it leaves to encoding/json (see
// wire.AppendValue). fastdecode_test.go checks both agree and that the
// fields written here are exactly the types' fields.
func appendRunResult(dst []byte, r *contract.AgentRunResult) ([]byte, bool) {
	const esc = true // as json.Marshal
	var ok bool
	dst = append(dst, `{"status":`...)
	dst = wire.AppendString(dst, r.Status, esc)
	dst = append(dst, `,"output":`...)
	if dst, ok = wire.AppendValue(dst, r.Output, esc); !ok {
		return dst, false
	}
	if e := r.Error; e != nil {
		dst = append(dst, `,"error":{"code":`...)
		dst = wire.AppendString(dst, e.Code, esc)
		dst = append(dst, `,"message":`...)
		dst = wire.AppendString(dst, e.Message, esc)
		dst = append(dst, `,"retryable":`...)
		dst = strconv.AppendBool(dst, e.Retryable)
		if len(e.Extensions) > 0 {
			dst = append(dst, `,"extensions":`...)
			if dst, ok = wire.AppendObject(dst, e.Extensions, esc); !ok {
				return dst, false
			}
		}
		dst = append(dst, '}')
	}
	if u := r.Usage; u != nil {
		dst = append(dst, `,"usage":{`...)
		sep := false
		field := func(name string) {
			if sep {
				dst = append(dst, ',')
			}
			sep = true
			dst = append(dst, name...)
		}
		if u.InputTokens != nil {
			field(`"input_tokens":`)
			dst = strconv.AppendUint(dst, *u.InputTokens, 10)
		}
		if u.OutputTokens != nil {
			field(`"output_tokens":`)
			dst = strconv.AppendUint(dst, *u.OutputTokens, 10)
		}
		if u.TotalTokens != nil {
			field(`"total_tokens":`)
			dst = strconv.AppendUint(dst, *u.TotalTokens, 10)
		}
		if u.CostUSD != nil {
			field(`"cost_usd":`)
			if dst, ok = wire.AppendFloat(dst, *u.CostUSD); !ok {
				return dst, false
			}
		}
		if len(u.Extensions) > 0 {
			field(`"extensions":`)
			if dst, ok = wire.AppendObject(dst, u.Extensions, esc); !ok {
				return dst, false
			}
		}
		dst = append(dst, '}')
	}
	if len(r.Artifacts) > 0 {
		dst = append(dst, `,"artifacts":[`...)
		for i := range r.Artifacts {
			a := &r.Artifacts[i]
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"name":`...)
			dst = wire.AppendString(dst, a.Name, esc)
			dst = append(dst, `,"kind":`...)
			dst = wire.AppendString(dst, a.Kind, esc)
			dst = append(dst, `,"path":`...)
			dst = wire.AppendString(dst, a.Path, esc)
			if a.MediaType != nil {
				dst = append(dst, `,"media_type":`...)
				dst = wire.AppendString(dst, *a.MediaType, esc)
			}
			if len(a.Extensions) > 0 {
				dst = append(dst, `,"extensions":`...)
				if dst, ok = wire.AppendObject(dst, a.Extensions, esc); !ok {
					return dst, false
				}
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if len(r.Extensions) > 0 {
		dst = append(dst, `,"extensions":`...)
		if dst, ok = wire.AppendObject(dst, r.Extensions, esc); !ok {
			return dst, false
		}
	}
	return append(dst, '}'), true
}
