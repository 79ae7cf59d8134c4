package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	fabric "github.com/fabric-runtime/fabric"
)

// Cursor is where a watcher of an agent's turns is: the runtime it
// watched and the last sequence number it got. Its text form
// "RUNTIME_ID/SEQ" is the SSE event id (so a browser's EventSource sends
// it back as Last-Event-ID when it reconnects) and the after parameter.
type Cursor struct {
	RuntimeID string
	Seq       uint64
}

func (c Cursor) String() string { return c.RuntimeID + "/" + strconv.FormatUint(c.Seq, 10) }

// ParseCursor reads "RUNTIME_ID/SEQ" (or "" for the start).
func ParseCursor(s string) (Cursor, error) {
	if s == "" {
		return Cursor{}, nil
	}
	rid, seq, ok := strings.Cut(s, "/")
	if !ok || len(rid) > 128 || strings.ContainsAny(rid, "/\r\n ") {
		return Cursor{}, fmt.Errorf("cursor %q: want RUNTIME_ID/SEQ", clip(s))
	}
	n, err := strconv.ParseUint(seq, 10, 64)
	if err != nil {
		return Cursor{}, fmt.Errorf("cursor %q: the sequence number: %w", clip(s), err)
	}
	return Cursor{RuntimeID: rid, Seq: n}, nil
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// record is one stream record as the page gets it.
type record struct {
	Seq          uint64         `json:"seq"`
	Dropped      uint64         `json:"dropped,omitempty"`
	RuntimeID    string         `json:"runtime_id"`
	InvocationID string         `json:"invocation_id"`
	Kind         string         `json:"kind"`
	Message      string         `json:"message"`
	AtMillis     int64          `json:"at_millis"`
	Metadata     map[string]any `json:"metadata,omitempty"`
}

// keepAlive is the interval of SSE comments on an idle stream.
const keepAlive = 15 * time.Second

// waitRuntime is how often a watcher of an agent without a runtime
// (restarting, on-demand and idle) looks again.
const waitRuntime = 500 * time.Millisecond

// apiEvents streams the agent's turns as server-sent events, from the
// cursor in Last-Event-ID or ?after=: event "record" for each record (id
// is its cursor), "turn_end" when a turn ended, "runtime" when the agent
// got another runtime (a restart: its records start over at 1), and
// "waiting" while it has none.
func (c *Console) apiEvents(w http.ResponseWriter, r *http.Request) {
	agent := r.PathValue("name")
	// A browser's own reconnect sends Last-Event-ID, which is newer than
	// the after= of the URL it reconnects to.
	from := r.Header.Get("Last-Event-ID")
	if from == "" {
		from = r.URL.Query().Get("after")
	}
	cur, err := ParseCursor(from)
	if err != nil {
		refuse(w, r, http.StatusBadRequest, "invalid_cursor", err.Error())
		return
	}
	known := false
	for _, a := range c.sup.Status().Agents {
		known = known || a.Name == agent
	}
	if !known {
		refuse(w, r, http.StatusNotFound, "no_such_agent", fmt.Sprintf("the deployment has no agent %q", agent))
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		refuse(w, r, http.StatusInternalServerError, "internal", "streaming is not supported")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	ctx := r.Context()
	send := func(event, id string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if id != "" {
			if _, err := fmt.Fprintf(w, "id: %s\n", id); err != nil {
				return err
			}
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return err
		}
		fl.Flush()
		return nil
	}
	_, _ = io.WriteString(w, "retry: 1000\n\n")
	fl.Flush()
	waiting := false
	for ctx.Err() == nil {
		fctx, cancel := context.WithTimeout(ctx, keepAlive)
		st, rid, err := c.sup.Follow(fctx, agent, cur.RuntimeID, cur.Seq)
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, context.DeadlineExceeded):
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
			fl.Flush()
			continue
		case err != nil:
			// No runtime now (restarting, on-demand and idle), or the
			// watched one ended: look again soon.
			if !waiting {
				waiting = true
				if send("waiting", "", map[string]string{"agent": agent, "reason": err.Error()}) != nil {
					return
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(waitRuntime):
			}
			continue
		}
		waiting = false
		if rid != cur.RuntimeID {
			if send("runtime", "", map[string]any{"runtime_id": rid, "previous": cur.RuntimeID}) != nil {
				st.Close()
				return
			}
			cur = Cursor{RuntimeID: rid}
		}
		ok := relay(ctx, st, &cur, send)
		st.Close()
		if !ok {
			return
		}
	}
}

// relay sends one turn's records, then its end; false when the watcher
// is gone.
func relay(ctx context.Context, st *fabric.Stream, cur *Cursor, send func(event, id string, v any) error) bool {
	for {
		rec, err := st.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return false
		}
		cur.Seq = rec.Seq
		ev := rec.Event
		out := record{Seq: rec.Seq, Dropped: rec.Dropped, RuntimeID: cur.RuntimeID, InvocationID: st.InvocationID(),
			Kind: ev.Kind, Message: ev.Message, AtMillis: ev.TimestampMillis, Metadata: ev.Metadata}
		if send("record", cur.String(), out) != nil {
			return false
		}
	}
	res, err := st.Result(ctx)
	if err != nil {
		return false
	}
	end := map[string]any{"invocation_id": st.InvocationID(), "status": res.Status, "runtime_id": cur.RuntimeID}
	if res.Error != nil {
		end["error_code"] = res.Error.Code
	}
	return send("turn_end", cur.String(), end) == nil
}
