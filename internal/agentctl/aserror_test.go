package agentctl

import (
	"errors"
	"fmt"
	"testing"
)

func TestAsError(t *testing.T) {
	own := &Error{Code: CodeRuntimeBusy, Message: "busy"}
	tests := []struct {
		name      string
		err       error
		code, msg string
	}{
		{"its own", own, CodeRuntimeBusy, "busy"},
		{"wrapped", fmt.Errorf("serve: %w", own), CodeRuntimeBusy, "busy"},
		{"other", errors.New("bind: address in use"), CodeSocketUnavailable, "bind: address in use"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := AsError(tc.err, CodeSocketUnavailable)
			if got.Code != tc.code || got.Message != tc.msg {
				t.Fatalf("AsError = %s: %s, want %s: %s", got.Code, got.Message, tc.code, tc.msg)
			}
		})
	}
}
