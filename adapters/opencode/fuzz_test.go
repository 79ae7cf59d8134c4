package opencode

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzSSE feeds arbitrary bytes to the /event decoder and the turn state:
// neither may panic, and the reader must end.
func FuzzSSE(f *testing.F) {
	f.Add([]byte("data: {\"type\":\"server.connected\",\"properties\":{}}\n\n"))
	f.Add([]byte("data: {\"type\":\"message.part.delta\",\"properties\":{\"sessionID\":\"s\",\"messageID\":\"m\",\"partID\":\"p\",\"field\":\"text\",\"delta\":\"x\"}}\r\n\r\n"))
	f.Add([]byte("data: {\"type\":\"message.part.updated\",\"properties\":{\"sessionID\":\"s\",\"part\":{\"id\":\"p\",\"messageID\":\"m\",\"sessionID\":\"s\",\"type\":\"tool\",\"callID\":\"c\",\"state\":{\"status\":\"completed\"}}}}\n\n"))
	f.Add([]byte(": c\ndata:\ndata: {}\n\ndata: {\"type\":\"session.status\",\"properties\":{\"sessionID\":\"s\",\"status\":{\"type\":\"idle\"}}}"))
	f.Add([]byte("\r\r\n\n:\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := newSSEReader(bytes.NewReader(in))
		tr := newTurn("s")
		for range len(in) + 2 {
			data, err := r.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, errEventTooLarge) {
					t.Fatalf("unexpected error %v", err)
				}
				_ = tr.result("succeeded", map[string]any{})
				return
			}
			if ev, err := parseEvent(data); err == nil {
				tr.apply(ev, nil)
			}
		}
		t.Fatal("the reader did not end")
	})
}
