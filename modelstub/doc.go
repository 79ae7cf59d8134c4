// Package modelstub is a scripted model endpoint for tests: one loopback HTTP
// server that speaks the OpenAI Chat Completions and Responses APIs, the
// Anthropic Messages API (with count_tokens) and the Gemini generateContent
// API, streaming (SSE) and not, the way the real clients of those APIs expect.
//
// Routes (matched by path suffix, so any prefix such as /v1 or /openai/v1
// works):
//
//	POST …/chat/completions                          OpenAI Chat Completions
//	POST …/responses                                 OpenAI Responses
//	POST …/messages[?beta=true]                      Anthropic Messages
//	POST …/messages/count_tokens                     {"input_tokens": N}
//	POST …/models/{model}:generateContent            Gemini
//	POST …/models/{model}:streamGenerateContent[?alt=sse]
//	POST …/models/{model}:countTokens                {"totalTokens": N}
//	GET  …/models, …/models/{id}                     model listing
//	HEAD anything                                    200
//	GET  /health                                     {"status": "ok"}
//	GET  /_requests[?since=SEQ], DELETE /_requests   the request records
//
// Without a script every request is answered with [DefaultText]. A [Script]
// (YAML or JSON, see [ParseScript]) says, per matched request, what to answer
// instead: text (optionally streamed slowly in chunks), a call to whatever
// shell-like tool the request offers, an error in the API's own format, or a
// stall:
//
//	default: {text: "4"}                 # instead of DefaultText
//	rules:
//	  - match: {contains: STUBTOOL}      # in the last user message
//	    reply: {tool_call: {command: "echo STUB_TOOL_OK"}}
//	  - match: {contains: STUBSLOW}
//	    reply: {text: "one two three", chunks: 20, interval_ms: 500}
//	  - match: {api: responses, nth: 2}  # the second Responses request
//	    reply: {error: {status: 429, retry_after: 1}}
//	  - match: {contains: HANG}
//	    reply: {stall: true}             # until the client goes away
//
// A tool_call rule only answers while the current turn holds no tool result,
// so the next request of the turn (carrying the command's output) falls
// through to later rules and the turn ends with text.
//
// Side requests that harnesses make on their own (session titles, memory
// extraction, routing classifiers, token counting, HEAD probes) are detected
// and answered without consuming the rules meant for the main conversation;
// see [Script] for the heuristic.
//
// Every request is recorded ([Request]): method, path, query, API, model,
// where the credential came from and whether it passed the key check, the
// rule that answered, and the body. No credential value is ever recorded or
// logged.
//
// Use [New] in Go tests (like net/http/httptest) and `fabric model serve` from
// a shell. The package must never record or log a credential value, never
// reach the network beyond its own listener, and keeps no global state.
package modelstub
