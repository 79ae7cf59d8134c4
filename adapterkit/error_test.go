package adapterkit

import (
	"errors"
	"io/fs"
	"testing"
)

func TestErrorKeepsItsCause(t *testing.T) {
	cause := &fs.PathError{Op: "mkdir", Path: "/x", Err: fs.ErrPermission}
	for _, tc := range []struct {
		name      string
		err       *Error
		wantMsg   string
		wantCause error // nil: none
	}{
		{"Wrap", Wrap("start_failed", cause), "mkdir /x: permission denied", cause},
		{"Wrap nil", Wrap("start_failed", nil), "", nil},
		{"Errorf %w", Errorf("start_failed", "private directories: %w", cause), "private directories: mkdir /x: permission denied", cause},
		{"Errorf %v", Errorf("start_failed", "private directories: %v", cause), "private directories: mkdir /x: permission denied", nil},
		{"Errorf no error", Errorf("bad_config", "model %q unknown", "m"), `model "m" unknown`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err.Code != "start_failed" && tc.err.Code != "bad_config" {
				t.Errorf("code %q", tc.err.Code)
			}
			if tc.err.Message != tc.wantMsg {
				t.Errorf("Message %q, want %q", tc.err.Message, tc.wantMsg)
			}
			if got := tc.err.Error(); got != tc.err.Code+": "+tc.wantMsg {
				t.Errorf("Error() %q", got)
			}
			if got := errors.Unwrap(tc.err); got != tc.wantCause {
				t.Errorf("Unwrap = %v, want %v", got, tc.wantCause)
			}
			if is := errors.Is(tc.err, fs.ErrPermission); is != (tc.wantCause != nil) {
				t.Errorf("errors.Is(err, fs.ErrPermission) = %v", is)
			}
			var pe *fs.PathError
			if as := errors.As(tc.err, &pe); as != (tc.wantCause != nil) {
				t.Errorf("errors.As(err, *fs.PathError) = %v", as)
			}
		})
	}
}

// The core gets the message it got before causes were kept: Err stays in
// the host.
func TestErrorOnTheWireIsItsMessage(t *testing.T) {
	h := &host{log: discardLogger()}
	d := h.adapterFailure("start", Wrap("no_binary", errors.New("codex not found")))
	if d.Code != "no_binary" || d.Message != "codex not found" || d.Stage != "start" {
		t.Errorf("wire error %+v", d)
	}
}
