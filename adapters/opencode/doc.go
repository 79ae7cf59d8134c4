// Package opencode is the Fabric adapter for OpenCode (adapter id
// nvidia.fabric.opencode): a managed runtime owns one `opencode serve`
// (loopback only, HTTP Basic auth with a password generated at every
// start), configured from FabricConfig at every start, and one OpenCode
// session on it, so turns share history. A turn is POST
// /session/{id}/prompt_async followed on the server's /event SSE stream
// until the session is idle again; cancelling a turn sends POST
// /session/{id}/abort. Every request but the event stream has a timeout
// (request_timeout_seconds); the stream is bounded by the invocation.
//
// Each runtime gets private HOME, TMPDIR, XDG directories and
// configuration file under its FABRIC_HOME, all removed at stop. The
// generated configuration names only FabricConfig's model endpoint
// (enabled_providers is that one provider); the key from api_key_env
// reaches the server's environment only, under a private variable the
// configuration references as {env:NAME} (C1). The model catalog fetch,
// autoupdate, sharing, default and external plugins, LSP downloads,
// Claude Code and external skills and project configuration are off (C3).
//
// Interfaces, through adapterkit/harnessui: "web" (OpenCode's embedded web UI,
// served by the runtime's server on the consumer's exact port) and
// "terminal" (a launcher that runs `opencode attach` against the runtime's
// server, with the password read from its token file). Both interfaces
// share the server's one per-start password.
//
// Variables: FABRIC_OPENCODE_BIN names the opencode binary to run instead
// of `opencode` on PATH. The server gets its password in
// OPENCODE_SERVER_PASSWORD (the Basic auth user is "opencode") and the
// model key in FABRIC_OPENCODE_MODEL_KEY, both only in its own
// environment. Turns emit output_delta, reasoning_delta, tool_call,
// tool_result and usage events.
//
// What the package must never do: write a model key or the server's
// password to a file other than the interface token files, to argv, a
// log or an event; bind anything but loopback; leave a process that
// carries the runtime's private directories, or the directories, behind
// after Stop.
package opencode
