package modelstub

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestWriteError: each API's own error shape, the status text by default.
func TestWriteError(t *testing.T) {
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
		w := httptest.NewRecorder()
		WriteError(w, c.api, http.StatusUnauthorized, "")
		if w.Code != http.StatusUnauthorized || w.Body.String() != c.want || w.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %s, want %s", c.api, w.Code, w.Body, c.want)
		}
	}
}
