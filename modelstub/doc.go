// Package modelstub is a scripted model endpoint for tests: one loopback HTTP
// server that speaks the OpenAI Chat Completions and Responses APIs, the
// Anthropic Messages API (with count_tokens) and the Gemini generateContent
// API, streaming (SSE) and not, the way the real clients of those APIs expect.
//
// Without a script every request is answered with a short fixed text. A
// [Script] says, per matched request, what to answer instead: text (optionally
// streamed slowly in chunks), a call to whatever shell-like tool the request
// offers, an error in the API's own format, or a stall. Every request is
// recorded (never a credential value) and served at GET /_requests.
//
// Side requests that harnesses make on their own (session titles, memory
// extraction, routing classifiers, token counting, HEAD probes) are detected
// and answered without consuming the rules meant for the main conversation;
// see [Script] for the heuristic.
//
// Use [New] in Go tests (like net/http/httptest) and `fabric model serve` from
// a shell. The package must never record or log a credential value, never
// reach the network beyond its own listener, and keeps no global state.
package modelstub
