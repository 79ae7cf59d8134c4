// Package openclaw is the Fabric adapter for OpenClaw (adapter id
// nvidia.fabric.openclaw, compatible with upstream NeMo Fabric's): a
// managed runtime owns one OpenClaw Gateway (`openclaw gateway run`, on the
// Node >= 24.16 from harnesses/), configured from FabricConfig at every
// start, and every invoke is one turn through the Gateway's
// OpenAI-compatible HTTP API (POST /v1/chat/completions, streamed) on one
// agent session per runtime, so turns share history. Cancelling an invoke
// closes its request, which ends the agent run.
//
// Each runtime gets private HOME, TMPDIR, OpenClaw state directory,
// configuration file and log file under its FABRIC_HOME, all removed at
// stop. The generated configuration names only FabricConfig's model
// endpoint (models.mode "replace"); the key from api_key_env reaches the
// Gateway's environment only, under a private variable the configuration
// references (C1). Update checks, the hosted model catalog, telemetry,
// plugins, cron, Bonjour and channels are off (C3).
//
// The dashboard interface (OpenClaw's Control UI, served by the Gateway
// itself) is started through adapterkit/harnessui: the Gateway then listens on
// the consumer's exact port, its token is generated at every start and
// written 0600 to <artifact root>/.fabric/openclaw/runtimes/<runtime-id>/
// interfaces/dashboard.token only after health, and public_origins become
// the Gateway's allowed browser origins.
//
// The Gateway is started with a parent-death signal, and a watchdog (a
// /bin/sh loop in a process group of its own, reading a pipe from the host)
// kills every process that carries the runtime's OPENCLAW_STATE_DIR once
// the host is gone, so a killed host leaves none of OpenClaw's helpers
// behind either.
//
// Variables: FABRIC_OPENCLAW_BIN names OpenClaw's entry point (the npm
// launcher node_modules/.bin/openclaw or the package's openclaw.mjs)
// instead of `openclaw` on PATH, and FABRIC_OPENCLAW_NODE the Node.js that
// runs it instead of the first supported `node` on PATH. The Gateway gets
// its token in OPENCLAW_GATEWAY_TOKEN and the model key in
// FABRIC_OPENCLAW_MODEL_KEY, both only in its own environment.
//
// What the package must never do: write a model key to a file, argv, log
// or event; report or log a Gateway token; let OpenClaw reach a host other
// than the configured model endpoint on its own; leave a process of the
// Gateway (its group, or a process it detached that carries the runtime's
// private state directory) or a private directory behind after Stop.
package openclaw
