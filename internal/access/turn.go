package access

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/fabric-runtime/fabric/contract"
)

// Surfaces.
const (
	surfaceResponses = "responses"
	surfaceChat      = "chat"
)

// turn is one response: live while its turn runs, or loaded from the store.
type turn struct {
	id, client, agent, keyID, conv, surface string
	created                                 time.Time
	onDisconnect                            string
	background                              bool

	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	tr      *translator
	resp    *responseObject // the translator's working snapshot
	events  []event
	visible int           // events subscribers may see
	final   bool          // the terminal event is visible
	notify  chan struct{} // closed when visible or final change
	done    chan struct{} // closed once the outcome is stored and the agent is free
	expired bool          // a stored turn whose event log the resume window dropped
	fpv     string        // the request fingerprint
	scope   string        // the idempotency scope, "" when unkeyed
}

func (t *turn) fp() string { return t.fpv }

func newTurn(rec *record, resp *responseObject, base context.Context) *turn {
	t := &turn{id: rec.id, client: rec.client, agent: rec.agent, keyID: rec.keyID, conv: rec.conversation, surface: rec.surface,
		created: rec.created, background: resp.Background, resp: resp, notify: make(chan struct{}), done: make(chan struct{})}
	t.ctx, t.cancel = context.WithCancel(base)
	t.tr = newTranslator(resp, func(e event) { t.events = append(t.events, e) })
	return t
}

// storedTurn is a finished response read from the store.
func storedTurn(rec *record, evs []storedEvent) (*turn, error) {
	var resp responseObject
	if err := json.Unmarshal(rec.snapshot, &resp); err != nil {
		return nil, fmt.Errorf("access: snapshot of %s: %w", rec.id, err)
	}
	t := &turn{id: rec.id, client: rec.client, agent: rec.agent, keyID: rec.keyID, conv: rec.conversation, surface: rec.surface,
		created: rec.created, background: resp.Background, resp: &resp, final: true, notify: make(chan struct{}), done: make(chan struct{}),
		cancel: func() {}, fpv: rec.fingerprint, scope: rec.idemScope}
	for _, e := range evs {
		t.events = append(t.events, event{typ: e.typ, data: e.data})
	}
	if t.expired = len(evs) == 0; t.expired {
		// The resume window dropped the log: a replay of the same key gets
		// the creation and the terminal event of the stored snapshot.
		start := resp.clone()
		start.Status, start.Error, start.Usage, start.Output = statusInProgress, nil, nil, []map[string]any{}
		tr := newTranslator(start, func(e event) { t.events = append(t.events, e) })
		tr.created()
		typ := map[string]string{statusCompleted: "response.completed", statusCancelled: "response.incomplete"}[resp.Status]
		if typ == "" {
			typ = "response.failed"
		}
		tr.send(typ, map[string]any{"response": resp.clone()})
	}
	t.visible = len(t.events)
	close(t.done)
	return t, nil
}

// publish makes the events so far visible.
func (t *turn) publishLocked() {
	if t.visible == len(t.events) {
		return
	}
	t.visible = len(t.events)
	close(t.notify)
	t.notify = make(chan struct{})
}

func (t *turn) fabricEvent(ev contract.FabricEvent) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.final {
		return
	}
	t.tr.fabric(ev)
	t.publishLocked()
}

// since returns the visible events from index i on.
func (t *turn) since(i int) ([]event, bool, <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var evs []event
	if i < t.visible {
		evs = t.events[i:t.visible]
	}
	return evs, t.final && i+len(evs) >= t.visible, t.notify
}

func (t *turn) snapshot() *responseObject {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.resp.clone()
	if !t.final && s.Status != statusQueued {
		s.Status = statusInProgress
		s.Error, s.Usage = nil, nil
	}
	return s
}

func (t *turn) status() string { return t.snapshot().Status }

func fingerprint(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// handleCreate is POST /v1/responses and POST /v1/chat/completions.
func (g *Gateway) handleCreate(w http.ResponseWriter, r *http.Request, surface string) {
	p, body, ok := g.authenticatedBody(w, r)
	if !ok {
		return
	}
	decode := decodeResponsesCreate
	if surface == surfaceChat {
		decode = decodeChatCreate
	}
	req, e := decode(body)
	if e != nil {
		writeError(w, e)
		return
	}
	if !modelMatches(req.Model, p.g.agent) {
		writeError(w, notFound("model"))
		return
	}
	key, e := idempotencyKey(r)
	if e != nil {
		writeError(w, e)
		return
	}
	if key == "" && p.b.Idempotency == IdempotencyRequired {
		writeError(w, badRequest("idempotency_key_required", "Idempotency-Key", "this agent requires an Idempotency-Key on every turn"))
		return
	}
	retry := 0
	if key == "" {
		retry = stainlessRetry(r.Header.Get("X-Stainless-Retry-Count"))
	}
	t, replayed, e := g.admit(r.Context(), p, req, key, retry, surface, onDisconnect(r, p.b))
	if e != nil {
		writeError(w, e)
		return
	}
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	g.respond(w, r, p, t, req, surface, replayed)
}

// admit finds the turn a retry repeats, or admits a new one: checks,
// write-ahead record, then dispatch.
func (g *Gateway) admit(ctx context.Context, p *principal, req *createRequest, key string, retry int, surface, disconnect string) (*turn, bool, *apiError) {
	fp := fingerprint(req.Fingerprint)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil, false, &apiError{status: 503, typ: "server_error", code: "gateway_closing", message: "the gateway is shutting down", retry: true, retryAfter: time.Second}
	}
	scope := ""
	switch {
	case key != "":
		scope = scoped(g.pepper, "idem", p.g.client, p.g.agent, key)
		if t := g.liveScope[scope]; t != nil {
			if t.fp() != fp {
				return nil, false, keyReused()
			}
			return t, true, nil
		}
		rec, err := g.st.byScope(ctx, scope)
		if err != nil {
			return nil, false, storeError(err)
		}
		if rec != nil {
			if rec.fingerprint != fp {
				return nil, false, keyReused()
			}
			t, e := g.turnOfLocked(ctx, rec)
			return t, true, e
		}
	case retry >= 1 && p.b.Idempotency == IdempotencyOptional:
		rec, err := g.st.retryOf(ctx, p.g.client, p.g.agent, fp, g.now().Add(-retryWindow))
		if err != nil {
			return nil, false, storeError(err)
		}
		if rec != nil {
			t, e := g.turnOfLocked(ctx, rec)
			return t, true, e
		}
	}
	if g.busy[p.g.agent] != nil {
		return nil, false, &apiError{status: 409, typ: "conflict_error", code: "conversation_busy",
			message: "a turn is running on this agent; cancel it or wait for it to end"}
	}
	info, ready, err := g.agentReady(ctx, p.b)
	starting := info.RuntimeID == "" && info.OnDemand
	if err != nil || (info.RuntimeID == "" && !starting) || info.Generation != p.b.Generation || (!starting && !ready && info.Health != "unknown") {
		return nil, false, &apiError{status: 503, typ: "server_error", code: "agent_unavailable", message: "the agent is not ready; nothing was run", retry: true, retryAfter: time.Second}
	}
	epoch := info.Epoch
	if epoch == "" {
		epoch = info.RuntimeID
	}
	conv := "conv_" + scoped(g.pepper, "conv", p.g.agent, epoch)[:32]
	if e := g.continuityLocked(ctx, p, req, conv); e != nil {
		return nil, false, e
	}
	now := g.now()
	id := newID("resp_")
	status := statusInProgress
	if starting {
		// The runtime starts for this turn: queued until it runs.
		status = statusQueued
	}
	resp := &responseObject{ID: id, Object: "response", CreatedAt: now.Unix(), Status: status, Background: req.Background,
		Metadata: req.Metadata, Model: p.g.agent, Output: []map[string]any{}, Conversation: &convRef{ID: conv}, Store: true,
		Text: map[string]any{"format": map[string]any{"type": "text"}}, ToolChoice: "auto", Tools: []any{}, Truncation: "disabled"}
	if resp.Metadata == nil {
		resp.Metadata = map[string]string{}
	}
	if req.PreviousResponseID != "" {
		prev := req.PreviousResponseID
		resp.PreviousResponseID = &prev
	}
	snap, _ := json.Marshal(resp)
	rec := &record{id: id, client: p.g.client, agent: p.g.agent, keyID: p.g.keyID, runtimeID: info.RuntimeID, conversation: conv,
		idemScope: scope, fingerprint: fp, surface: surface, input: req.Input, state: stateAdmitted, status: statusInProgress,
		snapshot: snap, created: now}
	if err := g.st.insertRecord(ctx, rec); err != nil { // the write-ahead record: no record, no dispatch
		return nil, false, storeError(err)
	}
	t := newTurn(rec, resp, g.base)
	t.onDisconnect = disconnect
	t.fpv = fp
	t.scope = scope
	t.tr.created()
	t.publishLocked()
	g.live[id], g.busy[p.g.agent] = t, t
	if scope != "" {
		g.liveScope[scope] = t
	}
	g.wg.Add(1)
	go g.dispatch(t, req.Input)
	g.log.Info("access turn admitted", "response_id", id, "agent", p.g.agent, "client", p.g.client, "key_id", p.g.keyID, "surface", surface)
	return t, false, nil
}

func keyReused() *apiError {
	return &apiError{status: 422, typ: "invalid_request_error", code: "idempotency_key_reused", param: "Idempotency-Key",
		message: "this Idempotency-Key was used with a different request"}
}

func storeError(err error) *apiError {
	return &apiError{status: 503, typ: "server_error", code: "store_unavailable", message: "the gateway store failed; nothing was run", retry: true, retryAfter: time.Second}
}

// continuityLocked checks previous_response_id and conversation against
// the agent's one conversation (its current runtime).
func (g *Gateway) continuityLocked(ctx context.Context, p *principal, req *createRequest, conv string) *apiError {
	if req.Conversation != "" && req.Conversation != conv {
		known, err := g.st.knownConversation(ctx, p.g.client, p.g.agent, req.Conversation)
		if err != nil {
			return storeError(err)
		}
		if !known {
			return notFound("conversation")
		}
		return badRequest("conversation_ended", "conversation", "this conversation ended when the agent's runtime was replaced; continue without it or with the current conversation")
	}
	if req.PreviousResponseID == "" {
		return nil
	}
	rec, err := g.st.getRecord(ctx, strings.TrimPrefix(req.PreviousResponseID, "chatcmpl-"))
	if err != nil {
		return storeError(err)
	}
	if rec == nil || !p.owns(rec.client, rec.agent) {
		return notFound("response")
	}
	if rec.conversation != conv {
		return badRequest("conversation_ended", "previous_response_id", "that response's conversation ended when the agent's runtime was replaced")
	}
	head, err := g.st.head(ctx, p.g.agent)
	if err != nil {
		return storeError(err)
	}
	if head == nil || head.id != rec.id {
		return badRequest("fork_not_supported", "previous_response_id", "previous_response_id must be the latest turn of the agent's conversation")
	}
	return nil
}

// turnOfLocked returns the live turn of a record or loads it from the store.
func (g *Gateway) turnOfLocked(ctx context.Context, rec *record) (*turn, *apiError) {
	if t := g.live[rec.id]; t != nil {
		return t, nil
	}
	evs, err := g.st.events(ctx, rec.id)
	if err != nil {
		return nil, storeError(err)
	}
	t, err := storedTurn(rec, evs)
	if err != nil {
		return nil, storeError(err)
	}
	return t, nil
}

// find returns the caller's response id (or chat id), or 404.
func (g *Gateway) find(ctx context.Context, p *principal, id string) (*turn, *apiError) {
	id = strings.TrimPrefix(id, "chatcmpl-")
	g.mu.Lock()
	defer g.mu.Unlock()
	if t := g.live[id]; t != nil {
		if !p.owns(t.client, t.agent) {
			return nil, notFound("response")
		}
		return t, nil
	}
	rec, err := g.st.getRecord(ctx, id)
	if err != nil {
		return nil, storeError(err)
	}
	if rec == nil || !p.owns(rec.client, rec.agent) {
		return nil, notFound("response") // never reveal another client's id
	}
	return g.turnOfLocked(ctx, rec)
}

// dispatch runs the turn on the agent's runtime and records its outcome.
func (g *Gateway) dispatch(t *turn, input string) {
	defer g.wg.Done()
	res, err := g.opts.Dispatcher.Invoke(t.ctx, t.agent, contract.RunRequest{RequestID: t.id, Input: input}, t.fabricEvent)
	var o outcome
	switch {
	case err == nil && res != nil:
		o = outcomeOf(res)
	case errors.Is(err, ErrBusy):
		o = outcome{status: statusFailed, err: &respError{Code: codeAgentBusy, Message: "another turn ran on the agent's runtime; this one was not run"}}
	case errors.Is(err, ErrStartFailed):
		o = outcome{status: statusFailed, err: &respError{Code: codeAgentStartFailed, Message: err.Error() + "; this turn was not run"}}
	case errors.Is(err, ErrUnavailable):
		o = outcome{status: statusFailed, err: &respError{Code: codeAgentUnavailable, Message: "the agent had no runtime; this turn was not run"}}
	default:
		g.log.Warn("access turn outcome unknown", "response_id", t.id, "agent", t.agent, "err", err)
		o = g.askFabric(t)
	}
	g.complete(t, o, false)
}

// askFabric settles a turn whose dispatch gave no answer against
// Fabric's own record of its request id.
func (g *Gateway) askFabric(t *turn) outcome {
	for {
		ctx, cancel := context.WithTimeout(g.base, 5*time.Second)
		res, running, found, err := g.opts.Dispatcher.Lookup(ctx, t.agent, t.id)
		cancel()
		switch {
		case err == nil && found && res != nil:
			return outcomeOf(res)
		case err == nil && found && running:
			if !g.pause(t.ctx) {
				return unknownOutcome()
			}
		default:
			return unknownOutcome()
		}
	}
}

func unknownOutcome() outcome {
	return outcome{status: statusFailed, err: &respError{Code: codeOutcomeUnknown, Message: msgOutcomeUnknown}}
}

// pause waits one adoption poll; false when ctx ended.
func (g *Gateway) pause(ctx context.Context) bool {
	tm := time.NewTimer(g.opts.AdoptPoll)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// complete sends the terminal event, stores the outcome, frees the agent,
// and only then lets subscribers see the end (a client that saw the end
// can send its next turn at once).
func (g *Gateway) complete(t *turn, o outcome, replay bool) {
	t.mu.Lock()
	if replay { // adopted from Fabric's record: the whole log is derived now
		t.publishLocked()
	}
	t.tr.finish(o)
	snap, _ := json.Marshal(t.resp)
	evs := make([]storedEvent, len(t.events))
	for i, e := range t.events {
		evs[i] = storedEvent{typ: e.typ, data: e.data}
	}
	status := t.resp.Status
	t.mu.Unlock()
	ctx, cancel := context.WithTimeout(g.base, 10*time.Second)
	if err := g.st.finish(ctx, t.id, status, snap, evs, g.now()); err != nil {
		g.log.Error("access store outcome", "response_id", t.id, "err", err)
	}
	cancel()
	g.mu.Lock()
	if g.live[t.id] == t {
		delete(g.live, t.id)
	}
	if g.busy[t.agent] == t {
		delete(g.busy, t.agent)
	}
	if t.scope != "" && g.liveScope[t.scope] == t {
		delete(g.liveScope, t.scope)
	}
	g.mu.Unlock()
	t.mu.Lock()
	t.final = true
	t.visible = len(t.events)
	close(t.notify)
	t.notify = make(chan struct{})
	t.mu.Unlock()
	t.cancel()
	close(t.done)
	g.log.Info("access turn ended", "response_id", t.id, "agent", t.agent, "status", status)
}

// recover settles every write-ahead record left by an earlier gateway:
// adopted from Fabric's record, followed while Fabric still runs it, or
// outcome_unknown. None is dispatched again.
func (g *Gateway) recover(ctx context.Context) error {
	recs, err := g.st.admitted(ctx)
	if err != nil {
		return fmt.Errorf("access: recover: %w", err)
	}
	for _, rec := range recs {
		var resp responseObject
		if err := json.Unmarshal(rec.snapshot, &resp); err != nil {
			return fmt.Errorf("access: recover %s: %w", rec.id, err)
		}
		t := newTurn(rec, &resp, g.base)
		t.onDisconnect = OnDisconnectContinue
		t.scope = rec.idemScope
		t.fpv = rec.fingerprint
		t.tr.created()
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		res, running, found, err := g.opts.Dispatcher.Lookup(lctx, rec.agent, rec.id)
		cancel()
		switch {
		case err == nil && found && res != nil:
			g.adopt(t, res)
			g.log.Info("access turn adopted", "response_id", rec.id, "agent", rec.agent)
		case err == nil && found && running:
			t.publishLocked()
			g.mu.Lock()
			g.live[t.id], g.busy[t.agent] = t, t
			if t.scope != "" {
				g.liveScope[t.scope] = t
			}
			g.mu.Unlock()
			g.wg.Add(1)
			go g.follow(t)
			g.log.Info("access turn adopted while running", "response_id", rec.id, "agent", rec.agent)
		default:
			g.log.Warn("access turn outcome unknown after restart", "response_id", rec.id, "agent", rec.agent, "err", err)
			g.complete(t, unknownOutcome(), true)
		}
	}
	return nil
}

// adopt derives a turn's whole log from Fabric's record.
func (g *Gateway) adopt(t *turn, res *contract.RunResult) {
	t.mu.Lock()
	for _, ev := range res.Events {
		t.tr.fabric(ev)
	}
	t.mu.Unlock()
	g.complete(t, outcomeOf(res), true)
}

// follow polls Fabric's record of a turn adopted while running.
func (g *Gateway) follow(t *turn) {
	defer g.wg.Done()
	for {
		if !g.pause(t.ctx) {
			g.complete(t, unknownOutcome(), true)
			return
		}
		ctx, cancel := context.WithTimeout(g.base, 5*time.Second)
		res, running, found, err := g.opts.Dispatcher.Lookup(ctx, t.agent, t.id)
		cancel()
		switch {
		case err == nil && found && res != nil:
			g.adopt(t, res)
			return
		case err == nil && found && running:
		default:
			g.complete(t, unknownOutcome(), true)
			return
		}
	}
}

// Reconcile lets an operator settle an outcome_unknown turn with the
// outcome observed (completed, failed or cancelled) and the evidence
// (kept in the store, never served). The same key then returns it.
func (g *Gateway) Reconcile(responseID, outcomeName, evidence string) error {
	ctx := context.Background()
	g.mu.Lock()
	defer g.mu.Unlock()
	rec, err := g.st.getRecord(ctx, strings.TrimPrefix(responseID, "chatcmpl-"))
	if err != nil {
		return err
	}
	if rec == nil {
		return fmt.Errorf("access: no response %q", responseID)
	}
	var resp responseObject
	if err := json.Unmarshal(rec.snapshot, &resp); err != nil {
		return err
	}
	if rec.state != stateDone || resp.Error == nil || resp.Error.Code != codeOutcomeUnknown {
		return fmt.Errorf("access: response %s is not outcome_unknown", rec.id)
	}
	if strings.TrimSpace(evidence) == "" {
		return errors.New("access: reconcile needs the observed evidence")
	}
	typ := ""
	switch outcomeName {
	case statusCompleted:
		resp.Status, resp.Error, typ = statusCompleted, nil, "response.completed"
	case statusCancelled:
		resp.Status, resp.Error, typ = statusCancelled, nil, "response.incomplete"
	case statusFailed:
		resp.Status, resp.Error, typ = statusFailed, &respError{Code: "turn_failed", Message: "the turn failed (settled by an operator)"}, "response.failed"
	default:
		return fmt.Errorf("access: outcome %q: want completed, failed or cancelled", outcomeName)
	}
	evs, err := g.st.events(ctx, rec.id)
	if err != nil {
		return err
	}
	snap, _ := json.Marshal(&resp)
	last := len(evs) - 1
	data, _ := json.Marshal(map[string]any{"type": typ, "sequence_number": max(last, 0), "response": &resp})
	if err := g.st.settle(ctx, rec.id, resp.Status, snap, storedEvent{typ: typ, data: data}, last, evidence); err != nil {
		return err
	}
	g.log.Info("access turn reconciled", "response_id", rec.id, "outcome", outcomeName)
	return nil
}
