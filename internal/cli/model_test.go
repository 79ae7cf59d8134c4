package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestModelServe runs `fabric model serve` in process: it prints the URLs
// once listening, answers per its script, checks the key, and exits 0 when
// its context (SIGINT/SIGTERM in the binary) ends.
func TestModelServe(t *testing.T) {
	const key = "sk-model-serve-secret-42"
	t.Setenv("FABRIC_TEST_STUB_KEY", key)
	script := filepath.Join(t.TempDir(), "script.yaml")
	if err := os.WriteFile(script, []byte("rules:\n  - match: {contains: ping}\n    reply: {text: pong}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outR, outW := io.Pipe()
	var stderr lockedBuffer
	exit := make(chan int, 1)
	go func() {
		exit <- Run(ctx, []string{"model", "serve", "--script", script, "--expect-key-env", "FABRIC_TEST_STUB_KEY"},
			Stdio{In: strings.NewReader(""), Out: outW, Err: &stderr})
		outW.Close()
	}()
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(outR).ReadString('\n')
		lines <- line
		_, _ = io.Copy(io.Discard, outR)
	}()
	var line string
	select {
	case line = <-lines:
	case code := <-exit:
		t.Fatalf("exited %d before listening: %s", code, stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatal("no URL line")
	}
	var info map[string]string
	if err := json.Unmarshal([]byte(line), &info); err != nil {
		t.Fatalf("first line is not JSON: %q", line)
	}
	url := info["url"]
	if !strings.HasPrefix(url, "http://127.0.0.1:") || info["openai_base_url"] != url+"/v1" ||
		info["anthropic_base_url"] != url || info["gemini_base_url"] != url || info["requests_url"] != url+"/_requests" {
		t.Fatalf("info %v", info)
	}
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	ask := func(k string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, info["openai_base_url"]+"/chat/completions",
			strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"ping"}]}`))
		req.Header.Set("Authorization", "Bearer "+k)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := ask(key); code != 200 || !strings.Contains(body, `"content":"pong"`) {
		t.Fatalf("scripted answer: %d %s", code, body)
	}
	if code, _ := ask("wrong"); code != 401 {
		t.Fatalf("wrong key: %d", code)
	}
	resp, err := client.Get(info["requests_url"])
	if err != nil {
		t.Fatal(err)
	}
	recs, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(recs), `"key_ok":false`) || strings.Contains(string(recs), key) {
		t.Fatalf("records: %s", recs)
	}
	cancel()
	select {
	case code := <-exit:
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop when its context ended")
	}
	logs := stderr.String()
	if !strings.Contains(logs, `"msg":"model request"`) || strings.Contains(logs, key) {
		t.Fatalf("stderr: %s", logs)
	}
}

func TestIsLoopbackAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:0": true, "127.0.0.2:8080": true, "[::1]:0": true, "localhost:0": true,
		"0.0.0.0:0": false, ":0": false, "10.0.0.1:80": false, "example.com:80": false, "127.0.0.1": false,
	} {
		if got := isLoopbackAddr(addr); got != want {
			t.Errorf("%s: %v", addr, got)
		}
	}
}
