package modelstub

import (
	"net/http"
	"strconv"
)

// openAIErrorType maps a status to the OpenAI error type and code.
func openAIErrorType(status int) (typ, code string) {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request_error", ""
	case http.StatusUnauthorized:
		return "invalid_request_error", "invalid_api_key"
	case http.StatusForbidden:
		return "permission_error", ""
	case http.StatusNotFound:
		return "invalid_request_error", "not_found"
	case http.StatusRequestEntityTooLarge:
		return "invalid_request_error", "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error", "rate_limit_exceeded"
	case http.StatusServiceUnavailable:
		return "server_error", "overloaded"
	}
	if status >= 500 {
		return "server_error", ""
	}
	return "invalid_request_error", ""
}

// anthropicErrorType maps a status to the Anthropic error type.
func anthropicErrorType(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusUnsupportedMediaType:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case 529, http.StatusServiceUnavailable:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

// geminiStatus maps a status to the google.rpc status name.
func geminiStatus(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType:
		return "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusMethodNotAllowed:
		return "UNIMPLEMENTED"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	case http.StatusGatewayTimeout:
		return "DEADLINE_EXCEEDED"
	}
	if status >= 500 {
		return "INTERNAL"
	}
	return "FAILED_PRECONDITION"
}

// errorBody renders an error in the given API's own format. typ overrides
// the type (OpenAI, Anthropic) or status name (Gemini) when not empty.
func errorBody(api API, status int, message, typ string) any {
	if message == "" {
		message = http.StatusText(status)
		if message == "" {
			message = "error " + strconv.Itoa(status)
		}
	}
	switch api {
	case APIMessages:
		if typ == "" {
			typ = anthropicErrorType(status)
		}
		return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": message}}
	case APIGemini:
		if typ == "" {
			typ = geminiStatus(status)
		}
		return map[string]any{"error": map[string]any{"code": status, "message": message, "status": typ}}
	}
	t, code := openAIErrorType(status)
	if typ != "" {
		// A custom type doubles as the code: OpenAI clients look at both
		// (insufficient_quota, rate_limit_exceeded, …).
		t, code = typ, typ
	}
	var c any
	if code != "" {
		c = code
	}
	return map[string]any{"error": map[string]any{"message": message, "type": t, "param": nil, "code": c}}
}

// WriteError answers with an error in api's own format, the one the stub
// answers errors with: OpenAI's {"error": {"message", "type", "param",
// "code"}}, Anthropic's {"type": "error", "error": {"type", "message"}},
// Gemini's {"error": {"code", "message", "status"}}. An empty message means
// the status text.
func WriteError(w http.ResponseWriter, api API, status int, message string) {
	writeJSON(w, status, errorBody(api, status, message, ""))
}
