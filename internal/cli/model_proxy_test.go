package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/internal/modelproxy"
	"github.com/fabric-runtime/fabric/modelstub"
)

// TestModelProxy runs `fabric model proxy` in process in front of a real
// modelstub that requires the real key: it prints each grant once, then
// the serving line; a granted placeholder reaches the upstream with the
// real key, another is refused; at exit it prints the usage.
func TestModelProxy(t *testing.T) {
	const keyEnv = "FABRIC_TEST_PROXY_KEY"
	key := "sk-proxy-cli-" + strings.Repeat("7", 24)
	modelproxy.RecordForAudit(key)
	t.Setenv(keyEnv, key)
	stub := modelstub.New(nil, modelstub.WithExpectKey(key))
	defer stub.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outR, outW := io.Pipe()
	var stderr lockedBuffer
	exit := make(chan int, 1)
	go func() {
		exit <- Run(ctx, []string{"model", "proxy",
			"--route", "chat=openai-chat-completions," + stub.OpenAIBaseURL() + ",pinned",
			"--route", "claude=anthropic-messages," + stub.AnthropicBaseURL(),
			"--credential-env", "chat=" + keyEnv, "--credential-env", "claude=" + keyEnv,
			"--grant", "chat:a1", "--grant", "claude:a2"},
			Stdio{In: strings.NewReader(""), Out: outW, Err: &stderr})
		outW.Close()
	}()
	lines := make(chan string, 8)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	next := func() map[string]any {
		t.Helper()
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("output ended: %s", stderr.String())
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(line), &v); err != nil {
				t.Fatalf("not a JSON line: %v", err)
			}
			return v
		case <-time.After(10 * time.Second):
			t.Fatal("no line")
		}
		return nil
	}
	grants := map[string]map[string]any{}
	for range 2 {
		g := next()
		grants[g["route"].(string)] = g
	}
	serving := next()
	url, _ := serving["url"].(string)
	if serving["status"] != "serving" || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("serving line: %v", serving)
	}
	chat, claude := grants["chat"], grants["claude"]
	if chat["agent"] != "a1" || chat["base_url"] != url+"/r/chat/v1" || claude["agent"] != "a2" || claude["base_url"] != url+"/r/claude" {
		t.Fatalf("grant lines: chat %v %v, claude %v %v", chat["agent"], chat["base_url"], claude["agent"], claude["base_url"])
	}
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	ask := func(target, hdr, value, body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, target, strings.NewReader(body))
		req.Header.Set(hdr, value)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	chatBody := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	if code, body := ask(chat["base_url"].(string)+"/chat/completions", "Authorization", "Bearer "+chat["placeholder"].(string), chatBody); code != 200 || !strings.Contains(body, `"model":"pinned"`) {
		t.Fatalf("chat: %d", code)
	}
	if code, _ := ask(claude["base_url"].(string)+"/v1/messages", "x-api-key", claude["placeholder"].(string), `{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`); code != 200 {
		t.Fatalf("claude: %d", code)
	}
	// a2's placeholder is for the claude route only.
	if code, _ := ask(chat["base_url"].(string)+"/chat/completions", "Authorization", "Bearer "+claude["placeholder"].(string), chatBody); code != 401 {
		t.Fatalf("another route's placeholder: %d", code)
	}
	if n := len(stub.Requests()); n != 2 {
		t.Fatalf("%d upstream requests", n)
	}
	cancel()
	stopped := next()
	select {
	case code := <-exit:
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("proxy did not stop when its context ended")
	}
	usage, _ := stopped["usage"].(map[string]any)
	a1, _ := usage["chat"].(map[string]any)["a1"].(map[string]any)
	if stopped["status"] != "stopped" || a1["requests"] != 1.0 || a1["output_tokens"] == 0.0 {
		t.Fatalf("stopped line: %v", stopped)
	}
	logs := stderr.String()
	if !strings.Contains(logs, `"msg":"model proxy request"`) || strings.Contains(logs, key) ||
		strings.Contains(logs, chat["placeholder"].(string)) || strings.Contains(logs, claude["placeholder"].(string)) {
		t.Fatalf("stderr holds a credential or no request log")
	}
}

// TestModelProxyRefusals: bad flags are usage errors that name the flag.
func TestModelProxyRefusals(t *testing.T) {
	t.Setenv("FABRIC_TEST_EMPTY", "")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--route", "r=openai-chat-completions,http://x/v1", "--listen", "0.0.0.0:0"}, ExitUsage, "not a loopback address"},
		{nil, ExitUsage, "at least one --route"},
		{[]string{"--route", "r=gemini,http://x"}, ExitUsage, `api "gemini"`},
		{[]string{"--route", "r=openai-chat-completions"}, ExitUsage, "want NAME=API,BASE_URL"},
		{[]string{"--route", "r=openai-chat-completions,http://x/v1", "--route", "r=openai-chat-completions,http://y/v1"}, ExitUsage, "given twice"},
		{[]string{"--route", "r=openai-chat-completions,http://x/v1", "--credential-env", "s=K"}, ExitUsage, "no --route s"},
		{[]string{"--route", "r=openai-chat-completions,http://x/v1", "--credential-env", "r=FABRIC_TEST_EMPTY"}, ExitFailure, "FABRIC_TEST_EMPTY is not set"},
		{[]string{"--route", "r=openai-chat-completions,http://x/v1", "--grant", "s:a"}, ExitUsage, `no route "s"`},
		{[]string{"--route", "r=openai-chat-completions,http://x/v1", "--grant", "r"}, ExitUsage, "want ROUTE:AGENT"},
	} {
		var out, errOut strings.Builder
		code := Run(context.Background(), append([]string{"model", "proxy"}, c.args...), Stdio{In: strings.NewReader(""), Out: &out, Err: &errOut})
		if code != c.code || !strings.Contains(out.String()+errOut.String(), c.want) {
			t.Errorf("%v: exit %d, output %s %s; want %d and %q", c.args, code, out.String(), errOut.String(), c.code, c.want)
		}
	}
}
