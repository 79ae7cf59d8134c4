package service

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
)

// FuzzValidateReference: any reference a caller sends is either refused
// with an error that holds no credential value, or accepted with a
// connection that passes the report check.
func FuzzValidateReference(f *testing.F) {
	for _, s := range []string{
		`{"adapter_id":"a","service_type":"a","connection":{"url":"http://127.0.0.1:1","token_env":"T"}}`,
		`{"adapter_id":"a","service_type":"a","connection":{"token":"zzzzzz"}}`,
		`{"adapter_id":"a","service_type":"a","connection":{"a":[{"password_env":"T"},"Bearer x"]},"metadata":{"k":"zzzzzz"}}`,
		`{"adapter_id":"a","service_type":"a","connection":{"url":"http://u:p@h/"}}`,
	} {
		f.Add([]byte(s))
	}
	d := contract.AdapterDescriptor{AdapterID: "a", Capabilities: contract.RuntimeCapabilities{Service: true}}
	p := &contract.RunPlan{AdapterDescriptor: &contract.ResolvedAdapterDescriptor{Descriptor: d}, HostProtocol: contract.HostProtocolV2}
	const secret = "zzzzzz"
	lookup := func(string) (string, bool) { return secret, true }
	f.Fuzz(func(t *testing.T, data []byte) {
		var ref contract.ServiceReference
		if json.Unmarshal(data, &ref) != nil {
			return
		}
		env, err := ValidateReference(p, &ref, lookup)
		if err != nil {
			// A key is the caller's name for a field, not a value.
			path := ""
			if ce, ok := err.(*contract.ConfigError); ok {
				path = ce.Path
			}
			if strings.Contains(err.Error(), secret) && !strings.Contains(path, secret) {
				t.Fatalf("the error holds the credential: %v", err)
			}
			return
		}
		if f := checkReport(ref.Connection, ref.Metadata, []string{secret}); f != nil && len(env) > 0 {
			t.Fatalf("accepted reference fails the report check: %+v", f)
		}
	})
}
