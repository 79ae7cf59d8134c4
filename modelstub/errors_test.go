package modelstub

import (
	"encoding/json"
	"testing"
)

// TestErrorBody: each API's own error shape, the status text by default.
func TestErrorBody(t *testing.T) {
	cases := []struct {
		api  API
		want string
	}{
		{APIChat, `{"error":{"code":"invalid_api_key","message":"Unauthorized","param":null,"type":"invalid_request_error"}}`},
		{APIResponses, `{"error":{"code":"invalid_api_key","message":"Unauthorized","param":null,"type":"invalid_request_error"}}`},
		{APIMessages, `{"error":{"message":"Unauthorized","type":"authentication_error"},"type":"error"}`},
		{APIGemini, `{"error":{"code":401,"message":"Unauthorized","status":"UNAUTHENTICATED"}}`},
	}
	for _, c := range cases {
		got := ErrorBody(c.api, 401, "")
		if string(got) != c.want || !json.Valid(got) {
			t.Errorf("%s: %s, want %s", c.api, got, c.want)
		}
	}
}
