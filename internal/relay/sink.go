package relay

import (
	"fmt"
	"net/url"

	"github.com/fabric-runtime/fabric/contract"
)

// Sink names and values upstream NeMo Fabric uses for its ATOF stream sink.
const (
	// SinkName is the reserved name of the injected ATOF stream sink. A
	// sink of the same name in the user's Relay config is replaced.
	SinkName = "nemo-fabric-stream"
	// SinkTransport makes Relay keep one long-lived chunked NDJSON upload.
	SinkTransport = "ndjson"
	// SinkTimeoutMillis is Relay's per-sink I/O timeout (its default).
	SinkTimeoutMillis = 3000
	// ObservabilityVersion is the Relay observability component version
	// written when the Relay config has no observability block.
	ObservabilityVersion = 4

	// EnvToken names the adapter-host environment variable that carries
	// the complete Authorization header value when the listener requires
	// a token. The sink refers to it through header_env; the value never
	// appears in a document.
	EnvToken = "FABRIC_RELAY_STREAM_AUTHORIZATION"
	// EnvStreamingHost is upstream's variable for the listener's bind
	// address. NewListener does not read it; a caller that honours it
	// passes its value as Options.Host.
	EnvStreamingHost = "NEMO_FABRIC_STREAMING_HOST"

	// RuntimeQuery is the URL query parameter that routes a runtime's
	// records to its turns.
	RuntimeQuery = "runtime"
)

// SinkConfig is what one runtime's adapter host needs so that the
// harness's Relay posts ATOF records to the listener.
type SinkConfig struct {
	// Sink is the ATOF stream sink object to place in
	// relay.observability.atof.sinks (InjectSink does that).
	Sink map[string]any
	// Env is added to the adapter host's environment when it is spawned
	// (Relay resolves header_env when it activates). Empty unless the
	// listener requires a token; it holds a secret: never log it or write
	// it into a document.
	Env map[string]string
}

// SinkConfig returns the sink for runtimeID's Relay: the listener's URL
// with the runtime in its query, so that records reach that runtime's
// turns even when several runtimes share the listener.
func (l *Listener) SinkConfig(runtimeID string) SinkConfig {
	u := l.url
	if runtimeID != "" {
		u += "?" + url.Values{RuntimeQuery: {runtimeID}}.Encode()
	}
	sink := map[string]any{
		"type":              "stream",
		"name":              SinkName,
		"url":               u,
		"transport":         SinkTransport,
		"timeout_millis":    SinkTimeoutMillis,
		"field_name_policy": "preserve",
	}
	sc := SinkConfig{Sink: sink}
	if l.token != "" {
		sink["header_env"] = map[string]any{"authorization": EnvToken}
		sc.Env = map[string]string{EnvToken: "Bearer " + l.token}
	}
	return sc
}

// InjectSink returns a deep copy of a Relay config (the FabricConfig.relay
// block, which the plan carries as TelemetryPlan.RelayConfig) with sink in
// observability.atof.sinks, as upstream does: a sink with the same name is
// replaced and other sinks are kept when ATOF is enabled; when ATOF is
// absent or disabled it becomes {enabled: true, sinks: [sink]}. A missing
// observability block is created with version ObservabilityVersion. relay
// itself is never modified. A block of the wrong JSON type is an error,
// never silently replaced.
func InjectSink(relay map[string]any, sink map[string]any) (map[string]any, error) {
	name, _ := sink["name"].(string)
	if sink == nil || name == "" {
		return nil, fmt.Errorf("relay: the sink to inject needs a name")
	}
	out := deepCopyMap(relay)
	if out == nil {
		out = map[string]any{}
	}
	var obs map[string]any
	switch v := out["observability"].(type) {
	case nil:
		obs = map[string]any{"version": ObservabilityVersion}
	case map[string]any:
		obs = v
	default:
		return nil, fmt.Errorf("relay.observability must be an object, got %T", v)
	}
	var atof map[string]any
	switch v := obs["atof"].(type) {
	case nil:
	case map[string]any:
		atof = v
	default:
		return nil, fmt.Errorf("relay.observability.atof must be an object, got %T", v)
	}
	sinks := []any{}
	if enabled, _ := atof["enabled"].(bool); enabled {
		switch v := atof["sinks"].(type) {
		case nil:
		case []any:
			for _, s := range v {
				if m, ok := s.(map[string]any); ok && m["name"] == any(name) {
					continue
				}
				sinks = append(sinks, s)
			}
		default:
			return nil, fmt.Errorf("relay.observability.atof.sinks must be an array, got %T", v)
		}
	} else {
		atof = map[string]any{"enabled": true}
	}
	atof["sinks"] = append(sinks, deepCopyMap(sink))
	obs["atof"] = atof
	out["observability"] = obs
	return out, nil
}

// WithSink returns a copy of a telemetry plan whose RelayConfig carries
// the sink (see InjectSink). The plan must have Relay enabled: streaming
// ATOF records needs telemetry.providers.relay, as upstream requires.
func WithSink(tp *contract.TelemetryPlan, sc SinkConfig) (*contract.TelemetryPlan, error) {
	if tp == nil || !tp.RelayEnabled {
		return nil, fmt.Errorf("relay: streaming ATOF records needs telemetry.providers.relay")
	}
	cfg, err := InjectSink(tp.RelayConfig, sc.Sink)
	if err != nil {
		return nil, err
	}
	out := *tp
	out.Providers = append([]string(nil), tp.Providers...)
	out.AdapterOutputs = append([]string(nil), tp.AdapterOutputs...)
	out.NativeConfig = deepCopyMap(tp.NativeConfig)
	out.RelayConfig = cfg
	return &out, nil
}

func deepCopyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = deepCopy(v)
	}
	return out
}

func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return deepCopyMap(v)
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = deepCopy(x)
		}
		return out
	case map[string]string:
		out := make(map[string]string, len(v))
		for k, x := range v {
			out[k] = x
		}
		return out
	case []string:
		return append([]string(nil), v...)
	}
	return v
}
