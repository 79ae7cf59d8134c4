// Package codex is the Fabric adapter for OpenAI Codex CLI (adapter id
// nvidia.fabric.codex, compatible with upstream NeMo Fabric's): it drives
// one long-lived `codex app-server --listen stdio://` per runtime over its
// JSON-RPC stdio protocol (initialize, thread/start once, turn/start per
// invoke, turn/interrupt on cancel, stdin EOF on stop) and maps Codex's
// item notifications to Fabric events.
//
// Each runtime gets private HOME, CODEX_HOME and TMPDIR directories under
// its FABRIC_HOME, all removed at stop. The model provider is defined with
// -c overrides (model_providers.fabric, Responses wire API) from the
// selected model role; Codex reads the key from the variable api_key_env
// names.
//
// The codex executable is $FABRIC_CODEX_BIN when set, else `codex` on
// PATH.
//
// What the package must never do: write a model key anywhere (argv, files,
// logs, events), let Codex reach a host other than the configured provider
// on its own (plugin sync, analytics, update checks, telemetry are off),
// leave a process of the harness's group or a private directory behind
// after Stop, or let a turn wait on a human (server requests are always
// answered).
package codex
