// Package modelproxy is the brokered model proxy: a loopback HTTP server
// that holds the real provider credentials of a deployment's inference
// routes and lets each attached agent reach them with a placeholder
// credential of its own.
//
// A Proxy serves named routes (SetRoute), each one upstream of one wire API
// (openai-responses, openai-chat-completions, anthropic-messages). Grant
// issues an agent a random placeholder ("fabp_…") for one route; the proxy
// keeps only an HMAC of it under a per-process random key. A request to
// /r/<route>/… must present its placeholder as Authorization: Bearer or
// x-api-key; the proxy matches it to exactly one grant of that route,
// replaces it with the real credential, and forwards the request to the
// route's base URL, streaming the answer back chunk by chunk while it reads
// the token usage (modelstub.BodyUsage, modelstub.EventUsage) and counts it
// per agent (Usage). Revoke stops a placeholder at once and cuts its
// streams in flight. docs/model-proxy.md describes the routes, headers and
// limits.
//
// What modelproxy must never do:
//   - let a real credential or a placeholder reach a log record or a
//     response: error bodies are fixed texts, and a credential the upstream
//     echoes is masked in its headers and body;
//   - forward a request that no grant of its route authorizes, or a
//     credential header the client sent;
//   - listen beyond loopback unless Options.AllowNonLoopback says so;
//   - hold a stream in memory: responses flow through as they arrive, and
//     the usage reader keeps at most one event (or a bounded body);
//   - leave a goroutine behind once Serve returns.
package modelproxy
