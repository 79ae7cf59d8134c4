//go:build linux

package deploy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
	"github.com/fabric-runtime/fabric/internal/testsupport/browsertest"
	"github.com/fabric-runtime/fabric/modelstub"
)

// consoleText is the slow streamed answer of the watched turn.
const consoleText = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango"

// TestConsole is the console's acceptance with real parts: a deployment
// of a real Codex agent (with the npm MCP reference server and a brokered
// model route) and a scripted agent, its supervisor's console driven by
// headless Chromium: sign-in from the printed address, both agents with
// their health, a running turn streaming text and a tool call live, a
// forced reconnect without gap or duplicate, a grant used and then
// revoked in the chat panel, and a killed agent seen restarting. The
// console token and every key go to the ledger; none may appear in any
// output.
func TestConsole(t *testing.T) {
	provider := "sk-e2e-console-provider-" + fmt.Sprint(time.Now().UnixNano())
	harnessui.RecordForAudit(provider)
	w := newWorld(t, upstreamKeyEnv+"="+provider)
	needHarness(t, w, "codex", "mcp-server-everything")
	chromium := browsertest.Require(t)
	proxy := adaptertest.NewProxy(t)
	w.env = append(w.env, proxy.Env()...)

	script, err := modelstub.ParseScript(fmt.Appendf(nil, `
rules:
  - match: {contains: CONSOLE-LIVE}
    reply: {tool_call: {tool: mcp__tools__echo, args: {message: ECHO-FOR-THE-CONSOLE}}}
  - match: {contains: CONSOLE-LIVE}
    reply: {text: %q, chunks: 20, interval_ms: 250}
  - match: {contains: CONSOLE-CHAT}
    reply: {tool_call: {tool: mcp__tools__echo, args: {message: ECHO-IN-CHAT}}}
default: {text: "Fabric says four"}
`, consoleText))
	if err != nil {
		t.Fatal(err)
	}
	stub := modelstub.New(script, modelstub.WithExpectKey(provider))
	t.Cleanup(stub.Close)
	port := freePort(t)
	w.write("codex.yaml", codexConfig)
	file := w.write("deploy.yaml", fmt.Sprintf(`schema_version: fabric.deployment/v1alpha1
metadata: {name: cons, uid: 0b6e8a52-3c1d-4e7f-9a2b-5c6d7e8f9a31}
spec:
  supervisor: {kind: process}
  integrations:
%s    gateway: {kind: access, clients: [web]}
  sandboxes:
    - name: main
      workspace: ./work
      agents:
        - name: coder
          config: ./codex.yaml
          integrationRefs: [tools, model, gateway]
%s`, liveIntegrations(port, stub.OpenAIBaseURL()), scriptedWriter("gateway")))
	var ar applyResult
	w.deploy(0, &ar, "apply", file, "--timeout", "3m")
	if ar.Outcome != "succeeded" {
		t.Fatalf("apply = %+v", ar)
	}
	socket := ar.Connection.Socket

	// fabric deploy console: the address, and the token only in the
	// fragment of the sign-in address (its output is never logged here).
	var cons struct {
		URL       string `json:"url"`
		TokenFile string `json:"token_file"`
		SignInURL string `json:"sign_in_url"`
	}
	w.deploy(0, &cons, "console", file, "-o", "json")
	token, ok := strings.CutPrefix(cons.SignInURL, cons.URL+"/#token=")
	if !ok || !strings.HasPrefix(token, "fabc_") {
		t.Fatalf("fabric deploy console printed no sign-in address for %s", cons.URL)
	}
	harnessui.RecordForAudit(token)
	if !strings.HasPrefix(cons.URL, "http://127.0.0.1:") {
		t.Fatalf("console at %s: not loopback", cons.URL)
	}
	if fi, err := os.Stat(cons.TokenFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file %s: %v", cons.TokenFile, err)
	}
	var st status
	w.deploy(0, &st, "status", file, "-o", "json")
	if b, _ := json.Marshal(st); strings.Contains(string(b), token) {
		t.Fatal("status carries the console token")
	}
	o := w.deploy(0, nil, "console", file, "--no-token", "-o", "text")
	if strings.Contains(string(o), token) || !strings.Contains(string(o), cons.URL) {
		t.Fatalf("console --no-token: %q", o)
	}

	// Refused: no token, another origin, another Host.
	get := func(path string, hdr ...string) int {
		req, _ := http.NewRequest("GET", cons.URL+path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			if hdr[i] == "Host" {
				req.Host = hdr[i+1]
			} else {
				req.Header.Set(hdr[i], hdr[i+1])
			}
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		name string
		hdr  []string
		want int
	}{
		{"no token", nil, 401},
		{"the token", []string{"Authorization", "Bearer " + token}, 200},
		{"another origin", []string{"Authorization", "Bearer " + token, "Origin", "http://attacker.example"}, 403},
		{"another Host", []string{"Authorization", "Bearer " + token, "Host", "attacker.example"}, 403},
	} {
		if got := get("/api/status", c.hdr...); got != c.want {
			t.Fatalf("%s: GET /api/status = %d, want %d", c.name, got, c.want)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	b, err := browsertest.Start(ctx, browsertest.Options{Path: chromium, Width: 1360, Height: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	shots := t.TempDir()
	shot := func(name string) {
		p := filepath.Join(shots, name)
		if err := b.Screenshot(20*time.Second, p); err != nil {
			t.Errorf("screenshot %s: %v", name, err)
			return
		}
		browsertest.KeepArtifact(t, p, "console-"+name)
	}
	defer func() {
		if t.Failed() {
			shot("failure.png")
			text, _ := browsertest.Eval[string](b, 5*time.Second, "document.body ? document.body.innerText.slice(0, 3000) : ''")
			t.Logf("page text at failure:\n%s", scrubText(text, token))
		}
	}()
	wait := func(t *testing.T, what string, d time.Duration, expr string) {
		t.Helper()
		if err := b.WaitFor(d, expr); err != nil {
			text, _ := browsertest.Eval[string](b, 5*time.Second, "document.body ? document.body.innerText.slice(0, 4000) : ''")
			recs, _ := browsertest.Eval[string](b, 5*time.Second, "[...document.querySelectorAll('#records li')].slice(-60).map(li => li.dataset.seq + ' ' + li.dataset.kind + ' ' + li.textContent.slice(0, 80)).join('\\n')")
			t.Fatalf("%s: %v\npage:\n%s\nrecords:\n%s", what, err, scrubText(text, token), scrubText(recs, token))
		}
	}
	eval := func(t *testing.T, expr string) string {
		t.Helper()
		v, err := browsertest.Eval[string](b, 10*time.Second, expr)
		if err != nil {
			t.Fatalf("eval %s: %v", expr, err)
		}
		return v
	}

	// Without the fragment: the sign-in page, nothing of the deployment.
	if err := b.Do(20*time.Second, chromedp.Navigate(cons.URL+"/")); err != nil {
		t.Fatal(err)
	}
	wait(t, "the sign-in page", 10*time.Second, `document.body.dataset.page === 'signin' && /fabric deploy console/.test(document.body.innerText)`)
	if strings.Contains(eval(t, `document.body.innerText`), "coder") {
		t.Fatal("the sign-in page shows the deployment")
	}

	t.Run("sign in and see both agents", func(t *testing.T) {
		if err := b.Do(20*time.Second, chromedp.Navigate(cons.SignInURL)); err != nil {
			t.Fatal(err)
		}
		wait(t, "the deployment page", 20*time.Second, `document.body.dataset.page === 'deployment'`)
		if href := eval(t, `location.href`); strings.Contains(href, "token") {
			t.Fatalf("the token stayed in the address bar")
		}
		if c := eval(t, `document.cookie`); c != "" {
			t.Fatalf("the session cookie is readable by scripts: %d bytes", len(c))
		}
		wait(t, "both agents running with their health", 60*time.Second, `['coder','writer'].every(n => {
			const r = document.querySelector('tr[data-agent="'+n+'"]');
			return r && r.dataset.state === 'running' && r.querySelector('[data-field=health]') && /ready · (passed|succeeded|healthy|ok)/.test(r.querySelector('[data-field=health]').textContent);
		})`)
		for _, want := range []string{"integration/tools", "integration/gateway", "sandbox main", "mcp-process"} {
			if !strings.Contains(eval(t, `document.body.innerText`), want) {
				t.Errorf("the deployment page does not show %q", want)
			}
		}
		shot("deployment.png")
	})

	var runtimeBefore string
	t.Run("watch a running turn live, through a forced reconnect", func(t *testing.T) {
		if err := b.Do(20*time.Second, chromedp.Navigate(cons.URL+"/agents/coder")); err != nil {
			t.Fatal(err)
		}
		wait(t, "the live stream", 20*time.Second, `document.querySelector('#live').dataset.stream === 'live'`)
		runtimeBefore = eval(t, `document.querySelector('#agent-status').dataset.runtime`)
		ended := make(chan string, 1)
		go func() {
			o, e, code := w.run(3*time.Minute, "fabric-agent-ctl", "--socket", socket, "invoke", "--agent", "coder", "--input", "Tell me CONSOLE-LIVE")
			var res struct{ Status string }
			_ = json.Unmarshal(o, &res)
			ended <- fmt.Sprintf("exit %d status %s %s", code, res.Status, clipBytes(e))
		}()
		// The tool call and its result, then text, while the turn runs.
		wait(t, "the tool call, live", 90*time.Second, `(() => { const t = document.querySelector('.turn .tool'); return t && t.dataset.status === 'completed' && /ECHO-FOR-THE-CONSOLE/.test(t.textContent); })()`)
		wait(t, "text streaming", 30*time.Second, `(() => { const t = document.querySelector('.turn .text'); return t && t.textContent.length > 0; })()`)
		select {
		case r := <-ended:
			t.Fatalf("the turn ended before the page saw it stream: %s", r)
		default:
		}
		shot("agent-live.png")
		// Forced reconnect: the page drops its stream mid-turn ...
		if err := b.Do(5*time.Second, chromedp.Click(chromedp.CSS("#stream-toggle"))); err != nil {
			t.Fatal(err)
		}
		wait(t, "paused", 5*time.Second, `document.querySelector('#live').dataset.stream === 'paused'`)
		atPause := eval(t, `String(document.querySelectorAll('#records li[data-seq]').length)`)
		// ... the turn goes on without it, to its end ...
		if r := <-ended; !strings.Contains(r, "exit 0 status succeeded") {
			t.Fatalf("the watched turn: %s", r)
		}
		// ... and the page resumes from its last record.
		if err := b.Do(5*time.Second, chromedp.Click(chromedp.CSS("#stream-toggle"))); err != nil {
			t.Fatal(err)
		}
		wait(t, "the turn's end after the reconnect", 30*time.Second, `document.querySelector('.turn').dataset.status === 'succeeded'`)
		if text := eval(t, `document.querySelector('.turn .text').textContent`); text != consoleText {
			t.Fatalf("the page shows %q, want the whole streamed text %q", text, consoleText)
		}
		// Every record once, in order, no gap: sequence numbers.
		check := eval(t, `(() => {
			const s = [...document.querySelectorAll('#records li[data-seq]')].map(li => Number(li.dataset.seq));
			for (let i = 1; i < s.length; i++) if (s[i] !== s[i-1] + 1) return 'at ' + i + ': ' + s[i-1] + ' then ' + s[i];
			if (document.querySelector('#records li.gap')) return 'a gap was reported';
			return 'ok ' + s.length;
		})()`)
		if !strings.HasPrefix(check, "ok ") {
			t.Fatalf("records after the reconnect: %s", check)
		}
		var n, before int
		fmt.Sscan(strings.TrimPrefix(check, "ok "), &n)
		fmt.Sscan(atPause, &before)
		if n <= before {
			t.Fatalf("the reconnect brought nothing: %d records before the pause, %d after", before, n)
		}
		t.Logf("records: %d when paused, %d after the reconnect, contiguous", before, n)
		wait(t, "the turn in the last turns", 10*time.Second, `document.querySelector('#recent-turns tr[data-status=succeeded]')`)
		shot("agent-after-reconnect.png")

		// A client's own reconnect (Last-Event-ID) gets exactly the rest.
		last := eval(t, `document.querySelector('#stream-cursor').textContent`)
		rid, seqText, _ := strings.Cut(last, "/")
		var seq int
		fmt.Sscan(seqText, &seq)
		got := sseFrom(t, cons.URL+"/api/agents/coder/events", token, fmt.Sprintf("%s/%d", rid, seq-3))
		want := []string{fmt.Sprintf("%s/%d", rid, seq-2), fmt.Sprintf("%s/%d", rid, seq-1), fmt.Sprintf("%s/%d", rid, seq), "turn_end"}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("resume with Last-Event-ID %s/%d got %v, want %v", rid, seq-3, got, want)
		}
	})

	t.Run("chat through the gateway, then revoke the grant", func(t *testing.T) {
		if err := b.Do(20*time.Second, chromedp.Navigate(cons.URL+"/access")); err != nil {
			t.Fatal(err)
		}
		wait(t, "the access page", 20*time.Second, `document.body.dataset.page === 'access' && document.querySelector('form.grant-form')`)
		steps := []chromedp.Action[chromedp.Void]{
			chromedp.SetValue(chromedp.CSS(`form.grant-form select[name=agent]`), "coder"),
			chromedp.Click(chromedp.CSS(`form.grant-form button[data-op=grant]`)),
		}
		if err := b.Do(10*time.Second, steps...); err != nil {
			t.Fatal(err)
		}
		wait(t, "the confirmation step", 5*time.Second, `document.querySelector('form.grant-form button.confirming')`)
		if err := b.Do(10*time.Second, chromedp.Click(chromedp.CSS(`form.grant-form button.confirming`))); err != nil {
			t.Fatal(err)
		}
		wait(t, "the token, shown once", 20*time.Second, `!document.querySelector('#secret').hidden && /^faba_/.test(document.querySelector('#secret-token').textContent)`)
		key := eval(t, `document.querySelector('#secret-token').textContent`)
		harnessui.RecordForAudit(key)
		keyID := eval(t, `document.querySelector('#secret-key-id').textContent`)
		if err := b.Do(10*time.Second, chromedp.Click(chromedp.CSS(`#secret-use`))); err != nil {
			t.Fatal(err)
		}
		if eval(t, `document.querySelector('#secret-token').textContent`) != "" {
			t.Fatal("the token stays on the page after it was taken")
		}
		send := func(text string) {
			t.Helper()
			if err := b.Do(10*time.Second, chromedp.SetValue(chromedp.CSS(`#chat-form textarea`), text), chromedp.Click(chromedp.CSS(`#chat-send`))); err != nil {
				t.Fatal(err)
			}
		}
		send("CONSOLE-CHAT please")
		wait(t, "the streamed reply with its tool call", 90*time.Second, `(() => {
			const m = [...document.querySelectorAll('#chat-log .msg.agent')].pop();
			return m && m.dataset.status === 'completed' && m.querySelector('.tool[data-status=completed]') && /ECHO-IN-CHAT/.test(m.textContent) && /Fabric says four/.test(m.textContent);
		})()`)
		wait(t, "the grant listed", 10*time.Second, `document.querySelector('tr[data-key-id="`+keyID+`"][data-state=active]')`)
		shot("access-chat.png")
		// Revoke, with its confirmation.
		revoke := `tr[data-key-id="` + keyID + `"] button[data-op=revoke]`
		if err := b.Do(10*time.Second, chromedp.Click(chromedp.CSS(revoke))); err != nil {
			t.Fatal(err)
		}
		wait(t, "the revoke confirmation", 5*time.Second, `document.querySelector('`+revoke+`.confirming')`)
		if err := b.Do(10*time.Second, chromedp.Click(chromedp.CSS(revoke))); err != nil {
			t.Fatal(err)
		}
		wait(t, "revoked", 20*time.Second, `document.querySelector('tr[data-key-id="`+keyID+`"][data-state=revoked]')`)
		send("and again after the revoke")
		wait(t, "the next request refused", 30*time.Second, `(() => {
			const m = [...document.querySelectorAll('#chat-log .msg.agent')].pop();
			return m && m.dataset.status === 'refused' && m.dataset.httpStatus === '401';
		})()`)
		shot("access-revoked.png")
	})

	t.Run("a killed agent restarts", func(t *testing.T) {
		w.deploy(0, &st, "status", file, "-o", "json")
		_, rid, pid, restarts := st.agent("coder")
		if rid != runtimeBefore || pid == 0 {
			t.Fatalf("coder runs %s (pid %d), the page showed %s", rid, pid, runtimeBefore)
		}
		if err := b.Do(20*time.Second, chromedp.Navigate(cons.URL+"/")); err != nil {
			t.Fatal(err)
		}
		wait(t, "the deployment page", 20*time.Second, `document.querySelector('tr[data-agent=coder][data-state=running]')`)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		wait(t, "the restart, seen by the page", 90*time.Second, fmt.Sprintf(`(() => { const r = document.querySelector('tr[data-agent=coder]'); return r && r.dataset.state === 'running' && Number(r.dataset.restarts) === %d && r.dataset.runtime !== %q && r.dataset.runtime !== ''; })()`, restarts+1, rid))
		shot("deployment-restarted.png")
	})

	// Nothing the supervisor wrote holds the token.
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(cons.TokenFile), "supervisor.log")); err == nil && strings.Contains(string(b), token) {
		t.Fatal("the supervisor's log holds the console token")
	}
	w.deploy(0, nil, "destroy", file)
}

// sseFrom reads the console's event stream from a Last-Event-ID until a
// turn_end and returns the ids of its records, then "turn_end".
func sseFrom(t *testing.T, url, token, lastID string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Last-Event-ID", lastID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ids []string
	var id, event string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case line == "":
			switch event {
			case "record":
				ids = append(ids, id)
			case "turn_end":
				return append(ids, "turn_end")
			}
			id, event = "", ""
		}
	}
	t.Fatalf("the stream ended without turn_end after %v: %v", ids, sc.Err())
	return nil
}

func scrubText(s, secret string) string { return strings.ReplaceAll(s, secret, "[console token]") }

func clipBytes(b []byte) string {
	if len(b) > 400 {
		b = b[:400]
	}
	return string(b)
}
