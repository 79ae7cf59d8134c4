// Package access is the agent access gateway: an HTTP service that lets
// outside clients (a voice app, a chat front end, a script) talk to an
// already-running deployed agent over the OpenAI Responses API (and Chat
// Completions as a second surface), with agent-scoped, revocable keys,
// idempotent turns and no blind redispatch. The deployment supervisor hosts
// it as the integration kind "access" and implements Dispatcher; the gateway
// keeps its grants, idempotency records, response snapshots and event logs
// in an embedded SQLite store (WAL) that survives restarts.
//
// It must never hold a client token (only HMAC verifiers), never log a
// token, never hand a client a native credential, socket path or native id,
// never send a turn twice (a turn whose outcome it cannot establish becomes
// outcome_unknown until Fabric's own record or an operator settles it), and
// never answer an admitted turn with a retryable HTTP status.
package access
