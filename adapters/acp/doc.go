// Package acp is the generic Agent Client Protocol adapter: any ACP agent
// command becomes a Fabric runtime (initialize, one session/new per
// runtime, session/prompt per invoke, session/cancel on cancel,
// session/update mapped to Fabric events). bundledProfile profiles translate
// FabricConfig into each agent's own env and config files (Gemini CLI, Qwen
// Code, codex-acp, claude-agent-acp, Factory Droid, Kilo Code, and
// OpenClaw's ACP bridge to a running Gateway); any other ACP agent needs
// only a descriptor whose runner sets
// FABRIC_ACP_PROFILE to a JSON profile.
//
// It answers fs/read_text_file and fs/write_text_file inside the workspace
// only and session/request_permission by policy (allow, deny, ask with a
// timeout that denies). It must never allow a permission by default, nor
// touch files outside the workspace on the agent's behalf, nor put a secret
// ({api_key}, a profile's {secret.NAME}) anywhere but the agent's
// environment: never argv, files, logs or events.
package acp
