package host

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostproto"
	"github.com/fabric-runtime/fabric/internal/wire"
)

// decodeResult decodes the output of an operation, which the channel has
// validated as JSON, into result. The AgentRunResult of every invoke takes
// a fast path without reflection; anything it does not handle (an unknown
// or repeated key, a value of an unexpected type) goes to encoding/json,
// which stays the reference, errors included. fastjson_test.go checks that
// both agree and that the fields handled here are exactly the types'
// fields.
func decodeResult(raw []byte, result any) error {
	if r, ok := result.(*contract.AgentRunResult); ok {
		var fast contract.AgentRunResult
		if fastRunResult(raw, &fast) {
			*r = fast
			return nil
		}
	}
	return json.Unmarshal(raw, result)
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

// invokeParamsJSON encodes the params of every invoke without reflection
// (wire.JSONAppender), as encoding/json would with HTML escaping off (the
// encoding wire.Conn uses).
type invokeParamsJSON struct{ p *hostproto.InvokeParams }

func (j invokeParamsJSON) AppendJSON(dst []byte) ([]byte, error) {
	if b, ok := appendInvokeParams(dst, j.p, false); ok {
		return b, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(j.p); err != nil {
		return dst, err
	}
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

// marshalParams is json.Marshal(params), without reflection for an
// *InvokeParams.
func marshalParams(params any) ([]byte, error) {
	if p, ok := params.(*hostproto.InvokeParams); ok {
		if b, ok := appendInvokeParams(nil, p, true); ok {
			return b, nil
		}
	}
	return json.Marshal(params)
}

// appendInvokeParams appends p exactly as encoding/json encodes it (with or
// without HTML escaping), or reports false if p holds a value it leaves to
// encoding/json (see wire.AppendValue). fastjson_test.go checks both agree
// and that the fields written here are exactly the types' fields.
func appendInvokeParams(dst []byte, p *hostproto.InvokeParams, esc bool) ([]byte, bool) {
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
