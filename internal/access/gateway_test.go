package access

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/fabric-runtime/fabric/contract"
)

func TestStreamResumeAndContinue(t *testing.T) {
	d := newDispatcher(t, map[string]string{"alpha": textAgent})
	e := newEnv(t, d, Options{Bindings: bindings("alpha")})
	k := e.key("voice", "alpha")

	s := e.open("POST", "/v1/responses", k.Token, map[string]any{"model": "alpha", "input": "hello", "stream": true}, "Idempotency-Key", "k1")
	fs := s.rest()
	if fs[len(fs)-1].data != "[DONE]" {
		t.Fatalf("last frame %+v, want [DONE]", fs[len(fs)-1])
	}
	evs := events(t, fs)
	checkHygiene(t, evs, 0)
	if evs[0]["type"] != "response.created" || evs[len(evs)-1]["type"] != "response.completed" {
		t.Fatalf("first %v last %v", evs[0]["type"], evs[len(evs)-1]["type"])
	}
	final := lastResponse(t, evs)
	if got := outputText(final); got != "turn 1: hello" {
		t.Fatalf("output %q", got)
	}
	usage, _ := final["usage"].(map[string]any)
	if usage == nil || usage["input_tokens_details"] == nil || usage["output_tokens_details"] == nil || usage["total_tokens"].(float64) == 0 {
		t.Fatalf("usage %v", final["usage"])
	}
	id := final["id"].(string)

	// Resume from an offset: exactly the events after it, nothing dispatched.
	r := e.open("GET", "/v1/responses/"+id+"?stream=true&starting_after=3", k.Token, nil)
	resumed := events(t, r.rest())
	if len(resumed) != len(evs)-4 {
		t.Fatalf("resumed %d events, want %d", len(resumed), len(evs)-4)
	}
	checkHygiene(t, resumed, 4)
	// openai-go sends stream in a JSON body on the GET.
	r2 := e.open("GET", "/v1/responses/"+id+"?starting_after="+strconv.Itoa(len(evs)-2), k.Token, map[string]any{"stream": true})
	if got := events(t, r2.rest()); len(got) != 1 || got[0]["type"] != "response.completed" {
		t.Fatalf("body-stream resume: %v", got)
	}
	got := e.do("GET", "/v1/responses/"+id, k.Token, nil)
	if got.status != 200 || got.json(t)["status"] != "completed" {
		t.Fatalf("retrieve: %d %s", got.status, got.body)
	}

	// Continue: previous_response_id must be the head; the agent keeps its history.
	second := e.do("POST", "/v1/responses", k.Token, map[string]any{"model": "alpha", "input": "again", "previous_response_id": id}, "Idempotency-Key", "k2")
	if second.status != 200 || outputText(second.json(t)) != "turn 2: again" {
		t.Fatalf("second turn: %d %s", second.status, second.body)
	}
	conv := second.json(t)["conversation"].(map[string]any)["id"].(string)
	fork := e.do("POST", "/v1/responses", k.Token, map[string]any{"model": "alpha", "input": "fork", "previous_response_id": id}, "Idempotency-Key", "k3")
	if fork.status != 400 || fork.code(t) != "fork_not_supported" {
		t.Fatalf("fork: %d %s", fork.status, fork.body)
	}
	third := e.do("POST", "/v1/responses", k.Token, map[string]any{"model": "alpha", "input": "third", "conversation": conv}, "Idempotency-Key", "k4")
	if third.status != 200 || outputText(third.json(t)) != "turn 3: third" {
		t.Fatalf("conversation turn: %d %s", third.status, third.body)
	}
	both := e.do("POST", "/v1/responses", k.Token, map[string]any{"model": "alpha", "input": "x", "conversation": conv, "previous_response_id": id}, "Idempotency-Key", "k5")
	if both.status != 400 {
		t.Fatalf("both continuity fields: %d", both.status)
	}
	if n := d.count("alpha"); n != 3 {
		t.Fatalf("runtime ran %d turns, want 3", n)
	}
}

func TestAuthAndScope(t *testing.T) {
	d := newDispatcher(t, map[string]string{"alpha": textAgent, "beta": textAgent})
	now := time.Now()
	var clock sync.Mutex
	e := newEnv(t, d, Options{Bindings: bindings("alpha", "beta"), Now: func() time.Time { clock.Lock(); defer clock.Unlock(); return now },
		AuthFailuresPerMinute: 20})
	ka, kb, kw := e.key("voice", "alpha"), e.key("voice", "beta"), e.key("web", "alpha")

	if r := e.do("GET", "/v1/models", "", nil); r.status != 401 || r.header.Get("x-should-retry") != "false" {
		t.Fatalf("no token: %d", r.status)
	}
	// Change the last character (to another one: a token may end in x).
	other := "x"
	if strings.HasSuffix(ka.Token, "x") {
		other = "y"
	}
	bad := ka.Token[:len(ka.Token)-1] + other
	if r := e.do("GET", "/v1/models", bad, nil); r.status != 401 || r.code(t) != "invalid_api_key" {
		t.Fatalf("bad checksum: %d %s", r.status, r.body)
	}
	_, _, lookalike := newToken()
	if r := e.do("GET", "/v1/models", lookalike, nil); r.status != 401 || r.code(t) != "invalid_api_key" {
		t.Fatalf("unknown key: %d", r.status)
	}
	if r := e.do("GET", "/v1/models?api_key="+ka.Token, "", nil); r.status != 401 {
		t.Fatalf("query token accepted: %d", r.status)
	}
	models := e.do("GET", "/v1/models", ka.Token, nil).json(t)
	if data := models["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != "alpha" {
		t.Fatalf("models: %v", models)
	}
	if r := e.do("GET", "/v1/models/beta", ka.Token, nil); r.status != 404 {
		t.Fatalf("other model: %d", r.status)
	}
	if r := e.do("POST", "/v1/responses", ka.Token, map[string]any{"model": "beta", "input": "x"}); r.status != 404 {
		t.Fatalf("other agent: %d %s", r.status, r.body)
	}

	// Another client's and another agent's response ids are not found, on every path.
	own := e.do("POST", "/v1/responses", ka.Token, map[string]any{"model": "alpha", "input": "mine"}, "Idempotency-Key", "a")
	id := own.json(t)["id"].(string)
	for _, k := range []Key{kw, kb} {
		for _, path := range []string{"/v1/responses/" + id, "/v1/responses/" + id + "?stream=true&starting_after=0"} {
			if r := e.do("GET", path, k.Token, nil); r.status != 404 || r.code(t) != "not_found" {
				t.Fatalf("foreign GET %s: %d %s", path, r.status, r.body)
			}
		}
		if r := e.do("POST", "/v1/responses/"+id+"/cancel", k.Token, nil); r.status != 404 {
			t.Fatalf("foreign cancel: %d", r.status)
		}
		if r := e.do("POST", "/v1/responses", k.Token, map[string]any{"model": k.agent(e), "input": "x", "previous_response_id": id}, "Idempotency-Key", "p"); r.status != 404 {
			t.Fatalf("foreign previous_response_id: %d %s", r.status, r.body)
		}
	}

	// Rotation: both keys work, then the old one is revoked; no gap.
	k2, err := e.g.Rotate(ka.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	e.tokens = append(e.tokens, k2.Token)
	for _, k := range []Key{ka, k2} {
		if r := e.do("GET", "/v1/fabric/access", k.Token, nil); r.status != 200 || r.json(t)["agent_ready"] != true {
			t.Fatalf("rotated keys: %d %s", r.status, r.body)
		}
	}
	if err := e.g.Revoke(ka.ID); err != nil {
		t.Fatal(err)
	}
	if r := e.do("GET", "/v1/fabric/access", ka.Token, nil); r.status != 401 || r.code(t) != "token_revoked" {
		t.Fatalf("revoked: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/responses/"+id, k2.Token, nil); r.status != 200 {
		t.Fatalf("new key reads the client's response: %d", r.status)
	}

	// Expiry.
	clock.Lock()
	now = now.Add(2 * time.Hour)
	clock.Unlock()
	if r := e.do("GET", "/v1/fabric/access", kb.Token, nil); r.status != 401 || r.code(t) != "token_expired" {
		t.Fatalf("expired: %d %s", r.status, r.body)
	}

	// Replacement: a new generation invalidates older keys; a new key works.
	kb2 := e.key("voice", "beta")
	if err := e.g.SetBindings([]Binding{{Agent: "alpha", Generation: "g1"}, {Agent: "beta", Generation: "g2"}}); err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	d.gens["beta"] = "g2"
	d.mu.Unlock()
	if r := e.do("GET", "/v1/fabric/access", kb2.Token, nil); r.status != 403 || r.code(t) != "agent_replaced" {
		t.Fatalf("replaced: %d %s", r.status, r.body)
	}
	kb3 := e.key("voice", "beta")
	if r := e.do("GET", "/v1/fabric/access", kb3.Token, nil); r.status != 200 || r.json(t)["generation"] != "g2" {
		t.Fatalf("new generation key: %d %s", r.status, r.body)
	}
	states := map[string]string{}
	for _, ki := range e.g.List() {
		states[ki.ID] = ki.State
	}
	if states[ka.ID] != "revoked" || states[kb.ID] != "expired" || states[kb2.ID] != "replaced" || states[kb3.ID] != "active" {
		t.Fatalf("states %v", states)
	}

	// Failures from one address are limited: 429 with Retry-After.
	var last reply
	for range 25 {
		last = e.do("GET", "/v1/models", lookalike, nil)
		if last.status == 429 {
			break
		}
	}
	if last.status != 429 || last.header.Get("Retry-After") == "" {
		t.Fatalf("auth failures: %d %v", last.status, last.header)
	}
}

// agent names a key's agent (for the scope loop).
func (k Key) agent(e *env) string {
	for _, ki := range e.g.List() {
		if ki.ID == k.ID {
			return ki.Agent
		}
	}
	return ""
}

func TestCancelBusyAndRevoke(t *testing.T) {
	d := newDispatcher(t, map[string]string{"slow": hangAgent})
	e := newEnv(t, d, Options{Bindings: bindings("slow"), PingInterval: 5 * time.Millisecond})
	k := e.key("voice", "slow")

	s := e.open("POST", "/v1/responses", k.Token, map[string]any{"model": "slow", "input": "wait", "stream": true, "background": true}, "Idempotency-Key", "c1")
	head := events(t, s.until("response.in_progress"))
	id := head[0]["response"].(map[string]any)["id"].(string)
	for { // keep-alives arrive while the turn is silent
		f, err := s.next()
		if err != nil {
			t.Fatal(err)
		}
		if f.comment == "ping" {
			break
		}
	}
	busy := e.do("POST", "/v1/responses", k.Token, map[string]any{"model": "slow", "input": "again"}, "Idempotency-Key", "c2")
	if busy.status != 409 || busy.code(t) != "conversation_busy" || busy.header.Get("x-should-retry") != "false" {
		t.Fatalf("mid-turn POST: %d %s", busy.status, busy.body)
	}
	st := e.g.Status()
	if len(st.Turns) != 1 || st.Turns[0].ResponseID != id {
		t.Fatalf("status turns %+v", st.Turns)
	}
	c1 := e.do("POST", "/v1/responses/"+id+"/cancel", k.Token, nil)
	if c1.status != 200 || c1.json(t)["status"] != "cancelled" {
		t.Fatalf("cancel: %d %s", c1.status, c1.body)
	}
	tail := events(t, s.rest())
	if tail[len(tail)-1]["type"] != "response.incomplete" || lastResponse(t, tail)["status"] != "cancelled" {
		t.Fatalf("stream end: %v", tail[len(tail)-1])
	}
	c2 := e.do("POST", "/v1/responses/"+id+"/cancel", k.Token, nil)
	if string(c2.body) != string(c1.body) {
		t.Fatalf("second cancel differs:\n%s\n%s", c1.body, c2.body)
	}

	// Revocation ends the key's live stream and cancels its turn.
	s2 := e.open("POST", "/v1/responses", k.Token, map[string]any{"model": "slow", "input": "x", "stream": true, "previous_response_id": id}, "Idempotency-Key", "c3")
	id2 := events(t, s2.until("response.in_progress"))[0]["response"].(map[string]any)["id"].(string)
	other := e.key("voice", "slow")
	start := time.Now()
	if err := e.g.Revoke(k.ID); err != nil {
		t.Fatal(err)
	}
	fs := s2.rest()
	if time.Since(start) > time.Second {
		t.Errorf("revocation took %v", time.Since(start))
	}
	var sawRevoked bool
	for _, ev := range events(t, fs) {
		if ev["type"] == "error" && ev["code"] == "token_revoked" {
			sawRevoked = true
		}
	}
	if !sawRevoked {
		t.Fatalf("no token_revoked in %v", fs)
	}
	if r := e.do("GET", "/v1/responses/"+id2+"?stream=true", k.Token, nil); r.status != 401 {
		t.Fatalf("resume with a revoked key: %d", r.status)
	}
	got := e.do("POST", "/v1/responses/"+id2+"/cancel", other.Token, nil)
	if got.json(t)["status"] != "cancelled" {
		t.Fatalf("revoked key's turn: %s", got.body)
	}
}

func TestIdempotencyAndRetries(t *testing.T) {
	d := newDispatcher(t, map[string]string{"alpha": textAgent, "strict": textAgent})
	bs := bindings("alpha")
	bs = append(bs, Binding{Agent: "strict", Generation: "g1"})
	e := newEnv(t, d, Options{Bindings: bs})
	k, ks := e.key("voice", "alpha"), e.key("voice", "strict")

	if r := e.do("POST", "/v1/responses", ks.Token, map[string]any{"model": "strict", "input": "x"}); r.status != 400 || r.code(t) != "idempotency_key_required" {
		t.Fatalf("required key: %d %s", r.status, r.body)
	}

	// Attach: a second stream with the same key while the turn runs.
	gate := make(chan struct{})
	entered := make(chan struct{}, 1)
	d.setBefore(func(contract.RunRequest) error { entered <- struct{}{}; <-gate; return nil })
	body := map[string]any{"model": "alpha", "input": "once", "stream": true}
	s1 := e.open("POST", "/v1/responses", k.Token, body, "Idempotency-Key", `"same"`)
	<-entered
	s2 := e.open("POST", "/v1/responses", k.Token, body, "Idempotency-Key", "same")
	if s2.resp.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatal("attach not marked replayed")
	}
	if r := e.do("POST", "/v1/responses", k.Token, map[string]any{"model": "alpha", "input": "other"}, "Idempotency-Key", "same"); r.status != 422 || r.code(t) != "idempotency_key_reused" {
		t.Fatalf("different body: %d %s", r.status, r.body)
	}
	close(gate)
	d.setBefore(nil)
	f1, f2 := s1.rest(), s2.rest()
	if len(f1) != len(f2) || events(t, f1)[0]["response"].(map[string]any)["id"] != events(t, f2)[0]["response"].(map[string]any)["id"] {
		t.Fatalf("attached stream differs: %d vs %d frames", len(f1), len(f2))
	}
	// After the turn: the same stream again, byte for byte.
	s3 := e.open("POST", "/v1/responses", k.Token, body, "Idempotency-Key", "same")
	f3 := s3.rest()
	for i := range f1 {
		if f1[i] != f3[i] {
			t.Fatalf("replay frame %d differs:\n%+v\n%+v", i, f1[i], f3[i])
		}
	}
	nonStream := e.do("POST", "/v1/responses", k.Token, map[string]any{"model": "alpha", "input": "once"}, "Idempotency-Key", "same")
	if nonStream.header.Get("Idempotent-Replayed") != "true" || outputText(nonStream.json(t)) != "turn 1: once" {
		t.Fatalf("non-stream replay: %s", nonStream.body)
	}
	if n := d.count("alpha"); n != 1 {
		t.Fatalf("%d turns ran, want 1", n)
	}

	// A Stainless retry without a key is the turn it repeats.
	plain := map[string]any{"model": "alpha", "input": "retry me"}
	first := e.do("POST", "/v1/responses", k.Token, plain, "X-Stainless-Retry-Count", "0")
	retry := e.do("POST", "/v1/responses", k.Token, plain, "X-Stainless-Retry-Count", "1")
	if first.json(t)["id"] != retry.json(t)["id"] || retry.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("stainless retry: %s vs %s", first.body, retry.body)
	}
	fresh := e.do("POST", "/v1/responses", k.Token, plain)
	if fresh.json(t)["id"] == first.json(t)["id"] {
		t.Fatal("a fresh request without retry count was matched")
	}
	if n := d.count("alpha"); n != 3 {
		t.Fatalf("%d turns ran, want 3", n)
	}
}

func TestDisconnect(t *testing.T) {
	d := newDispatcher(t, map[string]string{"alpha": textAgent, "slow": hangAgent})
	bs := bindings("alpha")
	bs = append(bs, Binding{Agent: "slow", Generation: "g1", Idempotency: IdempotencyOptional, OnDisconnect: OnDisconnectCancel})
	e := newEnv(t, d, Options{Bindings: bs})
	k, ks := e.key("voice", "alpha"), e.key("voice", "slow")

	gate := make(chan struct{})
	entered := make(chan struct{}, 1)
	d.setBefore(func(contract.RunRequest) error { entered <- struct{}{}; <-gate; return nil })
	s := e.open("POST", "/v1/responses", k.Token, map[string]any{"model": "alpha", "input": "go on", "stream": true})
	id := events(t, s.until("response.created"))[0]["response"].(map[string]any)["id"].(string)
	<-entered
	s.close()
	close(gate)
	d.setBefore(nil)
	r := e.open("GET", "/v1/responses/"+id+"?stream=true", k.Token, nil)
	if resp := lastResponse(t, events(t, r.rest())); resp["status"] != "completed" || outputText(resp) != "turn 1: go on" {
		t.Fatalf("disconnect without cancel: %v", resp)
	}

	s2 := e.open("POST", "/v1/responses", ks.Token, map[string]any{"model": "slow", "input": "stop when I leave", "stream": true})
	id2 := events(t, s2.until("response.in_progress"))[0]["response"].(map[string]any)["id"].(string)
	s2.close()
	r2 := e.open("GET", "/v1/responses/"+id2+"?stream=true", ks.Token, nil)
	if resp := lastResponse(t, events(t, r2.rest())); resp["status"] != "cancelled" {
		t.Fatalf("on_disconnect cancel: %v", resp)
	}
}

func TestRestartOutcomeUnknownAndAdoption(t *testing.T) {
	d := newDispatcher(t, map[string]string{"alpha": textAgent})
	dir := t.TempDir()
	e := newEnv(t, d, Options{Bindings: bindings("alpha"), StoreDir: dir, AdoptPoll: time.Millisecond})
	k := e.key("voice", "alpha")

	// 1. Lost between admission and the runtime: outcome_unknown, never re-sent.
	gate := make(chan struct{})
	entered := make(chan struct{}, 1)
	d.setBefore(func(contract.RunRequest) error {
		entered <- struct{}{}
		<-gate
		return errors.New("supervisor connection lost")
	})
	body := map[string]any{"model": "alpha", "input": "lost", "background": true}
	first := e.do("POST", "/v1/responses", k.Token, body, "Idempotency-Key", "r1")
	id := first.json(t)["id"].(string)
	<-entered
	old := e.crash()
	d.mu.Lock()
	delete(d.running, id) // the supervisor crashed too: Fabric has no record
	d.mu.Unlock()
	close(gate)
	old.wg.Wait()
	d.setBefore(nil)
	e.start()
	again := e.do("POST", "/v1/responses", k.Token, body, "Idempotency-Key", "r1")
	resp := again.json(t)
	if resp["id"] != id || resp["status"] != "failed" || resp["error"].(map[string]any)["code"] != "outcome_unknown" {
		t.Fatalf("after restart: %s", again.body)
	}
	if n := d.count("alpha"); n != 0 {
		t.Fatalf("re-dispatched: %d turns", n)
	}
	if err := e.g.Reconcile(id, "completed", "operator saw the agent's reply in its transcript"); err != nil {
		t.Fatal(err)
	}
	if r := e.do("GET", "/v1/responses/"+id, k.Token, nil); r.json(t)["status"] != "completed" {
		t.Fatalf("reconciled: %s", r.body)
	}

	// 2. The runtime finished it while the gateway was down: adopted from Fabric's record.
	gate2 := make(chan struct{})
	d.setBefore(func(contract.RunRequest) error { entered <- struct{}{}; <-gate2; return nil })
	id2 := e.do("POST", "/v1/responses", k.Token, map[string]any{"model": "alpha", "input": "adopt me", "background": true}, "Idempotency-Key", "r2").json(t)["id"].(string)
	<-entered
	old = e.crash()
	close(gate2)
	old.wg.Wait()
	d.setBefore(nil)
	e.start()
	r := e.open("GET", "/v1/responses/"+id2+"?stream=true", k.Token, nil)
	evs := events(t, r.rest())
	checkHygiene(t, evs, 0)
	if resp := lastResponse(t, evs); resp["status"] != "completed" || outputText(resp) != "turn 1: adopt me" {
		t.Fatalf("adopted: %v", resp)
	}

	// 3. Still running at restart: followed until Fabric's record has it.
	gate3 := make(chan struct{})
	d.setBefore(func(contract.RunRequest) error { entered <- struct{}{}; <-gate3; return nil })
	id3 := e.do("POST", "/v1/responses", k.Token, map[string]any{"model": "alpha", "input": "follow me", "background": true}, "Idempotency-Key", "r3").json(t)["id"].(string)
	<-entered
	old = e.crash()
	e.start()
	if busy := e.do("POST", "/v1/responses", k.Token, map[string]any{"model": "alpha", "input": "x"}, "Idempotency-Key", "r4"); busy.code(t) != "conversation_busy" {
		t.Fatalf("adopted running turn leaves the agent free: %s", busy.body)
	}
	s := e.open("GET", "/v1/responses/"+id3+"?stream=true", k.Token, nil)
	s.until("response.created")
	close(gate3)
	old.wg.Wait()
	d.setBefore(nil)
	if resp := lastResponse(t, events(t, s.rest())); resp["status"] != "completed" || outputText(resp) != "turn 2: follow me" {
		t.Fatalf("followed: %v", resp)
	}
	if n := d.count("alpha"); n != 2 {
		t.Fatalf("%d turns ran, want 2", n)
	}
}

func TestChatCompletions(t *testing.T) {
	d := newDispatcher(t, map[string]string{"alpha": textAgent})
	e := newEnv(t, d, Options{Bindings: bindings("alpha")})
	k := e.key("web", "alpha")
	s := e.open("POST", "/v1/chat/completions", k.Token, map[string]any{"model": "alpha", "stream": true, "stream_options": map[string]any{"include_usage": true},
		"messages": []any{map[string]any{"role": "user", "content": "hi"}}})
	fs := s.rest()
	var text strings.Builder
	var id string
	var sawUsage, sawStop bool
	for _, f := range fs {
		if f.event != "" {
			t.Errorf("chat frame with event: %q", f.event)
		}
		if f.data == "[DONE]" || f.comment != "" {
			continue
		}
		m := events(t, []frame{f})[0]
		id, _ = m["id"].(string)
		if m["usage"] != nil {
			sawUsage = true
		}
		for _, c := range m["choices"].([]any) {
			ch := c.(map[string]any)
			if dl, ok := ch["delta"].(map[string]any); ok {
				s, _ := dl["content"].(string)
				text.WriteString(s)
			}
			if ch["finish_reason"] == "stop" {
				sawStop = true
			}
		}
	}
	if text.String() != "turn 1: hi" || !sawUsage || !sawStop || fs[len(fs)-1].data != "[DONE]" || !strings.HasPrefix(id, "chatcmpl-resp_") {
		t.Fatalf("chat stream: %q usage=%v stop=%v id=%s", text.String(), sawUsage, sawStop, id)
	}
	if r := e.do("GET", "/v1/responses/"+id, k.Token, nil); r.status != 200 || outputText(r.json(t)) != "turn 1: hi" {
		t.Fatalf("chat id via responses: %d %s", r.status, r.body)
	}
	r := e.do("POST", "/v1/chat/completions", k.Token, map[string]any{"model": "alpha", "messages": []any{
		map[string]any{"role": "user", "content": "hi"}, map[string]any{"role": "assistant", "content": "turn 1: hi"}, map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "more"}}}}})
	msg := r.json(t)["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	if msg["content"] != "turn 2: more" {
		t.Fatalf("chat: %s", r.body)
	}
}

func TestReadinessAndRateLimit(t *testing.T) {
	d := newDispatcher(t, map[string]string{"alpha": textAgent})
	e := newEnv(t, d, Options{Bindings: bindings("alpha"), KeyRate: rate.Every(time.Hour), KeyBurst: 2})
	if r := e.do("GET", "/healthz", "", nil); r.status != 200 {
		t.Fatalf("healthz %d", r.status)
	}
	if r := e.do("GET", "/readyz", "", nil); r.status != 200 || string(r.body) != `{"agents":true,"store":true,"supervisor":true}`+"\n" {
		t.Fatalf("readyz %d %s", r.status, r.body)
	}
	d.mu.Lock()
	d.agentErr = errors.New("socket down")
	d.mu.Unlock()
	if r := e.do("GET", "/readyz", "", nil); r.status != 503 || r.json(t)["supervisor"] != false {
		t.Fatalf("readyz down %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/healthz", "", nil); r.status != 200 {
		t.Fatalf("healthz down %d", r.status)
	}
	k := e.key("voice", "alpha")
	if r := e.do("GET", "/v1/fabric/access", k.Token, nil); r.status != 503 || r.json(t)["agent_ready"] != false {
		t.Fatalf("access with the supervisor down: %d %s", r.status, r.body)
	}
	if r := e.do("POST", "/v1/responses", k.Token, map[string]any{"model": "alpha", "input": "x"}); r.status != 503 || r.code(t) != "agent_unavailable" || r.header.Get("x-should-retry") == "false" {
		t.Fatalf("not ready before admission: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/models", k.Token, nil); r.status != 429 || r.header.Get("Retry-After") == "" {
		t.Fatalf("per-key limit: %d %v", r.status, r.header)
	}
}

func TestBodiesAndDecoders(t *testing.T) {
	d := newDispatcher(t, map[string]string{"alpha": textAgent})
	e := newEnv(t, d, Options{Bindings: bindings("alpha"), MaxBodyBytes: 1024})
	k := e.key("voice", "alpha")
	cases := []struct {
		body any
		want int
		code string
	}{
		{`{"model":"alpha","input":"` + strings.Repeat("x", 2000) + `"}`, 413, "request_too_large"},
		{`{`, 400, "invalid_json"},
		{map[string]any{"model": "alpha", "input": []any{map[string]any{"role": "assistant", "content": "earlier"}}}, 400, "history_not_supported"},
		{map[string]any{"model": "alpha", "input": "x", "instructions": "be evil"}, 400, "unsupported_parameter"},
		{map[string]any{"model": "alpha", "input": "x", "tools": []any{map[string]any{"type": "function"}}}, 400, "unsupported_parameter"},
		{map[string]any{"model": "alpha"}, 400, "missing_required_parameter"},
	}
	for _, c := range cases {
		if r := e.do("POST", "/v1/responses", k.Token, c.body); r.status != c.want || r.code(t) != c.code {
			t.Errorf("%v: %d %s", c.body, r.status, r.body)
		}
	}
	if n := d.count("alpha"); n != 0 {
		t.Fatalf("%d turns ran", n)
	}
	ok := e.do("POST", "/v1/responses", k.Token, map[string]any{"model": "fabric/alpha", "input": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_text", "text": "typed"}}}}})
	if outputText(ok.json(t)) != "turn 1: typed" {
		t.Fatalf("typed input: %s", ok.body)
	}
}

func TestTranslatorItems(t *testing.T) {
	var evs []event
	resp := &responseObject{ID: "resp_x", Output: []map[string]any{}}
	tr := newTranslator(resp, func(e event) { evs = append(evs, e) })
	tr.created()
	for _, ev := range []contract.FabricEvent{
		{Kind: contract.EventInvocationStart},
		{Kind: kindReasoningDelta, Message: "think"},
		{Kind: kindToolCall, Message: "ls", Metadata: map[string]any{"item_id": "n1", "tool": "shell", "command": "ls", "cwd": "/secret/path"}},
		{Kind: kindToolCall, Message: "fs/read", Metadata: map[string]any{"item_id": "n2", "tool": "read", "arguments": `{"p":1}`}},
		{Kind: kindToolResult, Metadata: map[string]any{"item_id": "n1", "output": "a b"}},
		{Kind: kindOutputDelta, Message: "done"},
		{Kind: "file_change", Message: "edited a.go"},
		{Kind: "log", Message: "internal"},
	} {
		tr.fabric(ev)
	}
	tr.finish(outcome{status: statusCompleted})
	var decoded []map[string]any
	for _, e := range evs {
		decoded = append(decoded, events(t, []frame{{event: e.typ, data: string(e.data)}})...)
		if strings.Contains(string(e.data), "/secret/path") || strings.Contains(string(e.data), "n1") {
			t.Errorf("native detail leaked: %s", e.data)
		}
	}
	checkHygiene(t, decoded, 0)
	types := map[string]bool{}
	for _, it := range resp.Output {
		types[it["type"].(string)] = true
	}
	if !types["reasoning"] || !types["mcp_call"] || !types["message"] || !types["fabric:file_change"] || len(resp.Output) != 5 {
		t.Fatalf("output %v", resp.Output)
	}
	if resp.Output[2]["status"] != "incomplete" || resp.Output[1]["output"] != "a b" {
		t.Fatalf("tool items %v %v", resp.Output[1], resp.Output[2])
	}
}

func TestTokens(t *testing.T) {
	for range 100 {
		id, secret, tok := newToken()
		gid, gsecret, ok := parseToken(tok)
		if !ok || gid != id || gsecret != secret || !strings.HasPrefix(tok, "faba_") {
			t.Fatalf("round trip %q", tok)
		}
	}
	_, _, tok := newToken()
	for i := len(tokenPrefix); i < len(tok); i++ {
		b := []byte(tok)
		b[i] = base62[(strings.IndexByte(base62, b[i])+1)%62]
		if _, _, ok := parseToken(string(b)); ok && i != len(tokenPrefix)+keyIDLen {
			t.Fatalf("checksum missed a change at %d", i)
		}
	}
}

func TestExpiredLogReplay(t *testing.T) {
	resp := &responseObject{ID: "resp_y", Object: "response", Status: statusCompleted, Output: []map[string]any{{"id": "msg_1", "type": "message"}}}
	snap, _ := json.Marshal(resp)
	tt, err := storedTurn(&record{id: "resp_y", snapshot: snap}, nil)
	if err != nil {
		t.Fatal(err)
	}
	evs, final, _ := tt.since(0)
	if !final || !tt.expired || len(evs) != 2 || evs[0].typ != "response.created" || evs[1].typ != "response.completed" {
		t.Fatalf("synthesized %v final=%v", evs, final)
	}
}
