package scripted

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/fabric-runtime/fabric/contract"
)

// relaySinkName is the ATOF stream sink Fabric injects into a Relay
// config (upstream's name).
const relaySinkName = "nemo-fabric-stream"

// relayEmitter plays a harness's Relay plugin: it posts ATOF records for
// each turn to the stream sink Fabric placed in the runtime's Relay
// config, so the listener and its correlation run end to end.
type relayEmitter struct {
	url    string
	header http.Header
	client *http.Client
}

// newRelayEmitter finds the injected sink in the telemetry plan; nil when
// Relay is off or the sink is absent.
func newRelayEmitter(tp *contract.TelemetryPlan) (*relayEmitter, error) {
	if tp == nil || !tp.RelayEnabled {
		return nil, nil
	}
	obs, _ := tp.RelayConfig["observability"].(map[string]any)
	atof, _ := obs["atof"].(map[string]any)
	sinks, _ := atof["sinks"].([]any)
	for _, s := range sinks {
		sink, _ := s.(map[string]any)
		if sink["name"] != relaySinkName {
			continue
		}
		e := &relayEmitter{header: http.Header{"Content-Type": {"application/x-ndjson"}}, client: &http.Client{Timeout: 10 * time.Second}}
		e.url, _ = sink["url"].(string)
		if he, ok := sink["header_env"].(map[string]any); ok {
			for name, env := range he {
				if v, ok := os.LookupEnv(fmt.Sprint(env)); ok {
					e.header.Set(name, v)
				}
			}
		}
		if e.url == "" {
			return nil, fmt.Errorf("the %s sink has no url", relaySinkName)
		}
		return e, nil
	}
	return nil, nil
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// postTurn posts one turn's records: a turn scope (start, correlated by
// request id), n marks under it, the scope's end, and stray records that
// belong to no turn.
func (e *relayEmitter) postTurn(ctx context.Context, requestID string, turn, n, stray int) error {
	root := newUUID()
	now := func() string { return time.Now().UTC().Format(time.RFC3339Nano) }
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.Encode(map[string]any{
		"kind": "scope", "scope_category": "start", "atof_version": "0.1", "uuid": root, "parent_uuid": nil,
		"name": fmt.Sprintf("turn %d", turn), "timestamp": now(), "category": "agent",
		"metadata": map[string]any{"nemo_fabric_request_id": requestID, "turn_index": turn},
	})
	for i := range n {
		enc.Encode(map[string]any{
			"kind": "mark", "atof_version": "0.1", "uuid": newUUID(), "parent_uuid": root,
			"name": fmt.Sprintf("step %d", i), "timestamp": now(), "category": "custom",
			"data": map[string]any{"index": i},
		})
	}
	for i := range stray {
		enc.Encode(map[string]any{
			"kind": "mark", "atof_version": "0.1", "uuid": newUUID(), "parent_uuid": "not-a-known-scope-" + newUUID(),
			"name": fmt.Sprintf("stray %d", i), "timestamp": now(), "category": "custom",
		})
	}
	enc.Encode(map[string]any{
		"kind": "scope", "scope_category": "end", "atof_version": "0.1", "uuid": root, "parent_uuid": nil,
		"name": fmt.Sprintf("turn %d", turn), "timestamp": now(), "category": "agent",
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, &body)
	if err != nil {
		return err
	}
	req.Header = e.header.Clone()
	resp, err := e.client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("relay sink answered %s", resp.Status)
	}
	return nil
}
