package opencode

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// maxEventBytes bounds one SSE event (a message.updated event carries a
// whole message's metadata, a tool part its output).
const maxEventBytes = 8 << 20

// errEventTooLarge: an SSE event exceeded maxEventBytes.
var errEventTooLarge = errors.New("opencode: SSE event too large")

// sseReader reads the server's /event stream: events separated by blank
// lines, each "data:" line appended to the event's data (joined by "\n"),
// comments (":") and other fields ignored.
type sseReader struct {
	r *bufio.Reader
}

// newSSEReader returns a reader of r.
func newSSEReader(r io.Reader) *sseReader { return &sseReader{r: bufio.NewReaderSize(r, 64<<10)} }

// Next returns the data of the next event that has any; io.EOF at the end
// of the stream.
func (s *sseReader) Next() ([]byte, error) {
	var data []byte
	have := false
	for {
		line, err := s.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) && have {
				return data, nil
			}
			return nil, err
		}
		if len(line) == 0 {
			if have {
				return data, nil
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		if string(field) != "data" {
			continue
		}
		value = bytes.TrimPrefix(value, []byte(" "))
		if have {
			data = append(data, '\n')
		}
		if len(data)+len(value) > maxEventBytes {
			return nil, errEventTooLarge
		}
		data = append(data, value...)
		have = true
	}
}

// readLine reads one line without its line ending (\n, \r\n or \r before
// \n), bounded by maxEventBytes.
func (s *sseReader) readLine() ([]byte, error) {
	var line []byte
	for {
		frag, err := s.r.ReadSlice('\n')
		if len(line)+len(frag) > maxEventBytes+2 {
			return nil, errEventTooLarge
		}
		line = append(line, frag...)
		switch {
		case err == nil:
			line = bytes.TrimSuffix(line[:len(line)-1], []byte("\r"))
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return bytes.TrimSuffix(line, []byte("\r")), nil
		default:
			return nil, err
		}
	}
}

// event is one bus event of OpenCode's /event stream, with the fields the
// adapter reads.
type event struct {
	Type       string          `json:"type"`
	Properties eventProperties `json:"properties"`
}

// eventProperties are the properties of the events the adapter follows.
type eventProperties struct {
	SessionID string `json:"sessionID"`
	// session.status
	Status *struct {
		Type string `json:"type"`
	} `json:"status,omitempty"`
	// message.updated
	Info *messageInfo `json:"info,omitempty"`
	// message.part.updated
	Part *ssePart `json:"part,omitempty"`
	// message.part.delta
	MessageID string `json:"messageID,omitempty"`
	PartID    string `json:"partID,omitempty"`
	Field     string `json:"field,omitempty"`
	Delta     string `json:"delta,omitempty"`
	// session.error
	Error *messageError `json:"error,omitempty"`
}

// messageInfo is a message's metadata.
type messageInfo struct {
	ID       string        `json:"id"`
	Role     string        `json:"role"`
	ParentID string        `json:"parentID,omitempty"`
	Finish   string        `json:"finish,omitempty"`
	Error    *messageError `json:"error,omitempty"`
}

// messageError is OpenCode's error object ({name, data: {message}}).
type messageError struct {
	Name string `json:"name"`
	Data struct {
		Message    string `json:"message,omitempty"`
		StatusCode int    `json:"statusCode,omitempty"`
	} `json:"data"`
}

func (e *messageError) String() string {
	if e == nil {
		return ""
	}
	if e.Data.Message != "" {
		return e.Name + ": " + e.Data.Message
	}
	return e.Name
}

// ssePart is one part of a message (text, tool, step-start, step-finish, ...).
type ssePart struct {
	ID        string     `json:"id"`
	MessageID string     `json:"messageID"`
	SessionID string     `json:"sessionID"`
	Type      string     `json:"type"`
	Text      string     `json:"text,omitempty"`
	Tool      string     `json:"tool,omitempty"`
	CallID    string     `json:"callID,omitempty"`
	State     *toolState `json:"state,omitempty"`
	Reason    string     `json:"reason,omitempty"`
	Tokens    *sseTokens `json:"tokens,omitempty"`
}

// toolState is a tool part's state.
type toolState struct {
	Status string          `json:"status"`
	Input  json.RawMessage `json:"input,omitempty"`
	Output string          `json:"output,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// sseTokens is a step's token usage.
type sseTokens struct {
	Total  int64 `json:"total"`
	Input  int64 `json:"input"`
	Output int64 `json:"output"`
}

// parseEvent decodes one event's data.
func parseEvent(data []byte) (event, error) {
	var e event
	if err := json.Unmarshal(data, &e); err != nil {
		return e, fmt.Errorf("opencode: event: %w", err)
	}
	return e, nil
}
