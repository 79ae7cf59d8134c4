package scripted

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostfault"
)

// Modes, the failures the adapter can simulate (settings "mode").
const (
	ModeOK              = "ok"
	ModeStartFailure    = "start_failure"    // Start fails with CodeStartFailure
	ModeExitOnStart     = "exit_on_start"    // the host exits with status 3 during start
	ModeInvokeFailure   = "invoke_failure"   // from FailOnTurn on: a failed result, CodeInvokeFailure
	ModeMalformedOutput = "malformed_output" // on FailOnTurn: garbage on the protocol channel, then wait for cancellation
	ModeHang            = "hang"             // on FailOnTurn: wait for cancellation (v1: SIGTERM)
	ModeCrashMidInvoke  = "crash_mid_invoke" // on FailOnTurn: one event, then SIGKILL of the host
	ModeSlowStream      = "slow_stream"      // Events events (default 10) every EventIntervalMS (default 100)
)

// Error codes the adapter reports.
const (
	CodeStartFailure    = "scripted_start_failure"
	CodeInvokeFailure   = "scripted_invoke_failure"
	CodeInvalidSettings = "scripted_invalid_settings"
)

// eventKind is the kind of the events streamed before an answer.
const eventKind = "output_delta"

// malformedLine is what malformed_output writes to the protocol channel.
const malformedLine = "this is not json\n"

// defaultResponse is the response template when none is configured.
const defaultResponse = "scripted: {input}"

// Defaults of slow_stream.
const (
	slowStreamEvents     = 10
	slowStreamIntervalMS = 100
)

// crashFlushDelay lets crash_mid_invoke's event reach the core before the
// host kills itself.
const crashFlushDelay = 100 * time.Millisecond

// Settings are the adapter's settings (AgentConfig.Harness.Settings); the
// descriptor's settings_schema describes the same fields.
type Settings struct {
	// Response is the answer template: {input} is replaced by the request
	// input (JSON for a non-string input), {traceparent} by the turn's W3C
	// trace context (runtime_context.telemetry.env) and {turn} by the turn number,
	// from 1. Default "scripted: {input}".
	Response *string `json:"response,omitempty"`
	// Responses are templates per turn; the last repeats. They win over
	// Response when not empty.
	Responses []string `json:"responses,omitempty"`
	Mode      string   `json:"mode,omitempty"`
	// FailOnTurn is the first turn that misbehaves (default 1).
	FailOnTurn int `json:"fail_on_turn,omitempty"`
	// Events is the number of output_delta events streamed before the
	// answer; their messages are consecutive chunks of the answer.
	Events *int `json:"events,omitempty"`
	// EventIntervalMS is the pause before each event.
	EventIntervalMS *int `json:"event_interval_ms,omitempty"`
	// DelayMS is the time an invoke takes, after its events, before it
	// answers.
	DelayMS int `json:"delay_ms,omitempty"`
	// Stderr is written to the host's stderr at start.
	Stderr string `json:"stderr,omitempty"`
	// Usage, when set, is reported as is (total = sum of the given counts);
	// otherwise usage counts the words of input and output.
	Usage *Usage `json:"usage,omitempty"`
	// ServiceTokenEnv (services only, service.go) names the variable
	// holding the token of a prepared service instead of a random one.
	ServiceTokenEnv string `json:"service_token_env,omitempty"`
	// RelayRecords, when Relay is enabled, makes each turn post a turn
	// scope with this many marks to Fabric's ATOF sink (relay.go), plus
	// RelayStray records that belong to no turn.
	RelayRecords int `json:"relay_records,omitempty"`
	RelayStray   int `json:"relay_stray,omitempty"`
	// Mode model (model.go): ModelRole picks the model role (default: the
	// role "default", else the only one), MaxSteps caps the model requests
	// of a turn (default and at most 8), ToolTimeoutMS bounds one shell
	// command (default 30,000).
	ModelRole     string `json:"model_role,omitempty"`
	MaxSteps      int    `json:"max_steps,omitempty"`
	ToolTimeoutMS int    `json:"tool_timeout_ms,omitempty"`
}

// Usage is reported token usage.
type Usage struct {
	InputTokens  *uint64 `json:"input_tokens,omitempty"`
	OutputTokens *uint64 `json:"output_tokens,omitempty"`
}

// New returns the scripted adapter.
func New() adapterkit.Adapter { return adapter{} }

type adapter struct{}

func (adapter) Start(ctx context.Context, in adapterkit.StartInput) (adapterkit.Session, error) {
	set, err := parseSettings(in.Config.Harness)
	if err != nil {
		return nil, adapterkit.Wrap(CodeInvalidSettings, err)
	}
	if set.Stderr != "" {
		fmt.Fprintln(os.Stderr, set.Stderr)
	}
	switch set.Mode {
	case ModeStartFailure:
		return nil, &adapterkit.Error{Code: CodeStartFailure, Message: "scripted start failure (mode start_failure)"}
	case ModeExitOnStart:
		os.Exit(3)
	}
	s := &session{set: set}
	if set.Mode == ModeModel {
		if s.model, err = newModelClient(in, set); err != nil {
			return nil, adapterkit.Wrap(CodeInvalidSettings, err)
		}
	}
	if set.RelayRecords > 0 || set.RelayStray > 0 {
		if s.relay, err = newRelayEmitter(in.TelemetryPlan); err != nil {
			return nil, adapterkit.Errorf(CodeInvalidSettings, "relay: %w", err)
		}
	}
	if in.Service != nil {
		if s.svc, err = connectService(ctx, in.Service); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func parseSettings(h *contract.AgentHarnessConfig) (Settings, error) {
	var set Settings
	if h == nil || !settingsFast(h.Settings, &set) {
		set = Settings{}
		if err := adapterkit.DecodeSettings(h, &set); err != nil {
			return set, err
		}
	}
	switch set.Mode {
	case "":
		set.Mode = ModeOK
	case ModeOK, ModeStartFailure, ModeExitOnStart, ModeInvokeFailure, ModeMalformedOutput, ModeHang, ModeCrashMidInvoke, ModeSlowStream, ModeModel:
	default:
		return set, fmt.Errorf("settings: unknown mode %q", set.Mode)
	}
	if set.FailOnTurn < 0 || set.DelayMS < 0 || set.MaxSteps < 0 || set.ToolTimeoutMS < 0 || (set.Events != nil && *set.Events < 0) || (set.EventIntervalMS != nil && *set.EventIntervalMS < 0) {
		return set, fmt.Errorf("settings: negative count or duration")
	}
	if set.FailOnTurn == 0 {
		set.FailOnTurn = 1
	}
	return set, nil
}

// settingsFast decodes settings into set as adapterkit.DecodeSettings
// does, for the values a decoded JSON document holds (strings, float64
// numbers, lists, null), without encoding/json's reflection, which an
// idle host would otherwise run once at start and keep the encoders and
// code of. It reports false for anything else (a key it does not know
// exactly, a value of another type, usage), which DecodeSettings then
// decides, errors included.
func settingsFast(m map[string]any, set *Settings) bool {
	for k, v := range m {
		var ok bool
		switch k {
		case "response":
			ok = optional(v, &set.Response, asString)
		case "responses":
			ok = stringList(v, &set.Responses)
		case "mode":
			ok = value(v, &set.Mode, asString)
		case "fail_on_turn":
			ok = value(v, &set.FailOnTurn, asInt)
		case "events":
			ok = optional(v, &set.Events, asInt)
		case "event_interval_ms":
			ok = optional(v, &set.EventIntervalMS, asInt)
		case "delay_ms":
			ok = value(v, &set.DelayMS, asInt)
		case "stderr":
			ok = value(v, &set.Stderr, asString)
		case "service_token_env":
			ok = value(v, &set.ServiceTokenEnv, asString)
		case "relay_records":
			ok = value(v, &set.RelayRecords, asInt)
		case "relay_stray":
			ok = value(v, &set.RelayStray, asInt)
		case "model_role":
			ok = value(v, &set.ModelRole, asString)
		case "max_steps":
			ok = value(v, &set.MaxSteps, asInt)
		case "tool_timeout_ms":
			ok = value(v, &set.ToolTimeoutMS, asInt)
		}
		if !ok {
			return false
		}
	}
	return true
}

// value sets *dst from v; null leaves it, as in JSON.
func value[T any](v any, dst *T, as func(any) (T, bool)) bool {
	if v == nil {
		return true
	}
	x, ok := as(v)
	*dst = x
	return ok
}

// optional sets *dst to a new T from v; null makes it nil, as in JSON.
func optional[T any](v any, dst **T, as func(any) (T, bool)) bool {
	if v == nil {
		*dst = nil
		return true
	}
	x, ok := as(v)
	*dst = &x
	return ok
}

func stringList(v any, dst *[]string) bool {
	if v == nil {
		*dst = nil
		return true
	}
	l, ok := v.([]any)
	if !ok {
		return false
	}
	*dst = make([]string, len(l))
	for i, e := range l {
		if e == nil {
			continue
		}
		if (*dst)[i], ok = e.(string); !ok {
			return false
		}
	}
	return true
}

func asString(v any) (string, bool) {
	s, ok := v.(string)
	return s, ok
}

// asInt takes a float64 that encoding/json writes as an integer and reads
// back into an int: a whole number of at most 2^53 in magnitude.
func asInt(v any) (int, bool) {
	f, ok := v.(float64)
	if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int(f), true
}

type session struct {
	set   Settings
	relay *relayEmitter // nil unless Relay is on and relay_records is set
	turn  atomic.Int64
	busy  atomic.Bool
	// failing is set once invoke_failure has reached its turn.
	failing atomic.Bool
	// svc is the shared service the runtime is bound to (service.go).
	svc *serviceClient
	// model is the model route of mode model, nil otherwise.
	model *modelClient
}

func cancelled() contract.AgentRunResult {
	return contract.AgentRunResult{Status: contract.StatusCancelled, Output: ""}
}

func (s *session) Invoke(ctx context.Context, inv adapterkit.Invocation) (contract.AgentRunResult, error) {
	s.busy.Store(true)
	defer s.busy.Store(false)
	turn := int(s.turn.Add(1))
	input := adapterkit.InputText(inv.Request.Input)
	traceparent := ""
	if tc := inv.Context.Telemetry; tc != nil {
		traceparent = tc.Env["TRACEPARENT"]
	}
	answer := s.answer(turn, input, traceparent)
	if s.relay != nil {
		if err := s.relay.postTurn(ctx, inv.Context.RequestID, turn, s.set.RelayRecords, s.set.RelayStray); err != nil {
			inv.Events.Emit(adapterkit.Event{Kind: "warning", Message: "relay: " + err.Error()})
		}
	}
	if s.model != nil {
		return s.model.invokeModel(ctx, inv, input), nil
	}
	if s.svc != nil {
		var failed *contract.AgentRunResult
		if answer, failed = s.svc.recordTurn(ctx, inv.Context.RuntimeID, input, answer); failed != nil {
			return *failed, nil
		}
	}
	misbehave := turn >= s.set.FailOnTurn

	if misbehave {
		switch s.set.Mode {
		case ModeInvokeFailure:
			s.failing.Store(true)
			return contract.AgentRunResult{
				Status: contract.StatusFailed,
				Output: "",
				Error: &contract.AgentRunError{
					Code:      CodeInvokeFailure,
					Message:   fmt.Sprintf("scripted invoke failure on turn %d (mode invoke_failure)", turn),
					Retryable: true,
				},
			}, nil
		case ModeMalformedOutput:
			if w := hostfault.Writer(ctx); w != nil {
				_, _ = w.Write([]byte(malformedLine))
			}
			<-ctx.Done()
			return cancelled(), nil
		case ModeHang:
			<-ctx.Done()
			return cancelled(), nil
		case ModeCrashMidInvoke:
			inv.Events.Emit(adapterkit.Event{Kind: eventKind, Message: "crashing", Metadata: map[string]any{"index": 0}})
			time.Sleep(crashFlushDelay)
			if p, err := os.FindProcess(os.Getpid()); err == nil {
				_ = p.Kill() // SIGKILL: no cleanup, as in a real crash
			}
			select {}
		}
	}

	n, interval := 0, 0
	if s.set.Events != nil {
		n = *s.set.Events
	}
	if s.set.EventIntervalMS != nil {
		interval = *s.set.EventIntervalMS
	}
	if s.set.Mode == ModeSlowStream {
		if s.set.Events == nil {
			n = slowStreamEvents
		}
		if s.set.EventIntervalMS == nil {
			interval = slowStreamIntervalMS
		}
	}
	chunks := newChunker(answer, n)
	for i := range n {
		if interval > 0 && !sleep(ctx, time.Duration(interval)*time.Millisecond) {
			return cancelled(), nil
		}
		if ctx.Err() != nil {
			return cancelled(), nil
		}
		inv.Events.Emit(adapterkit.Event{Kind: eventKind, Message: chunks.next(), Metadata: map[string]any{"index": i}})
	}
	if s.set.DelayMS > 0 && !sleep(ctx, time.Duration(s.set.DelayMS)*time.Millisecond) {
		return cancelled(), nil
	}
	return contract.AgentRunResult{Status: contract.StatusSucceeded, Output: answer, Usage: s.usage(input, answer)}, nil
}

// answer renders the template of turn.
func (s *session) answer(turn int, input, traceparent string) string {
	tmpl := defaultResponse
	switch {
	case len(s.set.Responses) > 0:
		tmpl = s.set.Responses[min(turn, len(s.set.Responses))-1]
	case s.set.Response != nil:
		tmpl = *s.set.Response
	}
	if !strings.Contains(tmpl, "{") {
		return tmpl
	}
	return strings.NewReplacer("{input}", input, "{turn}", strconv.Itoa(turn), "{traceparent}", traceparent).Replace(tmpl)
}

func (s *session) usage(input, output string) *contract.RunUsage {
	if u := s.set.Usage; u != nil {
		r := &contract.RunUsage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}
		if u.InputTokens != nil || u.OutputTokens != nil {
			var total uint64
			if u.InputTokens != nil {
				total += *u.InputTokens
			}
			if u.OutputTokens != nil {
				total += *u.OutputTokens
			}
			r.TotalTokens = &total
		}
		return r
	}
	in, out := uint64(len(strings.Fields(input))), uint64(len(strings.Fields(output)))
	total := in + out
	return &contract.RunUsage{InputTokens: &in, OutputTokens: &out, TotalTokens: &total}
}

func (s *session) Health(ctx context.Context, level string) (adapterkit.Health, error) {
	h := adapterkit.Health{Source: "scripted", Activity: contract.ActivityIdle, ObservedAtMillis: time.Now().UnixMilli()}
	if s.busy.Load() {
		h.Activity = contract.ActivityBusy
	}
	switch level {
	case contract.LevelLive, contract.LevelActive:
		h.Outcome = contract.OutcomePassed
	case contract.LevelReady:
		h.Outcome = contract.OutcomePassed
		if s.failing.Load() {
			h.Outcome, h.ReasonCode, h.Message = contract.OutcomeFailed, contract.ReasonHealthFailed, "invoke_failure mode reached its failing turn"
		} else if s.svc != nil {
			if err := s.svc.ready(ctx); err != nil {
				if ctx.Err() != nil {
					return h, err // out of time: unknown, not failed
				}
				h.Outcome, h.ReasonCode, h.Message = contract.OutcomeFailed, contract.ReasonServiceUnavailable, "the bound service does not answer: "+err.Error()
			}
		}
	default:
		h.Outcome, h.ReasonCode = contract.OutcomeUnsupported, contract.ReasonUnsupportedLevel
	}
	return h, nil
}

func (s *session) Stop(context.Context) error {
	if s.model != nil {
		s.model.close()
	}
	if s.svc != nil {
		s.svc.close()
	}
	return nil
}

// chunker cuts s into n consecutive chunks of nearly equal rune counts
// whose concatenation is s (some are empty when s has fewer than n runes),
// one at a time, so that millions of events cost no memory up front.
type chunker struct {
	s                   string
	n, runes            int
	i, start, seenRunes int
}

func newChunker(s string, n int) *chunker {
	return &chunker{s: s, n: n, runes: utf8.RuneCountInString(s)}
}

func (c *chunker) next() string {
	c.i++
	want := c.runes * c.i / c.n
	end := c.start
	for c.seenRunes < want {
		_, size := utf8.DecodeRuneInString(c.s[end:])
		end += size
		c.seenRunes++
	}
	chunk := c.s[c.start:end]
	c.start = end
	return chunk
}

// sleep waits d or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
