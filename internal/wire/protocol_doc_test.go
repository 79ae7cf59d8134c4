package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// transcript is one ```text block of PROTOCOL.md: frames from the core
// ("--> ") and from the host ("<-- ").
type transcript []struct {
	fromCore bool
	frame    string
}

func readTranscripts(t *testing.T) []transcript {
	t.Helper()
	doc, err := os.ReadFile("PROTOCOL.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []transcript
	var cur transcript
	in := false
	for _, line := range strings.Split(string(doc), "\n") {
		switch {
		case line == "```text":
			in, cur = true, nil
		case in && line == "```":
			in = false
			out = append(out, cur)
		case in && (strings.HasPrefix(line, "--> ") || strings.HasPrefix(line, "<-- ")):
			cur = append(cur, struct {
				fromCore bool
				frame    string
			}{strings.HasPrefix(line, "-->"), line[4:]})
		}
	}
	if len(out) != 3 {
		t.Fatalf("PROTOCOL.md has %d transcripts, want 3 (v1, v2, malformed v2)", len(out))
	}
	return out
}

// TestProtocolDocV1 checks that every frame of the v1 transcript is what
// the v1 codec accepts, and that responses echo their request.
func TestProtocolDocV1(t *testing.T) {
	var op string
	for _, f := range readTranscripts(t)[0] {
		if f.fromCore {
			req, err := DecodeV1Request([]byte(f.frame))
			if err != nil {
				t.Fatalf("%s: %v", f.frame, err)
			}
			op = req.Operation
			continue
		}
		resp, err := DecodeV1Response([]byte(f.frame))
		if err != nil {
			t.Fatalf("%s: %v", f.frame, err)
		}
		if resp.Operation != op {
			t.Errorf("response to %s echoes %s", op, resp.Operation)
		}
	}
}

// TestProtocolDocV2 checks the v2 transcript: valid messages, documented
// methods in the right direction, responses to ids the other side sent.
func TestProtocolDocV2(t *testing.T) {
	coreMethods := map[string]bool{"start": true, "invoke": true, "cancel": true, "health": true, "stop": true}
	hostNotes := map[string]bool{"event": true, "log": true}
	sent := map[bool]map[string]bool{true: {}, false: {}} // ids sent by core / host
	for _, f := range readTranscripts(t)[1] {
		var m inMessage
		shape, err := readMessage([]byte(f.frame), &m)
		if err != nil || shape != "" || m.JSONRPC != "2.0" {
			t.Fatalf("%s: %v %s", f.frame, err, shape)
		}
		switch {
		case m.Method != "" && m.ID != nil:
			if !f.fromCore || !coreMethods[m.Method] {
				t.Errorf("undocumented request %s", f.frame)
			}
			sent[f.fromCore][string(m.ID)] = true
		case m.Method != "":
			if f.fromCore || !hostNotes[m.Method] {
				t.Errorf("undocumented notification %s", f.frame)
			}
			var p struct {
				InvocationID string `json:"invocation_id"`
				Event        struct {
					Kind            string `json:"kind"`
					TimestampMillis int64  `json:"timestamp_millis"`
				} `json:"event"`
			}
			if err := json.Unmarshal(m.Params, &p); err != nil || p.InvocationID == "" || p.Event.Kind == "" || p.Event.TimestampMillis == 0 {
				t.Errorf("bad event params %s: %v", m.Params, err)
			}
		default:
			if !sent[!f.fromCore][string(m.ID)] {
				t.Errorf("response to an id the other side never sent: %s", f.frame)
			}
			delete(sent[!f.fromCore], string(m.ID))
		}
	}
	if len(sent[true]) != 0 || len(sent[false]) != 0 {
		t.Errorf("requests without responses: %v", sent)
	}
}

// TestProtocolDocMalformed replays the malformed-input transcript against a
// Conn without a handler and compares its answers with the document.
func TestProtocolDocMalformed(t *testing.T) {
	var in bytes.Buffer
	var want []string
	for _, f := range readTranscripts(t)[2] {
		if f.fromCore {
			in.WriteString(f.frame + "\n")
		} else {
			want = append(want, f.frame)
		}
	}
	var out bytes.Buffer
	err := NewConn(&in, &out, Options{}).Run(context.Background())
	if !errors.Is(err, ErrProtocol) {
		t.Fatalf("Run = %v, want ErrProtocol for the cut-short frame", err)
	}
	got, _ := readAll(NewFrameReader(&out, 0))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("answers\n%s\nPROTOCOL.md says\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
