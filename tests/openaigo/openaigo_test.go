//go:build linux

// Package openaigo drives Fabric's access gateway with the official Go
// client, github.com/openai/openai-go. It is a module of its own so that
// the main module never links that client: the test builds the fabric
// binaries of the parent module, applies a deployment of scripted agents
// with `fabric deploy apply` (which exits), grants a key and talks to the
// gateway as an outside Go program would.
package openaigo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

var bins string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fabric-openaigo-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bins = dir
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	cmd := exec.Command("go", "build", "-C", root, "-o", dir, "./cmd/fabric", "./cmd/fabric-core", "./cmd/fabric-serve", "./cmd/fabric-host", "./cmd/fabric-agent-ctl", "./cmd/fabric-agent-ctl-serve")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the fabric binaries:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fabric runs `fabric ARGS` in dir and decodes its JSON output into out.
func fabric(t *testing.T, dir string, out any, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bins, "fabric"), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+bins+string(os.PathListSeparator)+os.Getenv("PATH"))
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("fabric %s: %v\nstderr: %s", strings.Join(args[:2], " "), err, e.Bytes())
	}
	if out != nil {
		if err := json.Unmarshal(o.Bytes(), out); err != nil {
			t.Fatalf("fabric %s: %v", strings.Join(args[:2], " "), err)
		}
	}
}

const doc = `schema_version: fabric.deployment/v1alpha1
metadata: {name: goclient, uid: 0b6e8a52-3c1d-4e7f-9a2b-5c6d7e8f9a21}
spec:
  supervisor: {kind: process}
  integrations:
    gateway: {kind: access, clients: [gocli]}
  sandboxes:
    - name: main
      workspace: ./work
      agents:
        - name: writer
          integrationRefs: [gateway]
          fabric:
            schema_version: fabric.agent/v1alpha1
            metadata: {name: writer}
            runtime: {}
            harness: {adapter_id: fabric.scripted, settings: {response: "turn {turn}: {input}", events: 6, event_interval_ms: 20}}
        - name: slow
          integrationRefs: [gateway]
          fabric:
            schema_version: fabric.agent/v1alpha1
            metadata: {name: slow}
            runtime: {}
            harness: {adapter_id: fabric.scripted, settings: {response: "slow {input}", events: 40, event_interval_ms: 100}}
`

type event struct {
	typ   string
	seq   int64
	delta string
	resp  responses.Response
}

// drain reads a Responses stream to its end.
func drain(t *testing.T, s interface {
	Next() bool
	Current() responses.ResponseStreamEventUnion
	Err() error
}, stopAfterDelta bool) []event {
	t.Helper()
	var out []event
	for s.Next() {
		ev := s.Current()
		out = append(out, event{typ: ev.Type, seq: ev.SequenceNumber, delta: ev.Delta, resp: ev.Response})
		if stopAfterDelta && ev.Type == "response.output_text.delta" {
			return out
		}
	}
	if err := s.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	return out
}

// contiguous checks sequence numbers from from and the terminal type, and
// returns the deltas' text.
func contiguous(t *testing.T, what string, evs []event, from int64, terminal string) string {
	t.Helper()
	if len(evs) == 0 {
		t.Fatalf("%s: no events", what)
	}
	var text strings.Builder
	for i, e := range evs {
		if e.seq != from+int64(i) {
			t.Fatalf("%s: event %d (%s) has sequence number %d, want %d", what, i, e.typ, e.seq, from+int64(i))
		}
		if e.typ == "response.output_text.delta" {
			text.WriteString(e.delta)
		}
	}
	if last := evs[len(evs)-1]; last.typ != terminal {
		t.Fatalf("%s: ended with %s, want %s", what, last.typ, terminal)
	}
	return text.String()
}

// TestOpenAIGo: openai-go's NewStreaming, GetStreaming from an offset (it
// sends stream:true in a JSON body on the GET), Get, New, Cancel, the
// models list and Chat Completions streaming with usage, against a
// deployed gateway.
func TestOpenAIGo(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "deploy.yaml"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	var ar struct {
		Outcome string `json:"outcome"`
	}
	fabric(t, dir, &ar, "deploy", "apply", "deploy.yaml", "--timeout", "2m")
	t.Cleanup(func() { fabric(t, dir, nil, "deploy", "destroy", "deploy.yaml") })
	if ar.Outcome != "succeeded" {
		t.Fatalf("apply: %+v", ar)
	}
	var k struct {
		ID    string `json:"key_id"`
		Token string `json:"token"`
		URL   string `json:"url"`
	}
	fabric(t, dir, &k, "deploy", "access", "grant", "deploy.yaml", "--integration", "gateway", "--agent", "writer", "--client", "gocli")
	harnessui.RecordForAudit(k.Token)
	var ks struct {
		Token string `json:"token"`
		URL   string `json:"url"`
	}
	fabric(t, dir, &ks, "deploy", "access", "grant", "deploy.yaml", "--integration", "gateway", "--agent", "slow", "--client", "gocli")
	harnessui.RecordForAudit(ks.Token)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := openai.NewClient(option.WithBaseURL(k.URL), option.WithAPIKey(k.Token))
	in := func(s string) responses.ResponseNewParamsInputUnion {
		return responses.ResponseNewParamsInputUnion{OfString: openai.String(s)}
	}

	// 1. NewStreaming, consumed to the end.
	evs := drain(t, c.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "writer", Input: in("hello")}), false)
	if text := contiguous(t, "NewStreaming", evs, 0, "response.completed"); text != "turn 1: hello" {
		t.Fatalf("NewStreaming text %q", text)
	}
	final := evs[len(evs)-1].resp
	if final.Status != "completed" || final.OutputText() != "turn 1: hello" || final.Usage.TotalTokens == 0 {
		t.Fatalf("response.completed carries %s %q usage %+v", final.Status, final.OutputText(), final.Usage)
	}
	id := final.ID

	// 2. GetStreaming from an offset: exactly the events after it.
	const after = 4
	rest := drain(t, c.Responses.GetStreaming(ctx, id, responses.ResponseGetParams{StartingAfter: openai.Int(after)}), false)
	contiguous(t, "GetStreaming", rest, after+1, "response.completed")
	if len(rest) != len(evs)-after-1 {
		t.Fatalf("GetStreaming after %d gave %d events, want %d", after, len(rest), len(evs)-after-1)
	}
	for i, e := range rest {
		if o := evs[after+1+i]; e.typ != o.typ || e.delta != o.delta {
			t.Fatalf("resumed event %d is %s %q, streamed was %s %q", e.seq, e.typ, e.delta, o.typ, o.delta)
		}
	}

	// 3. Get and a second (non-stream) turn of the same conversation.
	got, err := c.Responses.Get(ctx, id, responses.ResponseGetParams{})
	if err != nil || got.Status != "completed" || got.OutputText() != "turn 1: hello" {
		t.Fatalf("Get: %v %+v", err, got)
	}
	second, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "writer", Input: in("again"), PreviousResponseID: openai.String(id)})
	if err != nil || second.OutputText() != "turn 2: again" {
		t.Fatalf("New with previous_response_id: %v %+v", err, second)
	}

	// 4. The models list holds the key's agent only; another agent is 404.
	models, err := c.Models.List(ctx)
	if err != nil || len(models.Data) != 1 || models.Data[0].ID != "writer" {
		t.Fatalf("Models.List: %v %+v", err, models)
	}
	_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "slow", Input: in("x")})
	var apiErr *openai.Error
	if !asAPIError(err, &apiErr) || apiErr.StatusCode != 404 {
		t.Fatalf("writer's key on slow: %v, want 404", err)
	}

	// 5. Chat Completions streaming with usage.
	chat := c.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model:         "writer",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("chat")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	var acc openai.ChatCompletionAccumulator
	for chat.Next() {
		acc.AddChunk(chat.Current())
	}
	if err := chat.Err(); err != nil || len(acc.Choices) != 1 || acc.Choices[0].Message.Content != "turn 3: chat" ||
		acc.Choices[0].FinishReason != "stop" || acc.Usage.TotalTokens == 0 {
		t.Fatalf("chat stream: %v %+v", err, acc.ChatCompletion)
	}

	// 6. Cancel mid-turn (the slow agent): the stream ends incomplete,
	// cancelled.
	sc := openai.NewClient(option.WithBaseURL(ks.URL), option.WithAPIKey(ks.Token))
	stream := sc.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "slow", Input: in("cancel me")})
	head := drain(t, stream, true)
	sid := head[0].resp.ID
	cancelled, err := sc.Responses.Cancel(ctx, sid)
	if err != nil || cancelled.Status != "cancelled" {
		t.Fatalf("Cancel: %v %+v", err, cancelled)
	}
	tail := drain(t, stream, false)
	all := append(head, tail...)
	text := contiguous(t, "cancelled stream", all, 0, "response.incomplete")
	if all[len(all)-1].resp.Status != "cancelled" || strings.HasSuffix(text, "cancel me") {
		t.Fatalf("the cancelled stream ended %s with %q", all[len(all)-1].resp.Status, text)
	}

	// No token in the deployment's state or logs.
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || !info.Mode().IsRegular() {
			return nil
		}
		b, _ := os.ReadFile(p)
		for _, tok := range []string{k.Token, ks.Token} {
			if bytes.Contains(b, []byte(tok)) {
				t.Errorf("%s holds a client token", p)
			}
		}
		return nil
	})
}

func asAPIError(err error, out **openai.Error) bool {
	e, ok := err.(*openai.Error)
	if ok {
		*out = e
	}
	return ok
}
