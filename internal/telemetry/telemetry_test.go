package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeSecret is planted in event metadata under keys that are not
// allow-listed and in free-form fields; it must never reach telemetry.
const fakeSecret = "sk-fake-SECRET-0123456789"

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// harness is an in-memory tracer and meter wired through Options.
type harness struct {
	tel    *Telemetry
	spans  *tracetest.InMemoryExporter
	reader *sdkmetric.ManualReader
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{spans: tracetest.NewInMemoryExporter(), reader: sdkmetric.NewManualReader()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(h.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(h.reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	var err error
	h.tel, err = New(context.Background(), Options{TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	if !h.tel.Enabled() || !h.tel.TracingEnabled() {
		t.Fatal("telemetry with providers is not enabled")
	}
	return h
}

func (h *harness) byName(t *testing.T) map[string][]tracetest.SpanStub {
	t.Helper()
	out := map[string][]tracetest.SpanStub{}
	for _, s := range h.spans.GetSpans() {
		out[s.Name] = append(out[s.Name], s)
	}
	return out
}

func (h *harness) one(t *testing.T, name string) tracetest.SpanStub {
	t.Helper()
	got := h.byName(t)[name]
	if len(got) != 1 {
		t.Fatalf("want one span %q, got %d (spans: %v)", name, len(got), spanNames(h.spans.GetSpans()))
	}
	return got[0]
}

func spanNames(spans tracetest.SpanStubs) []string {
	var n []string
	for _, s := range spans {
		n = append(n, s.Name)
	}
	slices.Sort(n)
	return n
}

func attrs(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

func wantAttr(t *testing.T, s tracetest.SpanStub, key attribute.Key, want any) {
	t.Helper()
	v, ok := attrs(s)[key]
	if !ok {
		t.Errorf("span %q: no attribute %s", s.Name, key)
		return
	}
	if got := v.AsInterface(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("span %q: %s = %v, want %v", s.Name, key, got, want)
	}
}

func noAttr(t *testing.T, s tracetest.SpanStub, key attribute.Key) {
	t.Helper()
	if v, ok := attrs(s)[key]; ok {
		t.Errorf("span %q: unexpected attribute %s = %v", s.Name, key, v.AsInterface())
	}
}

func wantParent(t *testing.T, child, parent tracetest.SpanStub) {
	t.Helper()
	if child.Parent.SpanID() != parent.SpanContext.SpanID() || child.SpanContext.TraceID() != parent.SpanContext.TraceID() {
		t.Errorf("span %q: parent is %s, want %q (%s)", child.Name, child.Parent.SpanID(), parent.Name, parent.SpanContext.SpanID())
	}
}

// assertNoSecret fails when fakeSecret appears anywhere in the spans.
func assertNoSecret(t *testing.T, spans tracetest.SpanStubs) {
	t.Helper()
	for _, s := range spans {
		dump := fmt.Sprintf("%s %v %v %v %v", s.Name, s.Status, s.Events, s.Links, s.Resource)
		for _, kv := range s.Attributes {
			dump += " " + string(kv.Key) + "=" + kv.Value.Emit()
		}
		if strings.Contains(dump, "SECRET") {
			t.Fatalf("span %q carries the planted secret: %s", s.Name, dump)
		}
	}
}

func u64(v uint64) *uint64 { return &v }

var handle = contract.RuntimeHandle{
	RuntimeID: "runtime-1", AgentName: "demo", Harness: "codex", AdapterKind: "process", AdapterID: "fabric.codex",
	Environment: contract.EnvironmentHandle{Provider: "local", Env: map[string]string{"OPENAI_API_KEY": fakeSecret}},
}

func info() Invocation {
	return Invocation{
		RuntimeID: "runtime-1", InvocationID: "invocation-1", RequestID: "request-1",
		Agent: "demo", Harness: "codex", AdapterID: "fabric.codex", Model: "gpt-test", Provider: "openai",
	}
}

// codexTurn is the event sequence the Codex adapter emits for a turn that
// runs one shell command: model output, a tool call, cumulative usage, the
// tool result, the answer, final usage.
func codexTurn() []contract.FabricEvent {
	return []contract.FabricEvent{
		{Kind: "reasoning_delta", Message: "thinking", Metadata: map[string]any{"item_id": "r1"}},
		{Kind: "tool_call", Message: "echo " + fakeSecret, Metadata: map[string]any{
			"item_id": "call-1", "tool": "shell", "command": "echo " + fakeSecret, "cwd": "/work",
			"api_key": fakeSecret, "env": map[string]any{"TOKEN": fakeSecret},
		}},
		{Kind: "usage", Metadata: map[string]any{"input_tokens": uint64(100), "output_tokens": uint64(20), "total_tokens": uint64(120), "cached_input_tokens": uint64(40)}},
		{Kind: "tool_result", Message: "echo", Metadata: map[string]any{
			"item_id": "call-1", "tool": "shell", "status": "completed", "exit_code": 0, "output": fakeSecret, "duration_ms": int64(12),
		}},
		{Kind: "output_delta", Message: "done", Metadata: map[string]any{"item_id": "m1"}},
		{Kind: "usage", Metadata: map[string]any{"input_tokens": 250.0, "output_tokens": 50.0, "total_tokens": 300.0}},
		{Kind: "warning", Message: fakeSecret, Metadata: map[string]any{"authorization": "Bearer " + fakeSecret}},
	}
}

func TestSpanTreeOfOneInvocation(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()

	pctx, endPlan := h.tel.Plan(ctx, "demo")
	rctx, endStart := h.tel.RuntimeStart(pctx, handle)
	endStart(nil)
	ictx, inv := h.tel.Invocation(rctx, info())
	if TraceParent(ictx) == "" || TraceParent(ictx) == TraceParent(rctx) {
		t.Fatalf("invocation context does not carry its own span: %q vs %q", TraceParent(ictx), TraceParent(rctx))
	}
	for _, ev := range codexTurn() {
		inv.Event(ev)
	}
	inv.End(&contract.RunResult{
		Status: contract.StatusSucceeded, Output: "done " + fakeSecret,
		Usage:    &contract.RunUsage{InputTokens: u64(250), OutputTokens: u64(50), TotalTokens: u64(300)},
		Metadata: map[string]any{"host_command": "codex --token " + fakeSecret},
	}, nil)
	inv.End(nil, errors.New("second End is ignored"))
	inv.Event(contract.FabricEvent{Kind: "tool_call", Metadata: map[string]any{"item_id": "late"}})
	endPlan(nil)

	spans := h.spans.GetSpans()
	if got, want := spanNames(spans), []string{"chat gpt-test", "chat gpt-test", "execute_tool shell", "fabric.plan", "fabric.runtime.start", "invoke_agent demo"}; !slices.Equal(got, want) {
		t.Fatalf("spans = %v, want %v", got, want)
	}
	plan := h.one(t, SpanPlan)
	start := h.one(t, SpanRuntimeStart)
	invocation := h.one(t, "invoke_agent demo")
	tool := h.one(t, "execute_tool shell")
	chats := h.byName(t)["chat gpt-test"]
	slices.SortFunc(chats, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })

	// The tree: plan -> runtime start -> invocation -> {chat, tool, chat}.
	wantParent(t, start, plan)
	wantParent(t, invocation, start)
	wantParent(t, tool, invocation)
	for _, c := range chats {
		wantParent(t, c, invocation)
	}

	wantAttr(t, plan, KeyAgent, "demo")
	wantAttr(t, start, KeyRuntimeID, "runtime-1")
	wantAttr(t, start, KeyHarness, "codex")
	wantAttr(t, start, KeyEnvProvider, "local")

	wantAttr(t, invocation, KeyGenAIOperation, "invoke_agent")
	wantAttr(t, invocation, KeyGenAIProvider, "openai")
	wantAttr(t, invocation, KeyGenAISystem, "openai")
	wantAttr(t, invocation, KeyGenAIRequestModel, "gpt-test")
	wantAttr(t, invocation, KeyGenAIInputTokens, 250)
	wantAttr(t, invocation, KeyGenAIOutputTokens, 50)
	wantAttr(t, invocation, KeyGenAIFinishReasons, []string{"stop"})
	wantAttr(t, invocation, KeyRuntimeID, "runtime-1")
	wantAttr(t, invocation, KeyInvocationID, "invocation-1")
	wantAttr(t, invocation, KeyRequestID, "request-1")
	wantAttr(t, invocation, KeyAgent, "demo")
	wantAttr(t, invocation, KeyHarness, "codex")
	wantAttr(t, invocation, KeyStatus, "succeeded")
	wantAttr(t, invocation, KeyToolCalls, 1)
	wantAttr(t, invocation, KeyModelRequests, 2)
	if invocation.SpanKind != trace.SpanKindClient || invocation.Status.Code != codes.Ok {
		t.Errorf("invocation kind %v status %v, want client/ok", invocation.SpanKind, invocation.Status)
	}

	wantAttr(t, tool, KeyGenAIOperation, "execute_tool")
	wantAttr(t, tool, KeyGenAIToolName, "shell")
	wantAttr(t, tool, KeyGenAIToolCallID, "call-1")
	wantAttr(t, tool, KeyToolStatus, "completed")
	wantAttr(t, tool, KeyToolExitCode, 0)
	if tool.Status.Code == codes.Error {
		t.Errorf("successful tool call has status %v", tool.Status)
	}

	// First model request: asked for the tool, 100/20 tokens; second:
	// the answer, the rest of the usage.
	wantAttr(t, chats[0], KeyGenAIOperation, "chat")
	wantAttr(t, chats[0], KeyGenAIRequestModel, "gpt-test")
	wantAttr(t, chats[0], KeyGenAIInputTokens, 100)
	wantAttr(t, chats[0], KeyGenAIOutputTokens, 20)
	wantAttr(t, chats[0], KeyGenAICacheReadTokens, 40)
	wantAttr(t, chats[0], KeyGenAIFinishReasons, []string{"tool_calls"})
	wantAttr(t, chats[1], KeyGenAIInputTokens, 150)
	wantAttr(t, chats[1], KeyGenAIOutputTokens, 30)
	wantAttr(t, chats[1], KeyGenAIFinishReasons, []string{"stop"})

	// Order within the invocation: chat 1 starts with it, ends before the
	// tool ends; chat 2 starts when the tool ended.
	if chats[0].StartTime.Before(invocation.StartTime) || chats[0].EndTime.After(tool.EndTime) {
		t.Errorf("first model request [%v, %v] not within [invocation start, tool end %v]", chats[0].StartTime, chats[0].EndTime, tool.EndTime)
	}
	if !chats[1].StartTime.Equal(tool.EndTime) || chats[1].EndTime.After(invocation.EndTime) {
		t.Errorf("second model request [%v, %v], want start at tool end %v", chats[1].StartTime, chats[1].EndTime, tool.EndTime)
	}
	for _, s := range spans {
		if s.EndTime.Before(s.StartTime) {
			t.Errorf("span %q ends before it starts", s.Name)
		}
	}
	assertNoSecret(t, spans)

	// Metrics.
	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	m := metricsByName(rm)
	if got := sumOf(t, m[MetricInvocations], attribute.String("fabric.status", "succeeded")); got != 1 {
		t.Errorf("%s{succeeded} = %d, want 1", MetricInvocations, got)
	}
	if got := sumOf(t, m[MetricRuntimeStarts], attribute.String("fabric.status", "succeeded")); got != 1 {
		t.Errorf("%s = %d, want 1", MetricRuntimeStarts, got)
	}
	if n := histCount(t, m[MetricInvocationDuration]); n != 1 {
		t.Errorf("%s count = %d, want 1", MetricInvocationDuration, n)
	}
	if got := histSum(t, m[MetricTokenUsage], attribute.String("gen_ai.token.type", "input")); got != 250 {
		t.Errorf("input tokens = %d, want 250", got)
	}
	if got := histSum(t, m[MetricTokenUsage], attribute.String("gen_ai.token.type", "output")); got != 50 {
		t.Errorf("output tokens = %d, want 50", got)
	}
	dump, _ := json.Marshal(rm.ScopeMetrics)
	if strings.Contains(string(dump), "SECRET") || strings.Contains(string(dump), "runtime-1") {
		t.Errorf("metrics carry a secret or an id: %s", dump)
	}
}

func metricsByName(rm metricdata.ResourceMetrics) map[string]metricdata.Metrics {
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

func sumOf(t *testing.T, m metricdata.Metrics, want attribute.KeyValue) int64 {
	t.Helper()
	sum, ok := m.Data.(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("metric %q is %T, want an int64 sum", m.Name, m.Data)
	}
	var n int64
	for _, dp := range sum.DataPoints {
		if v, ok := dp.Attributes.Value(want.Key); ok && v == want.Value {
			n += dp.Value
		}
	}
	return n
}

func histCount(t *testing.T, m metricdata.Metrics) uint64 {
	t.Helper()
	h, ok := m.Data.(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("metric %q is %T, want a float64 histogram", m.Name, m.Data)
	}
	var n uint64
	for _, dp := range h.DataPoints {
		n += dp.Count
	}
	return n
}

func histSum(t *testing.T, m metricdata.Metrics, want attribute.KeyValue) int64 {
	t.Helper()
	h, ok := m.Data.(metricdata.Histogram[int64])
	if !ok {
		t.Fatalf("metric %q is %T, want an int64 histogram", m.Name, m.Data)
	}
	var n int64
	for _, dp := range h.DataPoints {
		if v, ok := dp.Attributes.Value(want.Key); ok && v == want.Value {
			n += dp.Sum
		}
	}
	return n
}

// Claude reports tool calls by id and results by tool_use_id, the model in
// its init status event, and a sub-agent's events with parent_tool_use_id.
func TestClaudeEventsWithSubAgent(t *testing.T) {
	h := newHarness(t)
	_, inv := h.tel.Invocation(context.Background(), Invocation{Agent: "coder", Harness: "claude", Model: "claude-test", Provider: "anthropic"})
	for _, ev := range []contract.FabricEvent{
		{Kind: "status", Message: "init", Metadata: map[string]any{"subtype": "init", "model": "claude-test-20260101", "session_id": "s1", "permission_mode": "default"}},
		{Kind: "output_delta", Message: "Let me look.", Metadata: map[string]any{"index": 0}},
		{Kind: "tool_call", Message: "Task", Metadata: map[string]any{"name": "Task", "id": "toolu_task", "input": map[string]any{"prompt": fakeSecret}}},
		{Kind: "tool_call", Message: "Bash", Metadata: map[string]any{"name": "Bash", "id": "toolu_sub", "input": map[string]any{"command": "cat " + fakeSecret}, "parent_tool_use_id": "toolu_task"}},
		{Kind: "tool_result", Message: fakeSecret, Metadata: map[string]any{"tool_use_id": "toolu_sub", "is_error": true, "parent_tool_use_id": "toolu_task"}},
		{Kind: "output_delta", Message: "sub answer", Metadata: map[string]any{"index": 0, "parent_tool_use_id": "toolu_task"}},
		{Kind: "tool_result", Message: "sub answer", Metadata: map[string]any{"tool_use_id": "toolu_task", "is_error": false}},
		{Kind: "output_delta", Message: "All done.", Metadata: map[string]any{"index": 0}},
	} {
		inv.Event(ev)
	}
	inv.End(&contract.RunResult{Status: contract.StatusSucceeded,
		Usage: &contract.RunUsage{InputTokens: u64(10), OutputTokens: u64(5), Extensions: map[string]any{"stop_reason": "end_turn"}}}, nil)

	invocation := h.one(t, "invoke_agent coder")
	task := h.one(t, "execute_tool Task")
	bash := h.one(t, "execute_tool Bash")
	wantParent(t, task, invocation)
	wantParent(t, bash, task)
	wantAttr(t, bash, KeyGenAIToolCallID, "toolu_sub")
	if bash.Status.Code != codes.Error {
		t.Errorf("failed tool call status = %v, want error", bash.Status)
	}
	wantAttr(t, bash, KeyErrorType, "tool_error")
	if task.Status.Code == codes.Error {
		t.Errorf("Task status = %v", task.Status)
	}
	wantAttr(t, invocation, KeyGenAIResponseModel, "claude-test-20260101")
	wantAttr(t, invocation, KeyGenAIFinishReasons, []string{"end_turn"})

	chats := h.byName(t)["chat claude-test-20260101"]
	var top, sub int
	for _, c := range chats {
		switch c.Parent.SpanID() {
		case invocation.SpanContext.SpanID():
			top++
		case task.SpanContext.SpanID():
			sub++
		default:
			t.Errorf("model span parented on %s", c.Parent.SpanID())
		}
		wantAttr(t, c, KeyGenAIProvider, "anthropic")
		wantAttr(t, c, KeyGenAIResponseModel, "claude-test-20260101")
	}
	if top != 2 || sub != 2 {
		t.Errorf("model spans: %d top-level, %d in the sub-agent; want 2 and 2 (spans %v)", top, sub, spanNames(h.spans.GetSpans()))
	}
	assertNoSecret(t, h.spans.GetSpans())
}

// An adapter that reports model_request/model_response gets exactly those
// model spans, with its per-request usage and finish reason.
func TestExplicitModelEvents(t *testing.T) {
	h := newHarness(t)
	_, inv := h.tel.Invocation(context.Background(), Invocation{Agent: "a", Model: "m"})
	inv.Event(contract.FabricEvent{Kind: "model_request", Metadata: map[string]any{"prompt": fakeSecret}})
	inv.Event(contract.FabricEvent{Kind: "output_delta", Message: "x"})
	inv.Event(contract.FabricEvent{Kind: "model_response", Metadata: map[string]any{
		"model": "m-2026", "input_tokens": 7, "output_tokens": 3, "finish_reason": "length", "raw": fakeSecret}})
	inv.Event(contract.FabricEvent{Kind: "output_delta", Message: "not a model request of its own"})
	inv.End(&contract.RunResult{Status: contract.StatusSucceeded}, nil)

	chat := h.one(t, "chat m")
	wantAttr(t, chat, KeyGenAIResponseModel, "m-2026")
	wantAttr(t, chat, KeyGenAIInputTokens, 7)
	wantAttr(t, chat, KeyGenAIOutputTokens, 3)
	wantAttr(t, chat, KeyGenAIFinishReasons, []string{"length"})
	assertNoSecret(t, h.spans.GetSpans())
}

// A non-streaming invoke gets the same spans from the result's events.
func TestEndReadsResultEventsWhenNotStreamed(t *testing.T) {
	h := newHarness(t)
	_, inv := h.tel.Invocation(context.Background(), info())
	base := time.Now().UnixMilli()
	events := codexTurn()
	for i := range events {
		events[i].TimestampMillis = base + int64(i)
	}
	inv.End(&contract.RunResult{Status: contract.StatusSucceeded, Events: events}, nil)
	if got := spanNames(h.spans.GetSpans()); !slices.Equal(got, []string{"chat gpt-test", "chat gpt-test", "execute_tool shell", "invoke_agent demo"}) {
		t.Fatalf("spans = %v", got)
	}
	invocation := h.one(t, "invoke_agent demo")
	// No usage in the result: the last cumulative usage event counts.
	wantAttr(t, invocation, KeyGenAIInputTokens, 250)
	wantAttr(t, invocation, KeyGenAIOutputTokens, 50)
	assertNoSecret(t, h.spans.GetSpans())
}

func TestFailedAndCancelledInvocations(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()

	_, inv := h.tel.Invocation(ctx, Invocation{Agent: "failing", Harness: "codex"})
	inv.Event(contract.FabricEvent{Kind: "tool_call", Metadata: map[string]any{"item_id": "c1", "tool": "shell"}})
	inv.Event(contract.FabricEvent{Kind: "model_retry", Message: fakeSecret, Metadata: map[string]any{"http_status": 429.0}})
	inv.End(&contract.RunResult{Status: contract.StatusFailed, Error: &contract.ErrorInfo{
		Stage: contract.StageInvoke, Code: "model_rate_limited", Message: "key " + fakeSecret + " rejected", Retryable: true,
	}}, nil)
	failed := h.one(t, "invoke_agent failing")
	if failed.Status.Code != codes.Error || failed.Status.Description != "model_rate_limited" {
		t.Errorf("status = %v, want error model_rate_limited", failed.Status)
	}
	wantAttr(t, failed, KeyErrorType, "model_rate_limited")
	wantAttr(t, failed, KeyErrorStage, "invoke")
	wantAttr(t, failed, KeyGenAIFinishReasons, []string{"error"})
	if len(failed.Events) != 1 || failed.Events[0].Name != "gen_ai.model.retry" {
		t.Errorf("events = %v, want one retry", failed.Events)
	}
	open := h.one(t, "execute_tool shell")
	wantAttr(t, open, KeyToolIncomplete, true)
	wantParent(t, open, failed)

	_, inv = h.tel.Invocation(ctx, Invocation{Agent: "cancelled"})
	inv.End(nil, fmt.Errorf("invoke: %w", context.Canceled))
	cancelled := h.one(t, "invoke_agent cancelled")
	wantAttr(t, cancelled, KeyStatus, "cancelled")
	if cancelled.Status.Code == codes.Error {
		t.Errorf("cancelled status = %v", cancelled.Status)
	}

	_, inv = h.tel.Invocation(ctx, Invocation{Agent: "broken"})
	inv.End(nil, &contract.RuntimeError{Failure: contract.Failure{Stage: "invoke", Code: "host_crashed", Message: fakeSecret}})
	broken := h.one(t, "invoke_agent broken")
	wantAttr(t, broken, KeyErrorType, "host_crashed")
	wantAttr(t, broken, KeyStatus, "failed")

	_, end := h.tel.RuntimeStart(ctx, handle)
	end(&contract.RuntimeError{Failure: contract.Failure{Stage: "start", Code: "start_timeout", Message: fakeSecret}})
	start := h.one(t, SpanRuntimeStart)
	wantAttr(t, start, KeyErrorType, "start_timeout")
	wantAttr(t, start, KeyErrorStage, "start")

	_, end = h.tel.RuntimeStop(ctx, handle)
	end(nil)
	h.one(t, SpanRuntimeStop)
	assertNoSecret(t, h.spans.GetSpans())

	h.tel.RecordDrops(3)
	h.tel.RecordDrops(0)
	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	m := metricsByName(rm)
	if got := sumOf(t, m[MetricInvocations], attribute.String("error.type", "model_rate_limited")); got != 1 {
		t.Errorf("failed invocations = %d, want 1", got)
	}
	if got := sumOf(t, m[MetricInvocations], attribute.String("fabric.status", "cancelled")); got != 1 {
		t.Errorf("cancelled invocations = %d, want 1", got)
	}
	if got := sumOf(t, m[MetricRuntimeStarts], attribute.String("error.type", "start_timeout")); got != 1 {
		t.Errorf("failed starts = %d, want 1", got)
	}
	if got := sumOf(t, m[MetricRuntimeStops], attribute.String("fabric.status", "succeeded")); got != 1 {
		t.Errorf("stops = %d, want 1", got)
	}
	drops := m[MetricStreamDrops].Data.(metricdata.Sum[int64])
	if len(drops.DataPoints) != 1 || drops.DataPoints[0].Value != 3 {
		t.Errorf("drops = %+v, want 3", drops.DataPoints)
	}
}

// Invocations are parented on the runtime's start span when the caller
// has no span, and linked to it when the caller has one.
func TestInvocationParentAndLink(t *testing.T) {
	h := newHarness(t)
	rctx, end := h.tel.RuntimeStart(context.Background(), handle)
	end(nil)
	ref := RefFrom(rctx)
	if !ref.Valid() || RefFrom(context.Background()).Valid() {
		t.Fatal("RefFrom validity is wrong")
	}

	in := info()
	in.Runtime = ref
	_, inv := h.tel.Invocation(context.Background(), in)
	inv.End(&contract.RunResult{Status: contract.StatusSucceeded}, nil)

	callerTP := sdktrace.NewTracerProvider()
	defer func() { _ = callerTP.Shutdown(context.Background()) }()
	cctx, caller := callerTP.Tracer("caller").Start(context.Background(), "caller request")
	in.Agent = "linked"
	_, inv = h.tel.Invocation(cctx, in)
	inv.End(&contract.RunResult{Status: contract.StatusSucceeded}, nil)
	caller.End()

	start := h.one(t, SpanRuntimeStart)
	wantParent(t, h.one(t, "invoke_agent demo"), start)
	linked := h.one(t, "invoke_agent linked")
	if linked.Parent.SpanID() != caller.SpanContext().SpanID() {
		t.Errorf("linked invocation's parent = %s, want the caller's span", linked.Parent.SpanID())
	}
	if len(linked.Links) != 1 || linked.Links[0].SpanContext.SpanID() != start.SpanContext.SpanID() {
		t.Errorf("links = %v, want the runtime start span", linked.Links)
	}
}

// Concurrent Event and End calls are safe (run with -race).
func TestConcurrentEvents(t *testing.T) {
	h := newHarness(t)
	_, inv := h.tel.Invocation(context.Background(), info())
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 200 {
				id := fmt.Sprintf("g%d-%d", g, i)
				inv.Event(contract.FabricEvent{Kind: "tool_call", Metadata: map[string]any{"item_id": id, "tool": "t"}})
				inv.Event(contract.FabricEvent{Kind: "output_delta", Message: "x"})
				inv.Event(contract.FabricEvent{Kind: "tool_result", Metadata: map[string]any{"item_id": id}})
			}
		}()
	}
	for range 4 {
		<-done
	}
	inv.End(&contract.RunResult{Status: contract.StatusSucceeded}, nil)
	if n := len(h.byName(t)["execute_tool t"]); n != 800 {
		t.Errorf("tool spans = %d, want 800", n)
	}
}
