package codex

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"

	"github.com/fabric-runtime/fabric/adapterkit"
)

// maxFrame bounds one message from codex (a turn/completed notification
// carries the turn's items, command output included).
const maxFrame = 64 << 20

// JSON-RPC error codes the client answers server requests with.
const (
	rpcMethodNotFound = -32601
)

// message is one JSON-RPC message as codex app-server writes it: JSON-RPC
// 2.0 without the "jsonrpc" member, one per line.
type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *rpcError       `json:"error,omitempty"`
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string {
	return fmt.Sprintf("codex: jsonrpc error %d: %s", e.Code, e.Message)
}

// errConnClosed reports a call that cannot complete because codex's output
// ended.
var errConnClosed = errors.New("codex: app-server connection closed")

// handler receives what codex sends besides responses. Both methods run on
// the reading goroutine, in arrival order, and must not block for long.
type handler interface {
	notify(method string, params json.RawMessage)
	// request answers a server-to-client request with a result or an error.
	request(method string, params json.RawMessage) (any, *rpcError)
}

type callResult struct {
	result json.RawMessage
	err    error
}

// rpcConn is a JSON-RPC client of codex app-server over its stdio. Calls
// are safe for concurrent use; run reads until the stream ends.
type rpcConn struct {
	w   *adapterkit.LineWriter // codex's stdin, each write bounded
	sc  *bufio.Scanner         // one message a line, at most maxFrame bytes
	h   handler
	log *slog.Logger

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan callResult
	err     error // why reading ended; set before done is closed

	done chan struct{}
}

func newConn(w *adapterkit.LineWriter, r io.Reader, h handler, log *slog.Logger) *rpcConn {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxFrame)
	return &rpcConn{
		w: w, sc: sc, h: h, log: log,
		pending: map[int64]chan callResult{},
		done:    make(chan struct{}),
	}
}

// Done is closed when reading has ended.
func (c *rpcConn) Done() <-chan struct{} { return c.done }

// Err is why reading ended (nil before Done is closed).
func (c *rpcConn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// run reads messages until the stream ends or breaks, then fails the
// pending calls.
func (c *rpcConn) run() {
	for c.sc.Scan() {
		frame := c.sc.Bytes()
		if len(bytes.TrimSpace(frame)) == 0 {
			continue
		}
		var m message
		if jerr := json.Unmarshal(frame, &m); jerr != nil {
			c.log.Warn("codex: dropping a line that is not JSON", "bytes", len(frame))
			continue
		}
		switch {
		case m.Method != "" && len(m.ID) > 0:
			c.answer(m)
		case m.Method != "":
			c.h.notify(m.Method, m.Params)
		case len(m.ID) > 0:
			c.deliver(m)
		}
	}
	err := c.sc.Err()
	if err == nil {
		err = errConnClosed
	}
	c.mu.Lock()
	c.err = err
	pending := c.pending
	c.pending = nil
	c.mu.Unlock()
	for _, ch := range pending {
		ch <- callResult{err: err}
	}
	close(c.done)
}

func (c *rpcConn) answer(m message) {
	result, rerr := c.h.request(m.Method, m.Params)
	var out struct {
		ID     json.RawMessage `json:"id"`
		Result any             `json:"result,omitempty"`
		Error  *rpcError       `json:"error,omitempty"`
	}
	out.ID = m.ID
	if rerr != nil {
		out.Error = rerr
	} else {
		if result == nil {
			result = struct{}{}
		}
		out.Result = result
	}
	if err := c.write(out); err != nil {
		c.log.Warn("codex: could not answer a request", "method", m.Method, "err", err)
	}
}

func (c *rpcConn) deliver(m message) {
	id, err := strconv.ParseInt(string(m.ID), 10, 64)
	if err != nil {
		c.log.Warn("codex: response with an id we never sent", "id", string(m.ID))
		return
	}
	c.mu.Lock()
	ch, ok := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if !ok {
		return // the caller gave up
	}
	if m.Error != nil {
		ch <- callResult{err: m.Error}
		return
	}
	ch <- callResult{result: m.Result}
}

func (c *rpcConn) write(v any) error { return c.w.Send(v) }

// Call sends a request and waits for its response, decoding the result
// into out (when not nil). It gives up when ctx ends or the stream ends.
func (c *rpcConn) Call(ctx context.Context, method string, params, out any) error {
	ch := make(chan callResult, 1)
	c.mu.Lock()
	if c.pending == nil {
		err := c.err
		c.mu.Unlock()
		return fmt.Errorf("codex: %s: %w", method, err)
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		if c.pending != nil {
			delete(c.pending, id)
		}
		c.mu.Unlock()
	}
	req := struct {
		ID     int64  `json:"id"`
		Method string `json:"method"`
		Params any    `json:"params,omitempty"`
	}{id, method, params}
	if err := c.write(req); err != nil {
		forget()
		return fmt.Errorf("codex: %s: %w", method, err)
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return fmt.Errorf("codex: %s: %w", method, r.err)
		}
		if out != nil {
			if err := json.Unmarshal(r.result, out); err != nil {
				return fmt.Errorf("codex: %s: decoding the result: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		forget()
		return fmt.Errorf("codex: %s: %w", method, ctx.Err())
	}
}

// Notify sends a notification.
func (c *rpcConn) Notify(method string, params any) error {
	n := struct {
		Method string `json:"method"`
		Params any    `json:"params,omitempty"`
	}{method, params}
	if err := c.write(n); err != nil {
		return fmt.Errorf("codex: %s: %w", method, err)
	}
	return nil
}

// CloseWrite closes codex's stdin, which makes app-server exit.
func (c *rpcConn) CloseWrite() error { return c.w.Close() }
