package codex

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit"
)

type testHandler struct {
	mu       sync.Mutex
	notified []string
}

func (h *testHandler) notify(method string, params json.RawMessage) {
	h.mu.Lock()
	h.notified = append(h.notified, method+" "+string(params))
	h.mu.Unlock()
}

func (h *testHandler) request(method string, params json.RawMessage) (any, *rpcError) {
	if method == "item/commandExecution/requestApproval" {
		return map[string]any{"decision": "decline"}, nil
	}
	return nil, &rpcError{Code: rpcMethodNotFound, Message: "no"}
}

// TestConn drives the client against a scripted peer that writes messages
// the way codex app-server does (no "jsonrpc" member).
func TestConn(t *testing.T) {
	toServer, clientW, clientR, fromServer := stdio(t)
	h := &testHandler{}
	c := newConn(adapterkit.NewLineWriter(clientW, 5*time.Second), clientR, h, slog.New(slog.DiscardHandler))
	go c.run()

	srv := bufio.NewReader(toServer)
	readMsg := func() map[string]any {
		line, err := srv.ReadBytes('\n')
		if err != nil {
			t.Error(err)
			return nil
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Errorf("%q: %v", line, err)
		}
		return m
	}
	send := func(s string) { io.WriteString(fromServer, s+"\n") }

	done := make(chan error, 1)
	var result struct {
		Thread struct{ ID string } `json:"thread"`
	}
	go func() { done <- c.Call(context.Background(), "thread/start", map[string]any{"cwd": "/w"}, &result) }()
	req := readMsg()
	if req["method"] != "thread/start" || req["id"] != float64(1) || req["jsonrpc"] != nil {
		t.Fatalf("request %v", req)
	}
	send(`{"method":"thread/started","params":{"thread":{"id":"th1"}}}`)
	send(`not json`)
	send(`{"id":"srv-1","method":"item/commandExecution/requestApproval","params":{"command":"rm -rf /"}}`)
	if ans := readMsg(); ans["id"] != "srv-1" || ans["result"].(map[string]any)["decision"] != "decline" {
		t.Fatalf("answer %v", ans)
	}
	send(`{"id":7,"method":"attestation/generate","params":{}}`)
	if ans := readMsg(); ans["id"] != float64(7) || ans["error"].(map[string]any)["code"] != float64(rpcMethodNotFound) {
		t.Fatalf("answer %v", ans)
	}
	send(`{"id":99,"result":{}}`) // nobody waits for it
	send(`{"id":1,"result":{"thread":{"id":"th1"}}}`)
	if err := <-done; err != nil || result.Thread.ID != "th1" {
		t.Fatalf("call: %v %+v", err, result)
	}

	go func() { done <- c.Call(context.Background(), "turn/start", nil, nil) }()
	readMsg()
	send(`{"id":2,"error":{"code":-32600,"message":"bad turn"}}`)
	var re *rpcError
	if err := <-done; !errors.As(err, &re) || re.Message != "bad turn" {
		t.Fatalf("error call: %v", err)
	}

	if err := c.Notify("initialized", nil); err != nil {
		t.Fatal(err)
	}
	if n := readMsg(); n["method"] != "initialized" || n["id"] != nil {
		t.Fatalf("notification %v", n)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	read := make(chan struct{})
	go func() { readMsg(); close(read) }()
	if err := c.Call(ctx, "slow", nil, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("timed out call: %v", err)
	}
	<-read

	// End of stream: pending and later calls fail with errConnClosed.
	go func() { done <- c.Call(context.Background(), "never", nil, nil) }()
	readMsg()
	fromServer.Close()
	if err := <-done; !errors.Is(err, errConnClosed) {
		t.Fatalf("pending call at EOF: %v", err)
	}
	<-c.Done()
	if err := c.Call(context.Background(), "after", nil, nil); !errors.Is(err, errConnClosed) {
		t.Fatalf("call after EOF: %v", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.notified) != 1 || h.notified[0] != `thread/started {"thread":{"id":"th1"}}` {
		t.Errorf("notifications %q", h.notified)
	}
	toServer.Close()
}

// TestConnWriteTimesOut: a codex that stops reading its input (stuck, or
// its stdin pipe full) must not hang a call forever; the write is bounded.
func TestConnWriteTimesOut(t *testing.T) {
	// toServer stays open and is never read: the pipe fills up.
	toServer, clientW, clientR, fromServer := stdio(t)
	defer fromServer.Close()
	c := newConn(adapterkit.NewLineWriter(clientW, 50*time.Millisecond), clientR, &testHandler{}, slog.New(slog.DiscardHandler))
	go c.run()
	defer c.CloseWrite()
	big := map[string]string{"text": string(make([]byte, 1<<20))} // more than a pipe holds
	done := make(chan error, 1)
	go func() { done <- c.Call(context.Background(), "turn/start", big, nil) }()
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("Call = %v, want the write's deadline error", err)
		}
	case <-time.After(10 * time.Second):
		toServer.Close() // frees the stuck write, so the test can end
		t.Fatal("Call to a codex that does not read its input still waits after 10 s")
	}
	toServer.Close()
}

// stdio returns the two OS pipes between the client and a scripted codex
// (OS pipes buffer like codex's stdio does): what the client writes
// arrives on toServer, and what is written to fromServer the client reads.
func stdio(t *testing.T) (toServer, clientW, clientR, fromServer *os.File) {
	t.Helper()
	toServer, clientW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	clientR, fromServer, err = os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	return toServer, clientW, clientR, fromServer
}
