package adaptertest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/modelstub"
)

// probeID is the adapter these tests host: each turn asks the default
// model for the input (at FabricConfig's URL with the key from its
// api_key_env, through the process's proxy settings) and answers with the
// model's reply; the input "elsewhere" asks a host other than loopback.
const probeID = "example.rig-probe"

var probeDescriptor = []byte(`{
  "contract_version": "fabric.adapter/v1alpha2",
  "adapter_id": "` + probeID + `",
  "adapter_kind": "process",
  "runner": {"builtin": "` + probeID + `", "protocol": "fabric.host/v2"},
  "config": {"input": "agent_config", "accepts": ["models", "models.base_url"]},
  "capabilities": {"streaming": false, "cancellation": true}
}`)

func TestMain(m *testing.M) {
	adaptertest.Main(m, adaptertest.Serve(probeID, adapterkit.AdapterFunc(startProbe)))
}

func startProbe(_ context.Context, in adapterkit.StartInput) (adapterkit.Session, error) {
	return probe{in.Config.Models["default"]}, nil
}

type probe struct{ model contract.AgentModel }

func (p probe) Invoke(ctx context.Context, inv adapterkit.Invocation) (contract.AgentRunResult, error) {
	input, _ := inv.Request.Input.(string)
	url := *p.model.BaseURL + "/chat/completions"
	if input == "elsewhere" {
		url = "https://example.invalid/v1/chat/completions"
	}
	body, _ := json.Marshal(map[string]any{"model": p.model.Model, "messages": []any{map[string]any{"role": "user", "content": input}}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return contract.AgentRunResult{}, err
	}
	req.Header.Set("Authorization", "Bearer "+os.Getenv(*p.model.APIKeyEnv))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return contract.AgentRunResult{Status: contract.StatusFailed, Error: &contract.AgentRunError{Code: "model_error", Message: "the model is unreachable"}}, nil
	}
	defer resp.Body.Close()
	var out struct {
		Choices []struct {
			Message struct{ Content string }
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || len(out.Choices) == 0 {
		return contract.AgentRunResult{Status: contract.StatusFailed, Error: &contract.AgentRunError{Code: "model_error", Message: resp.Status}}, nil
	}
	return contract.AgentRunResult{Status: contract.StatusSucceeded, Output: out.Choices[0].Message.Content}, nil
}

func (probe) Health(context.Context, string) (adapterkit.Health, error) {
	return adapterkit.Health{Outcome: contract.OutcomePassed}, nil
}

func (probe) Stop(context.Context) error { return nil }

// A runtime of the probe, hosted by this test binary, reaches the rig's
// endpoint with the rig's key, and the sentinel proxy saw nothing.
func TestRigTurn(t *testing.T) {
	r := adaptertest.New(t, adaptertest.Options{
		Script:      &modelstub.Script{Default: &modelstub.Reply{Text: "4"}},
		Descriptors: map[string][]byte{"probe.fabric-adapter.json": probeDescriptor},
	})
	rt := r.Start(r.Config(adaptertest.Doc{AdapterID: probeID, Model: "m"}))
	res := r.Invoke(t, rt, "What is 2+2?")
	if res.Status != contract.StatusSucceeded || res.Output != "4" {
		t.Fatalf("result %s %v %+v", res.Status, res.Output, res.Error)
	}
	reqs := r.Stub.Requests()
	if len(reqs) != 1 || !reqs[0].KeyOK || reqs[0].Model != "m" {
		t.Errorf("requests %+v", reqs)
	}
	r.CheckOffline()
}

// A host that asks for a host other than loopback reaches the sentinel
// proxy, and CheckOffline fails the test for it.
func TestRigSentinel(t *testing.T) {
	rec := &errorRecorder{TB: t}
	r := adaptertest.New(rec, adaptertest.Options{Descriptors: map[string][]byte{"probe.fabric-adapter.json": probeDescriptor}})
	rt := r.Start(r.Config(adaptertest.Doc{AdapterID: probeID, Model: "m"}))
	if res := r.Invoke(t, rt, "elsewhere"); res.Status != contract.StatusFailed {
		t.Errorf("result %s %v, want failed", res.Status, res.Output)
	}
	if r.Proxy.Hits() != 1 {
		t.Fatalf("the sentinel proxy saw %d connections (%q), want 1", r.Proxy.Hits(), r.Proxy.Requests())
	}
	r.CheckOffline()
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "example.invalid:443") {
		t.Errorf("CheckOffline reported %q, want the connection to example.invalid", rec.errs)
	}
}

// errorRecorder is a test whose errors are recorded instead of reported.
type errorRecorder struct {
	testing.TB
	errs []string
}

func (e *errorRecorder) Errorf(format string, args ...any) {
	e.errs = append(e.errs, fmt.Sprintf(format, args...))
}
