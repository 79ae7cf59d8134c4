package contract_test

import (
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
)

func TestClassifyModelError(t *testing.T) {
	yes, no := true, false
	d := &contract.AdapterDescriptor{ModelErrors: []contract.ModelErrorRule{
		{Code: "model_error", Message: `\b404\b|model .*not found`, Normalized: contract.ModelNotFound},
		{Code: "model_error", Message: `insufficient_quota`, Normalized: contract.ModelQuotaExhausted, Retryable: &no},
		{Code: "model_rate_limited", Normalized: contract.ModelRateLimited},
		{Message: `context (window|length)`, Normalized: contract.ModelContextExceeded},
		{Code: "model_error", Normalized: contract.ModelServerError, Retryable: &yes},
	}}
	tests := []struct {
		name       string
		info       *contract.ErrorInfo
		want       string
		retryable  bool
		classified bool
	}{
		{"nil", nil, "", false, false},
		{"code and message", &contract.ErrorInfo{Code: "model_error", Message: "unexpected status 404 Not Found"}, contract.ModelNotFound, false, true},
		{"message case-insensitive", &contract.ErrorInfo{Code: "model_error", Message: "The Model gpt-x was NOT FOUND"}, contract.ModelNotFound, false, true},
		{"rule retryable overrides", &contract.ErrorInfo{Code: "model_error", Message: "code insufficient_quota", Retryable: true}, contract.ModelQuotaExhausted, false, true},
		{"error's own retryable", &contract.ErrorInfo{Code: "model_rate_limited", Message: "slow down", Retryable: true}, contract.ModelRateLimited, true, true},
		{"message only, any code", &contract.ErrorInfo{Code: "harness_x", Message: "exceeds the context window"}, contract.ModelContextExceeded, false, true},
		{"first match wins over a later catch-all", &contract.ErrorInfo{Code: "model_error", Message: "500 Internal"}, contract.ModelServerError, true, true},
		{"no rule", &contract.ErrorInfo{Code: "harness_crashed", Message: "boom"}, "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, retryable, ok := d.ClassifyModelError(tt.info)
			if got != tt.want || retryable != tt.retryable || ok != tt.classified {
				t.Errorf("got %q %v %v, want %q %v %v", got, retryable, ok, tt.want, tt.retryable, tt.classified)
			}
		})
	}
	var none *contract.AdapterDescriptor
	if _, _, ok := none.ClassifyModelError(&contract.ErrorInfo{Code: "x"}); ok {
		t.Error("a nil descriptor classified an error")
	}
}

func TestValidateModelErrors(t *testing.T) {
	tests := []struct {
		rules []contract.ModelErrorRule
		err   string // "" = valid
	}{
		{nil, ""},
		{[]contract.ModelErrorRule{{Code: "a", Normalized: contract.ModelAuth}, {Message: "(?s)x.y", Normalized: contract.ModelUnreachable}}, ""},
		{[]contract.ModelErrorRule{{Code: "a", Normalized: contract.ModelAuth}, {Normalized: contract.ModelAuth}}, "model_errors[1]: needs a code or a message"},
		{[]contract.ModelErrorRule{{Code: "a", Normalized: "model_error"}}, "model_errors[0].normalized"},
		{[]contract.ModelErrorRule{{Message: "a(", Normalized: contract.ModelAuth}}, "model_errors[0].message: invalid regular expression"},
	}
	for i, tt := range tests {
		d := &contract.AdapterDescriptor{ModelErrors: tt.rules}
		err := d.ValidateModelErrors()
		if (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%d: err %v, want %q", i, err, tt.err)
		}
	}
	// An invalid rule that slipped past validation never matches.
	d := &contract.AdapterDescriptor{ModelErrors: []contract.ModelErrorRule{{Message: "a(", Normalized: contract.ModelAuth}}}
	if _, _, ok := d.ClassifyModelError(&contract.ErrorInfo{Code: "x", Message: "a("}); ok {
		t.Error("an invalid rule matched")
	}
}
