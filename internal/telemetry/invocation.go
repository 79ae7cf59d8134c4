package telemetry

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Invocation describes one invocation for its span and metrics.
type Invocation struct {
	RuntimeID    string
	InvocationID string
	RequestID    string
	Agent        string
	Harness      string
	AdapterID    string
	// Model and Provider are the resolved model role's model and provider
	// (gen_ai.request.model, gen_ai.provider.name); empty when unknown.
	Model    string
	Provider string
	// Runtime refers to the runtime's start span (RefFrom on the context
	// RuntimeStart returned). When the invocation's context carries no span
	// the invocation is parented on it; otherwise it is linked to it.
	Runtime SpanRef
}

// InvocationSpan records one invocation: its span (invoke_agent), the
// child spans of the tool calls and model requests its events report, and
// its metrics. A nil *InvocationSpan does nothing. Its methods are safe
// for concurrent use; after End they do nothing.
type InvocationSpan struct {
	t     *Telemetry
	info  Invocation
	start time.Time
	span  trace.Span // nil: tracing off (metrics only)

	mu        sync.Mutex
	ended     bool
	sawEvents bool
	// explicit is set once the adapter reports model_request or
	// model_response: model spans then follow those events only.
	explicit bool
	root     *scope
	scopes   map[string]*scope // nested turns, by the id of the tool call that runs them
	tools    map[string]*toolSpan
	nextAnon int

	usage         usageCounts // the last usage event: cumulative for the invocation
	haveUsage     bool
	responseModel string
	nTools        int
	nModel        int
}

type usageCounts struct{ in, out, cacheRead, reasoning uint64 }

// scope is one turn's sequence of model requests and tool calls: the
// invocation itself, or a sub-agent that runs inside a tool call.
type scope struct {
	ctx       context.Context // parent of the scope's spans
	stepStart time.Time       // when the next model request began; zero: unknown
	open      int             // tool calls started and not finished
	model     *modelStep
}

// modelStep is an open model request span.
type modelStep struct {
	span        trace.Span
	start, last time.Time
	usage       usageCounts
	hasUsage    bool
	toolCalls   int
	finish      string
}

type toolSpan struct {
	span  trace.Span
	ctx   context.Context
	start time.Time
	scope *scope
}

// Invocation starts the span of one invocation. The returned context
// carries it: pass it to the invoke so that Environ and TraceParent give
// the adapter this invocation's trace context. Feed the invocation's
// events to Event as they arrive, then call End once.
func (t *Telemetry) Invocation(ctx context.Context, info Invocation) (context.Context, *InvocationSpan) {
	if t == nil || (t.tracer == nil && t.inst == nil) {
		return ctx, nil
	}
	s := &InvocationSpan{t: t, info: info, start: time.Now()}
	if t.tracer == nil {
		return ctx, s
	}
	agent := bound(info.Agent)
	attrs := []attribute.KeyValue{
		KeyGenAIOperation.String(opInvokeAgent),
		KeyGenAIAgentName.String(agent),
		KeyAgent.String(agent),
		KeyHarness.String(bound(info.Harness)),
		KeyRuntimeID.String(bound(info.RuntimeID)),
		KeyInvocationID.String(bound(info.InvocationID)),
		KeyRequestID.String(bound(info.RequestID)),
	}
	if info.AdapterID != "" {
		attrs = append(attrs, KeyAdapterID.String(bound(info.AdapterID)))
	}
	attrs = append(attrs, s.providerAttrs()...)
	opts := []trace.SpanStartOption{
		trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(s.start), trace.WithAttributes(attrs...),
	}
	parent := ctx
	if info.Runtime.Valid() {
		if trace.SpanContextFromContext(ctx).IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: info.Runtime.sc}))
		} else {
			parent = trace.ContextWithSpanContext(ctx, info.Runtime.sc)
		}
	}
	name := opInvokeAgent
	if agent != "" {
		name += " " + agent
	}
	ctx, s.span = t.tracer.Start(parent, name, opts...)
	s.root = &scope{ctx: ctx, stepStart: s.start}
	return ctx, s
}

// providerAttrs are the GenAI provider and request model attributes.
func (s *InvocationSpan) providerAttrs() []attribute.KeyValue {
	var kv []attribute.KeyValue
	if p := bound(s.info.Provider); p != "" {
		kv = append(kv, KeyGenAIProvider.String(p), KeyGenAISystem.String(p))
	}
	if m := bound(s.info.Model); m != "" {
		kv = append(kv, KeyGenAIRequestModel.String(m))
	}
	return kv
}

// Event records one event the adapter reported. tool_call and
// tool_result (matched by tool call id) become execute_tool spans; model
// requests become chat spans, reported exactly by model_request and
// model_response or inferred from the turn's shape (a model request runs
// from the start of the turn, or the end of the last tool call, to its
// last output, tool call or usage report). Only allow-listed metadata
// keys are read.
func (s *InvocationSpan) Event(ev contract.FabricEvent) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	s.sawEvents = true
	s.handle(ev, time.Now())
}

func (s *InvocationSpan) handle(ev contract.FabricEvent, now time.Time) {
	md := ev.Metadata
	var delta usageCounts
	var hasDelta bool
	if ev.Kind == kindUsage {
		delta, hasDelta = s.cumulativeUsage(md)
	}
	if s.span == nil {
		return
	}
	at := s.at(ev, now)
	switch ev.Kind {
	case kindStatus:
		if m := str(md, mdModel); m != "" && m != s.responseModel {
			s.responseModel = m
			s.span.SetAttributes(KeyGenAIResponseModel.String(m))
		}
	case kindOutputDelta, kindReasoningDelta:
		s.modelActivity(s.scopeOf(md, at), at)
	case kindUsage:
		if step := s.modelActivity(s.scopeOf(md, at), at); step != nil && hasDelta {
			step.usage.add(delta)
			step.hasUsage = true
		}
	case kindModelRetry:
		var kv []attribute.KeyValue
		if code, ok := integer(md, "http_status"); ok {
			kv = append(kv, KeyHTTPStatus.Int64(code))
		}
		s.span.AddEvent("gen_ai.model.retry", trace.WithTimestamp(at), trace.WithAttributes(kv...))
	case kindModelRequest:
		s.explicit = true
		sc := s.scopeOf(md, at)
		if sc.model != nil {
			s.endModel(sc)
		}
		s.startModel(sc, at)
	case kindModelResponse:
		s.explicit = true
		sc := s.scopeOf(md, at)
		if sc.model == nil {
			s.startModel(sc, at)
		}
		step := sc.model
		if u, ok := usageOf(md); ok {
			step.usage, step.hasUsage = u, true
		}
		if f := str(md, mdFinishReason); f != "" {
			step.finish = f
		}
		if m := str(md, mdModel); m != "" {
			step.span.SetAttributes(KeyGenAIResponseModel.String(m))
		}
		step.last = at
		s.endModel(sc)
	case kindToolCall:
		sc := s.scopeOf(md, at)
		if step := s.modelActivity(sc, at); step != nil {
			step.toolCalls++
		}
		s.startTool(sc, str(md, mdToolCallID), md, at)
	case kindToolResult:
		s.endTool(md, at)
	}
}

// at is the event's time: its timestamp when it has one, within the
// invocation's lifetime, else now.
func (s *InvocationSpan) at(ev contract.FabricEvent, now time.Time) time.Time {
	if ev.TimestampMillis <= 0 {
		return now
	}
	t := time.UnixMilli(ev.TimestampMillis)
	if t.Before(s.start) {
		return s.start
	}
	if t.After(now) {
		return now
	}
	return t
}

// scopeOf is the scope an event belongs to: a sub-agent's when the event
// names the tool call it runs in, else the invocation's.
func (s *InvocationSpan) scopeOf(md map[string]any, at time.Time) *scope {
	key := str(md, mdParentTool)
	if key == "" {
		return s.root
	}
	if sc, ok := s.scopes[key]; ok {
		return sc
	}
	sc := &scope{ctx: s.root.ctx, stepStart: at}
	if ts, ok := s.tools[key]; ok {
		sc.ctx, sc.stepStart = ts.ctx, ts.start
	}
	if s.scopes == nil {
		s.scopes = map[string]*scope{}
	}
	s.scopes[key] = sc
	return sc
}

// modelActivity notes output of the scope's current model request,
// starting its span if none is open. In explicit mode nothing is inferred.
func (s *InvocationSpan) modelActivity(sc *scope, at time.Time) *modelStep {
	if s.explicit {
		return sc.model
	}
	if sc.model == nil {
		start := sc.stepStart
		if start.IsZero() || start.After(at) {
			start = at
		}
		s.startModel(sc, start)
	}
	if at.After(sc.model.last) {
		sc.model.last = at
	}
	return sc.model
}

func (s *InvocationSpan) modelName() string {
	if s.responseModel != "" {
		return s.responseModel
	}
	return bound(s.info.Model)
}

func (s *InvocationSpan) startModel(sc *scope, at time.Time) {
	name := opChat
	if m := s.modelName(); m != "" {
		name += " " + m
	}
	attrs := append([]attribute.KeyValue{KeyGenAIOperation.String(opChat)}, s.providerAttrs()...)
	if s.responseModel != "" {
		attrs = append(attrs, KeyGenAIResponseModel.String(s.responseModel))
	}
	_, span := s.t.tracer.Start(sc.ctx, name, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithTimestamp(at), trace.WithAttributes(attrs...))
	sc.model = &modelStep{span: span, start: at, last: at}
	s.nModel++
}

// endModel ends the scope's model request at its last activity.
func (s *InvocationSpan) endModel(sc *scope) {
	step := sc.model
	if step == nil {
		return
	}
	sc.model = nil
	sc.stepStart = time.Time{}
	if step.hasUsage {
		step.span.SetAttributes(usageAttrs(step.usage)...)
	}
	finish := step.finish
	if finish == "" && step.toolCalls > 0 {
		finish = "tool_calls"
	}
	if finish != "" {
		step.span.SetAttributes(KeyGenAIFinishReasons.StringSlice([]string{finish}))
	}
	end := step.last
	if end.Before(step.start) {
		end = step.start
	}
	step.span.End(trace.WithTimestamp(end))
}

// startTool starts the span of tool call id (empty when the adapter gave
// none) and returns it with the key it is kept under.
func (s *InvocationSpan) startTool(sc *scope, id string, md map[string]any, at time.Time) (string, *toolSpan) {
	if id != "" {
		if ts, dup := s.tools[id]; dup {
			return id, ts
		}
	}
	name := str(md, mdToolName)
	server := str(md, mdToolServer)
	attrs := []attribute.KeyValue{KeyGenAIOperation.String(opExecuteTool)}
	spanName := opExecuteTool
	if name != "" {
		attrs = append(attrs, KeyGenAIToolName.String(name))
		spanName += " " + name
	}
	if id != "" {
		attrs = append(attrs, KeyGenAIToolCallID.String(id))
	}
	if server != "" {
		attrs = append(attrs, KeyToolServer.String(server), KeyGenAIToolType.String("extension"))
	} else {
		attrs = append(attrs, KeyGenAIToolType.String("function"))
	}
	ctx, span := s.t.tracer.Start(sc.ctx, spanName, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(at), trace.WithAttributes(attrs...))
	if id == "" {
		// Unmatchable: keep it open until End, under a key no result uses.
		s.nextAnon++
		id = "\x00" + strconv.Itoa(s.nextAnon)
	}
	if s.tools == nil {
		s.tools = map[string]*toolSpan{}
	}
	ts := &toolSpan{span: span, ctx: ctx, start: at, scope: sc}
	s.tools[id] = ts
	sc.open++
	s.nTools++
	return id, ts
}

func (s *InvocationSpan) endTool(md map[string]any, at time.Time) {
	id := str(md, mdToolResultID)
	ts, ok := s.tools[id]
	if !ok || id == "" {
		// A result without its call: record it as an instant.
		id, ts = s.startTool(s.scopeOf(md, at), id, md, at)
	}
	delete(s.tools, id)
	failed := boolean(md, "is_error")
	if st := str(md, []string{"status"}); st != "" {
		ts.span.SetAttributes(KeyToolStatus.String(st))
		switch strings.ToLower(st) {
		case "failed", "error", "declined", "denied":
			failed = true
		}
	}
	if code, ok := integer(md, "exit_code"); ok {
		ts.span.SetAttributes(KeyToolExitCode.Int64(code))
		failed = failed || code != 0
	}
	if e, ok := md["error"]; ok && e != nil && e != "" {
		failed = true // the error's text is not copied
	}
	if failed {
		ts.span.SetAttributes(KeyErrorType.String("tool_error"))
		ts.span.SetStatus(codes.Error, "tool_error")
	}
	if nested, ok := s.scopes[id]; ok {
		// A sub-agent ran inside this tool call: its turn is over.
		s.endModel(nested)
		delete(s.scopes, id)
	}
	ts.span.End(trace.WithTimestamp(at))

	sc := ts.scope
	sc.open--
	if !s.explicit && sc.model != nil {
		// The model request that asked for the tool is over.
		s.endModel(sc)
	}
	if sc.open <= 0 {
		sc.open = 0
		sc.stepStart = at
	}
}

// cumulativeUsage records a usage event (usage so far in the invocation)
// and returns the increase since the previous one.
func (s *InvocationSpan) cumulativeUsage(md map[string]any) (usageCounts, bool) {
	u, ok := usageOf(md)
	if !ok {
		return usageCounts{}, false
	}
	prev := s.usage
	s.usage, s.haveUsage = u, true
	sub := func(a, b uint64) uint64 {
		if a < b {
			return 0
		}
		return a - b
	}
	return usageCounts{
		in: sub(u.in, prev.in), out: sub(u.out, prev.out),
		cacheRead: sub(u.cacheRead, prev.cacheRead), reasoning: sub(u.reasoning, prev.reasoning),
	}, true
}

// usageOf reads token counts from allow-listed keys.
func usageOf(md map[string]any) (usageCounts, bool) {
	var u usageCounts
	found := false
	get := func(key string, dst *uint64) {
		if n, ok := integer(md, key); ok && n >= 0 {
			*dst, found = uint64(n), true
		}
	}
	get("input_tokens", &u.in)
	get("output_tokens", &u.out)
	get("cached_input_tokens", &u.cacheRead)
	get("reasoning_output_tokens", &u.reasoning)
	return u, found
}

func (u *usageCounts) add(d usageCounts) {
	u.in += d.in
	u.out += d.out
	u.cacheRead += d.cacheRead
	u.reasoning += d.reasoning
}

func usageAttrs(u usageCounts) []attribute.KeyValue {
	kv := []attribute.KeyValue{
		KeyGenAIInputTokens.Int64(clampInt(u.in)),
		KeyGenAIOutputTokens.Int64(clampInt(u.out)),
	}
	if u.cacheRead > 0 {
		kv = append(kv, KeyGenAICacheReadTokens.Int64(clampInt(u.cacheRead)))
	}
	if u.reasoning > 0 {
		kv = append(kv, KeyGenAIReasoningTokens.Int64(clampInt(u.reasoning)))
	}
	return kv
}

func clampInt(v uint64) int64 {
	if v > 1<<63-1 {
		return 1<<63 - 1
	}
	return int64(v)
}

// End finishes the invocation with its result (nil when the call failed
// before producing one) and the call's error. It ends every span still
// open, sets the GenAI and Fabric attributes and the status, and records
// the invocation's metrics. When Event was never called, the result's
// events are read instead, so a non-streaming invoke gets the same spans.
func (s *InvocationSpan) End(res *contract.RunResult, err error) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	now := time.Now()
	if res != nil && s.span != nil {
		// Ids assigned when the invocation began, after its span started.
		if res.InvocationID != "" {
			s.span.SetAttributes(KeyInvocationID.String(bound(res.InvocationID)))
		}
		if res.RequestID != "" {
			s.span.SetAttributes(KeyRequestID.String(bound(res.RequestID)))
		}
	}
	if !s.sawEvents && res != nil {
		for _, ev := range res.Events {
			s.handle(ev, now)
		}
	}
	s.ended = true

	status := contract.StatusFailed
	var info *contract.ErrorInfo
	switch {
	case res != nil:
		status, info = res.Status, res.Error
	case err != nil && errorType(err) == "cancelled":
		status = contract.StatusCancelled
	}
	if status == "" {
		status = contract.StatusFailed
	}
	code := ""
	if status == contract.StatusFailed {
		switch {
		case info != nil && info.Code != "":
			code = bound(info.Code)
		case err != nil:
			code = errorType(err)
		default:
			code = "_OTHER"
		}
	}

	var usage usageCounts
	haveUsage := false
	var cost *float64
	if res != nil && res.Usage != nil {
		u := res.Usage
		if u.InputTokens != nil {
			usage.in, haveUsage = *u.InputTokens, true
		}
		if u.OutputTokens != nil {
			usage.out, haveUsage = *u.OutputTokens, true
		}
		if n, ok := integer(u.Extensions, "cache_read_input_tokens"); ok && n > 0 {
			usage.cacheRead = uint64(n)
		}
		cost = u.CostUSD
	}
	if !haveUsage && s.haveUsage {
		usage, haveUsage = s.usage, true
	}
	finish := finishReason(res, status)

	if s.span != nil {
		s.endOpen(now, finish)
		kv := []attribute.KeyValue{
			KeyStatus.String(status),
			KeyGenAIFinishReasons.StringSlice([]string{finish}),
			KeyToolCalls.Int(s.nTools),
			KeyModelRequests.Int(s.nModel),
		}
		if haveUsage {
			kv = append(kv, usageAttrs(usage)...)
		}
		if cost != nil && *cost >= 0 {
			kv = append(kv, KeyCostUSD.Float64(*cost))
		}
		s.span.SetAttributes(kv...)
		switch {
		case status == contract.StatusFailed:
			s.span.SetAttributes(KeyErrorType.String(code))
			if info != nil {
				s.span.SetAttributes(KeyErrorStage.String(bound(info.Stage)), KeyErrorRetryable.Bool(info.Retryable))
			} else if f, ok := failureOf(err); ok && f.Stage != "" {
				s.span.SetAttributes(KeyErrorStage.String(f.Stage), KeyErrorRetryable.Bool(f.Retryable))
			}
			s.span.SetStatus(codes.Error, code)
		case status == contract.StatusSucceeded:
			s.span.SetStatus(codes.Ok, "")
		}
		s.span.End(trace.WithTimestamp(now))
	}

	if in := s.t.inst; in != nil {
		ctx := context.Background()
		harness := bound(s.info.Harness)
		kv := []attribute.KeyValue{KeyHarness.String(harness), KeyStatus.String(status)}
		if code != "" {
			kv = append(kv, KeyErrorType.String(code))
		}
		in.invocations.Add(ctx, 1, metric.WithAttributes(kv...))
		in.duration.Record(ctx, now.Sub(s.start).Seconds(),
			metric.WithAttributes(KeyHarness.String(harness), KeyStatus.String(status)))
		if haveUsage {
			base := []attribute.KeyValue{KeyGenAIOperation.String(opInvokeAgent), KeyHarness.String(harness)}
			base = append(base, s.providerAttrs()...)
			in.tokens.Record(ctx, clampInt(usage.in), metric.WithAttributes(append(base, KeyGenAITokenType.String("input"))...))
			in.tokens.Record(ctx, clampInt(usage.out), metric.WithAttributes(append(base, KeyGenAITokenType.String("output"))...))
		}
	}
}

// endOpen ends the spans still open when the invocation ends: model
// requests at their last activity (the invocation's last one gets its
// finish reason) and tool calls now, marked incomplete.
func (s *InvocationSpan) endOpen(now time.Time, finish string) {
	for id, ts := range s.tools {
		ts.span.SetAttributes(KeyToolIncomplete.Bool(true))
		ts.span.End(trace.WithTimestamp(now))
		delete(s.tools, id)
	}
	for _, sc := range s.scopes {
		s.endModel(sc)
	}
	if s.root.model != nil && s.root.model.finish == "" && s.root.model.toolCalls == 0 {
		s.root.model.finish = finish
	}
	s.endModel(s.root)
}

// finishReason is the adapter's stop or finish reason when the result
// reports one, else the status mapped to a GenAI-style reason.
func finishReason(res *contract.RunResult, status string) string {
	if res != nil {
		for _, md := range []map[string]any{res.Metadata, usageExt(res.Usage)} {
			if f := str(md, mdFinishReason); f != "" {
				return f
			}
		}
	}
	switch status {
	case contract.StatusSucceeded:
		return "stop"
	case contract.StatusCancelled:
		return "cancelled"
	}
	return "error"
}

func usageExt(u *contract.RunUsage) map[string]any {
	if u == nil {
		return nil
	}
	return u.Extensions
}
